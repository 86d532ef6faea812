"""`shardc.jit`: `jax.jit` with shardc's propagation in the middle.

    f = shardc.jit(fun, mesh=mesh, in_shardings=("x, _", "_, y?p1"), out_shardings="x, ?")
    lowered = f.lower(x, w)          # arrays or jax.ShapeDtypeStructs
    print(lowered.as_text())         # StableHLO + sdy, every value sharded
    print(lowered.listing())         # every value, its sharding, its source line
    y = lowered.compile()(x, w)      # runs on the mesh's devices through XLA
    y = f(x, w)                      # the same, compiled once per input signature

Tracing is JAX's own (`jax.jit(...).trace(...).lower(...)` with Shardy, in the context jax.jit
would trace in: frontend/jit_trace.py), then shardc imports the module, verifies it, propagates,
and exports. The mesh keeps its axis types: on an `Explicit` axis (`jax.make_mesh`'s default) a
value's sharding is its type and JAX writes it into the module, so shardc propagates over the
`Auto` axes only (frontend/meshes.py). The mesh may be bigger than the machine: lowering then
uses an `AbstractMesh`; only `.compile()`/calling needs the devices. Calls go through JAX's C++
dispatch (frontend/dispatch.py).
"""

from __future__ import annotations

import functools
import operator
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, overload

from shardc.api.auto_fit import fit_to_budget, xla_memory
from shardc.api.exported import Exported, export_copy, export_in_place
from shardc.api.grid import render_grid
from shardc.api.jax_compile import (
    JaxLowering,
    _array_shardings,
    compile_lowered,
    lower_for_call,
    lower_traced,
    lowering_for_xla,
    module_for_compile,
    xla_builder,
)
from shardc.api.plan import diff_lowered, plan_lowered
from shardc.backend import mlir_bridge
from shardc.backend.importer import import_generic
from shardc.backend.xla import build_executable, mesh_devices
from shardc.backend.xla_form import ShardyOracle
from shardc.dialect.errors import (
    ArgumentError,
    ArgumentTypeError,
    ShardcError,
    needs_devices,
    no_main,
    not_one_of,
    unknown_name,
    unsupported,
)
from shardc.dialect.ir import Module, Value, func_body
from shardc.dialect.op_views import ManualComputation, ShardingConstraint
from shardc.dialect.shardings import DimSharding, Mesh, TensorSharding
from shardc.dialect.value_names import func_value_names
from shardc.frontend import specs
from shardc.frontend.calling import (
    call_key,
    fed_back_entry,
    normalize_call,
    resolve_argspec,
    split_call,
)
from shardc.frontend.dispatch import CallEntry, make_dispatcher
from shardc.frontend.jit_trace import resolve_mesh, trace_call
from shardc.frontend.meshes import context_mesh, native_sharding
from shardc.frontend.tracing import flat_shardings, trace_function
from shardc.frontend.transforms import is_traced, traced_call
from shardc.passes.pin import Written, record_written
from shardc.passes.pipeline import Caller, PipelineOptions, run_pipeline
from shardc.passes.propagation.options import PropagationOptions
from shardc.passes.propagation.report import PropagationReport
from shardc.runtime import suspended_gc


def _options(options: Any, strategy: str | None = None) -> Any:
    if options is None and strategy is None:
        return None
    if options is None:
        options = PropagationOptions()
    elif isinstance(options, dict):
        options = PropagationOptions(**options)
    if strategy is not None:
        import dataclasses

        options = dataclasses.replace(options, strategy=strategy)
    return options


# ---------------------------------------------------------------------------------------------
# Values of the lowered module, named as the MLIR printer names them


@dataclass(frozen=True)
class ValueInfo:
    """One value of `@main`: its printed name, type, sharding, producer and source line."""

    name: str
    type: str
    sharding: TensorSharding | None
    op: str
    location: str | None
    value: Value = field(repr=False, compare=False)


def _main(module: Module) -> Any:
    funcs = module.funcs
    if "main" not in funcs:
        raise no_main()
    return funcs["main"]


def _listed(v: ValueInfo) -> str:
    if v.sharding is not None:
        return v.sharding.body()
    # the export writes no sharding here: XLA derives it (a while loop's results, a region's
    # arguments), or the value is not a tensor
    return "-"


def iter_values(module: Module) -> Iterator[ValueInfo]:
    """Every value of every function of an exported module, `@main` first: arguments, then op
    results (and region arguments) in program order, named as the printed module names them,
    with the sharding the export wrote for it (a constraint's result: the constraint's, a
    manual computation's result: its out_sharding); values of other functions are prefixed with
    the function, `@relu %0`."""
    funcs = module.funcs
    _main(module)
    for fname in ["main", *(f for f in funcs if f != "main")]:
        func = funcs[fname]
        body = func_body(func)
        if body is None:
            continue
        names = func_value_names(func)
        prefix = "" if fname == "main" else f"@{fname} "
        for arg in body.args:
            where = module.resolve_loc(arg.loc) or ""
            yield ValueInfo(prefix + names[id(arg)], str(arg.type), arg.sharding, "argument", where, arg)
        for op in func.walk():
            if op is func:
                continue
            for region in op.regions:
                for blk in region.blocks:
                    for arg in blk.args:
                        yield ValueInfo(prefix + names[id(arg)], str(arg.type), arg.sharding,
                                        f"{op.name} region", None, arg)
            loc = module.resolve_loc(op.loc)
            outs = ManualComputation(op).out_shardings if op.name == "sdy.manual_computation" else ()
            for r in op.results:
                sharding = r.sharding
                if op.name == "sdy.sharding_constraint" and sharding is None:
                    sharding = ShardingConstraint(op).sharding
                elif sharding is None and r.index < len(outs):
                    sharding = outs[r.index]
                yield ValueInfo(prefix + names[id(r)], str(r.type), sharding, op.name, loc, r)


def _closed(sharding: TensorSharding) -> TensorSharding:
    """`sharding` with every dim closed and no priority: the layout an exported sharding
    stands for (its open dims hold what propagation put there)."""
    dims = tuple(DimSharding(d.axes, True) for d in sharding.dims)
    return TensorSharding(sharding.mesh, dims, sharding.replicated, sharding.unreduced)


def _shape(type_text: str) -> tuple[int, ...]:
    inner = type_text[type_text.find("<") + 1 : type_text.rfind(">")]
    parts = inner.split("x")[:-1]
    return tuple(int(p) if p.isdigit() else 0 for p in parts)


# ---------------------------------------------------------------------------------------------
# Lowered and compiled functions


class Compiled:
    """A function compiled for the mesh's devices; call it with arrays (numpy or jax)."""

    def __init__(self, lowered: Lowered, executable: Any):
        self.lowered = lowered
        self.executable = executable

    def __call__(self, *args: Any) -> Any:
        import jax
        import numpy as np

        low = self.lowered
        dyn = tuple(a for i, a in enumerate(args) if i not in low.static_argnums)
        leaves, tree = jax.tree.flatten(dyn)
        if tree != low.in_tree:
            raise ArgumentTypeError(
                f"called with {len(dyn)} arguments ({len(leaves)} arrays, structure "
                f"{tree}), but the function was compiled for {len(low.in_avals)} arrays "
                f"of structure {low.in_tree}",
                hint="pass the same arguments (and pytree structure) as to .lower(), or call "
                "the shardc.jit function itself, which compiles per signature",
            )
        for i, (leaf, aval) in enumerate(zip(leaves, low.in_avals, strict=True)):
            shape, dtype = tuple(np.shape(leaf)), np.dtype(getattr(leaf, "dtype", np.asarray(leaf).dtype))
            if shape != tuple(aval.shape) or dtype != np.dtype(aval.dtype):
                raise ArgumentTypeError(
                    f"argument {i} has shape {shape} and dtype {dtype}, but the function was "
                    f"compiled for {tuple(aval.shape)} {np.dtype(aval.dtype)}",
                    hint="call the shardc.jit function itself, which compiles per signature",
                )
        outs = self.executable.run(list(leaves))
        return jax.tree.unflatten(low.out_tree, outs)

    @property
    def input_shardings(self) -> list[Any]:
        return list(self.executable.in_shardings)

    @property
    def output_shardings(self) -> list[Any]:
        return list(self.executable.out_shardings)

    def as_text(self) -> str:
        """The optimised per-device HLO XLA produced (with its collectives)."""
        return self.executable.hlo_text()

    def __repr__(self) -> str:
        name = getattr(self.lowered.jitted.fun, "__name__", "fun")
        return f"<shardc Compiled {name} on mesh {self.lowered.mesh.body()}>"


class JaxCompiled(Compiled):
    """A `shardc.jit` function compiled by JAX from shardc's module: call it as the lowered
    function was called (static arguments left out), and read what XLA made of it."""

    def __init__(self, lowered: Lowered, compiled: Any):
        super().__init__(lowered, compiled)
        self.jax_compiled = compiled

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        arity = getattr(self.lowered, "call_arity", None)
        spec = self.lowered.jitted.argspec
        if spec.static_argnums and arity is not None and len(args) == arity:
            args, kwargs, _ = split_call(spec, args, kwargs)  # given as to .lower(): drop statics
        try:
            return self.jax_compiled(*args, **kwargs)
        except TypeError as e:
            text = str(e)
            if "pytree" not in text and "compiled" not in text:
                raise
            raise ArgumentTypeError(
                f"called with arguments other than those the function was compiled for: "
                f"{' '.join(text.split())[:400]}",
                hint="call with the arguments given to .lower() (static ones left out), or call "
                "the shardc.jit function itself, which compiles per signature",
            ) from None

    def call_full(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call with the full argument list (static ones included, as given to `.lower()`)."""
        dyn, dyn_kw, _ = split_call(self.lowered.jitted.argspec, args, kwargs)
        return self.jax_compiled(*dyn, **dyn_kw)

    @property
    def input_shardings(self) -> Any:  # type: ignore[override]
        """JAX's shardings of the inputs (the pytree of the lowered call's dynamic arguments)."""
        return self.jax_compiled.input_shardings

    @property
    def output_shardings(self) -> Any:  # type: ignore[override]
        """JAX's shardings of the outputs, in the output pytree."""
        return self.jax_compiled.output_shardings

    def as_text(self) -> str:
        """The optimised, partitioned HLO XLA produced (per-device shapes, collectives)."""
        return str(self.jax_compiled.as_text())

    def cost_analysis(self) -> Any:
        """XLA's cost estimate (flops, bytes accessed, ...), as `jax.stages.Compiled` gives it."""
        return self.jax_compiled.cost_analysis()

    def memory_analysis(self) -> Any:
        """XLA's per-device memory figures (argument, output, temp, alias sizes in bytes)."""
        return self.jax_compiled.memory_analysis()

    def runtime_executable(self) -> Any:
        return self.jax_compiled.runtime_executable()

    @property
    def input_formats(self) -> Any:
        """JAX's formats (layout and sharding) of the inputs, in the input pytree."""
        return self.jax_compiled.input_formats

    @property
    def output_formats(self) -> Any:
        """JAX's formats (layout and sharding) of the outputs, in the output pytree."""
        return self.jax_compiled.output_formats


class Lowered:
    """A traced and propagated function: its module, its shardings, and how to compile it."""

    def __init__(self, jitted: Jitted, traced: Any, module: Module):
        self.jitted = jitted
        # the propagated IR; None once an export for compiling took it over (rebuilt on demand)
        self._ir: Module | None = module
        self._ir_shared = False  # `ir` was handed out: never export it in place
        self._compile_export: tuple[str, bool] | None = None  # the export made in place
        self.mesh: Mesh = jitted.mesh
        self.in_tree = traced.in_tree
        self.out_tree = traced.out_tree
        self.in_avals = traced.in_avals
        self.out_avals = traced.out_avals
        self.static_argnums = jitted.static_argnums
        self.trace_seconds = traced.seconds
        self._exports: dict[tuple[str, bool], Exported] = {}
        self.removed_collectives: list[str] = []  # what the compile path's rewrite removed
        # (a builder of the unpropagated IR, options)
        self.plan_source: tuple[Callable[[], Module], Any] | None = None
        self.report: Any = None  # the propagation report (with `auto`, the auto pass's in .auto)
        # JAX's module as imported (xla_module.Origin: `.compile()` writes the export onto a
        # copy of it), and how the last compile built XLA's module ("bindings" or "text")
        self.origin: Any = None
        self.xla_route: str | None = None
        # the annotations as JAX (and shardc's frontend) wrote them: where `.compile()` starts
        self.written: Written | None = None
        # with auto and a budget: the XLA compile of the layout, made by shardc.jit's check of
        # its memory (`jax_compile.CompileCheck`), which `.compile()` returns
        self.checked: Any = None

    @property
    def _compiled_default(self) -> Any:
        """A weak reference to this lowering's compile with default options (what `.compile()`
        returns again while it lives)."""
        return self.__dict__.get("_compiled_default_ref")

    @_compiled_default.setter
    def _compiled_default(self, ref: Any) -> None:
        # the compile with default options is also what a call of the jitted function with
        # this signature runs, as jax.jit reuses `.lower(...).compile()`
        self.__dict__["_compiled_default_ref"] = ref
        compiled = ref() if ref is not None else None
        key = getattr(self, "call_key", None)
        jax_compiled = getattr(compiled, "jax_compiled", None)
        if key is not None and jax_compiled is not None:
            self.jitted.offer_compiled(key, jax_compiled, getattr(self, "jaxpr_effects", ()))

    @property
    def ir(self) -> Module:
        """The propagated shardc IR (before any export)."""
        self._ir_shared = True
        return self._propagated()

    def _propagated(self) -> Module:
        """The propagated IR, propagated again from the traced module if `.compile()` exported
        it in place (as `.plan()` does: the same module and options give the same IR)."""
        if self._ir is None:
            if self.plan_source is None:
                raise ShardcError(
                    "this lowering's IR was released (a call of the jitted function compiles "
                    "and keeps only the compiled function)",
                    hint="lower with f.lower(...) for its IR, texts and listings",
                )
            build, options = self.plan_source
            self._ir, _ = self.jitted.run_pipeline(build(), options)
        return self._ir

    def release_ir(self) -> None:
        """Free this lowering's IR and exports now (their reference cycles broken, so nothing
        waits for the cyclic GC): what a call of the jitted function does once it compiled, as
        only the compiled function stays in its cache. IR handed out through `ir` is kept."""
        modules = [e.module for e in self._exports.values()]
        if self._ir is not None and not self._ir_shared:
            modules.append(self._ir)
        self._exports.clear()
        self.checked = None
        self._ir = None
        self.plan_source = None
        self.report = None
        self.origin = None
        self.__dict__.pop("module", None)
        for module in modules:
            module.release()

    def compiled_export_done(self) -> None:
        """Once XLA compiled it: free the export `.compile()` made on the propagated IR itself
        (nothing else holds it), so that a kept lowering holds no IR (a few hundred thousand
        objects every GC collection would traverse); a later export propagates again."""
        key = self._compile_export
        if key is None:
            return
        self._compile_export = None
        exp = self._exports.pop(key, None)
        self.origin = None
        if exp is not None:
            exp.module.release()

    def _in_place_ok(self) -> bool:
        """Whether an export may take over the propagated IR instead of copying it: it was
        never handed out, and it can be propagated again from the traced module (not with
        `auto`, whose choice may depend on XLA's memory figures)."""
        return (
            not self._ir_shared
            and self.plan_source is not None
            and getattr(self.report, "auto", None) is None
        )

    def exported(
        self,
        mode: str = "annotate",
        remove_redundant: bool = False,
        for_compile: bool = False,
        speculate: Callable[[Module, Any], None] | None = None,
    ) -> Exported:
        """The export of the propagated IR in `mode` (made once): what every text, sharding
        and listing of this object reads. `for_compile`: the export `.compile()` hands to XLA,
        made on the propagated IR itself rather than a copy where nothing else holds it (a
        later export in another mode propagates the traced module again). `speculate`: given
        to the `pin` export's oracle (`ShardyOracle`)."""
        if mode not in ("annotate", "pin"):
            raise not_one_of("mode", mode, ("annotate", "pin"))
        key = (mode, remove_redundant)
        if key not in self._exports:
            oracle = self.xla_oracle(speculate) if mode == "pin" else None
            if for_compile and self._in_place_ok():
                module = self._propagated()  # (propagated again if an earlier compile took it)
                self._ir = None
                exp = export_in_place(module, mode, remove_redundant, oracle=oracle,  # type: ignore[arg-type]
                                      written=self.written)
                self._compile_export = key
            else:
                exp = export_copy(self._propagated(), mode, remove_redundant, oracle=oracle,  # type: ignore[arg-type]
                                  written=self.written)
            self._exports[key] = exp
            if remove_redundant:
                self.removed_collectives = exp.removed_collectives
        return self._exports[key]

    # JAX's stage API ----------------------------------------------------------------------
    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The module `.compile()` hands to XLA (a jaxlib `ir.Module`, the `pin` export as it
        builds it); `dialect="hlo"`: that module converted to an XLA computation, as
        `jax.stages.Lowered.compiler_ir` gives them."""
        if dialect not in (None, "stablehlo", "hlo"):
            raise not_one_of("dialect", dialect, ("stablehlo", "hlo"), cls=ArgumentError)
        if getattr(self, "jax_lowered", None) is None:
            if dialect == "hlo":
                raise needs_devices(
                    "compiler_ir('hlo')",
                    hint="lower with a mesh this machine has, or read compiler_ir() (stablehlo)",
                )
            pinned = self.exported("pin", self.jitted.remove_redundant_collectives)
            return mlir_bridge.parse_module(pinned.text("pretty"), "<shardc.jit>")
        if dialect == "hlo":
            return lowering_for_xla(self).hlo()
        return module_for_compile(self)

    def cost_analysis(self) -> Any:
        """XLA's cost estimate of the module `.compile()` hands it, before XLA's optimizations
        (flops, bytes accessed, ...), as `jax.stages.Lowered.cost_analysis` gives it."""
        if getattr(self, "jax_lowered", None) is None:
            raise needs_devices(
                "cost_analysis()",
                hint="lower with a mesh this machine has, or compile and read "
                "compiled.cost_analysis()",
            )
        return lowering_for_xla(self).cost_analysis()

    @property
    def out_info(self) -> Any:
        """The outputs as `jax.ShapeDtypeStruct`s with the shardings the compiled function
        returns them in (shardc's out shardings as `NamedSharding`s where one says it exactly,
        else None), in the output pytree."""
        import jax

        jmesh = getattr(self, "jax_mesh_concrete", None)
        outs = []
        _, shardings = _array_shardings(self.exported())
        for aval, s in zip(self.out_avals, shardings, strict=True):
            named = native_sharding(_closed(s), jmesh) if jmesh is not None and s else None
            outs.append(jax.ShapeDtypeStruct(aval.shape, aval.dtype, sharding=named,
                                             weak_type=getattr(aval, "weak_type", False)))
        return jax.tree.unflatten(self.out_tree, outs)

    @property
    def args_info(self) -> Any:
        """The arguments as JAX describes them (shape, dtype, donation), in the pytree of the
        call's (positional, keyword) arguments."""
        jax_lowered = getattr(self, "jax_lowered", None)
        if jax_lowered is not None:
            return jax_lowered.args_info
        import jax

        return jax.tree.unflatten(self.in_tree, list(self.in_avals))

    def __repr__(self) -> str:
        name = getattr(self.jitted.fun, "__name__", "fun")
        return (f"<shardc Lowered {name}: {len(self.in_avals)} inputs, {len(self.out_avals)} "
                f"outputs on mesh {self.mesh.body()}>")

    def xla_oracle(self, speculate: Callable[[Module, Any], None] | None = None) -> ShardyOracle:
        """What the `pin` export asks what XLA derives: jaxlib's Shardy on the module XLA is
        handed, built on a copy of JAX's own module where the export allows
        (`xla_module.build_xla_module`), else parsed from its text; `xla_route` says which.
        `speculate(export, module)`: told of the first module built, before Shardy runs."""

        def route(how: str) -> None:
            self.xla_route = how

        return ShardyOracle(xla_builder(self.origin, route), speculate)

    def auto_explanation(self) -> list[str]:
        """With `auto=True`: per decided dim, what auto chose, the alternatives it weighed and
        their bytes and memory (the lines `shardc propagate --auto --explain` prints)."""
        auto = getattr(self.report, "auto", None)
        return auto.lines() if auto is not None else []

    # shardings --------------------------------------------------------------------------
    @property
    def in_shardings(self) -> tuple[TensorSharding | None, ...]:
        """The sharding of every flat input of `@main` as `as_text()` writes it: the layout XLA
        receives the arguments in."""
        return self.exported().in_shardings

    @property
    def out_shardings(self) -> tuple[TensorSharding | None, ...]:
        """The sharding of every flat output of `@main` as `as_text()` writes it: the layout of
        the arrays `.compile()(...)` returns."""
        return self.exported().out_shardings

    # text -------------------------------------------------------------------------------
    def as_text(
        self, format: str = "pretty", mode: str = "annotate", remove_redundant: bool = False
    ) -> str:
        """MLIR text: `pretty` (as JAX prints) or `generic`; export mode `annotate` or `pin`;
        `remove_redundant` rewrites collectives that act on device-invariant values (what
        `.compile()` does unless `shardc.jit(..., remove_redundant_collectives=False)`)."""
        if format == "text":
            format = "pretty"
        if format not in ("pretty", "generic"):
            raise not_one_of("format", format, ("pretty", "generic"))
        return self.exported(mode, remove_redundant).text(format)  # type: ignore[arg-type]

    @functools.cached_property
    def module(self) -> Any:
        """The propagated module as a jaxlib `ir.Module`."""
        return mlir_bridge.parse_module(self.as_text("generic"), "<shardc.jit>")

    # inspection -------------------------------------------------------------------------
    def values(self) -> list[ValueInfo]:
        """Every value of the exported module (`as_text()`), with the sharding written for it."""
        return list(iter_values(self.exported().module))

    def listing(self) -> str:
        """A header, then one line per value: name (as `.as_text()` prints it), type, sharding
        as `.as_text()` writes it (`-`: none written, XLA derives it), op, source line."""
        rows = [("value", "type", "sharding", "op", "source")]
        rows += [(v.name, v.type, _listed(v), v.op, v.location or "") for v in self.values()]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = []
        for r in rows:
            lines.append("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4])
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def plan(self, check: bool = False) -> Any:
        """The communication plan of this layout before XLA compiles (see `shardc.plan`):
        every collective with kind, axes, bytes, cause and fix, and the per-device memory;
        `check` also compiles the layout with XLA and matches the collectives (`Plan.check`)."""
        return plan_lowered(self, check=check)

    def diff(self, other: Lowered) -> Any:
        """What changes from this layout to `other`'s (see `shardc.diff`)."""
        return diff_lowered(self, other)

    def value(self, name: str) -> ValueInfo:
        for v in self.values():
            if v.name == name or v.name.split("#")[0] == name and "#" not in name:
                return v
        known = ", ".join(v.name for v in self.values()[:8])
        raise unknown_name(
            "value", name, (), where="@main", hint=f"use a name from .listing(), e.g. {known}"
        )

    def show(self, name: str, print_it: bool = True) -> str:
        """A grid of which devices hold which block of value `name` (from `.listing()`)."""

        v = self.value(name)
        shape = _shape(v.type)
        replicated = TensorSharding(specs.MESH_SYMBOL, (DimSharding(()),) * len(shape))
        text = render_grid(v.sharding or replicated, shape, self.mesh, title=f"{v.name}: {v.type}")
        if print_it:
            print(text, end="")
        return text

    # compile ----------------------------------------------------------------------------
    def compile(self, compiler_options: dict[str, Any] | None = None) -> Compiled:
        """Compile the `pin` export for the mesh's devices through XLA, redundant collectives
        of shard_map regions removed (see `removed_collectives`) unless the jit said not to.
        `compiler_options`: XLA options by name, as `jax.stages.Lowered.compile` takes them."""

        if getattr(self, "jax_lowered", None) is not None:
            ref = getattr(self, "_compiled_default", None)
            cached = ref() if ref is not None else None
            if cached is not None and not compiler_options:
                return cached  # type: ignore[no-any-return]
            out = JaxCompiled(self, compile_lowered(self, compiler_options))
            if not compiler_options:
                # a weak reference: the compiled function holds its lowering, and a cycle between
                # the two would keep both (and JAX's jaxpr under them) until a full GC collection
                self._compiled_default = weakref.ref(out)
            self.compiled_export_done()
            return out
        if compiler_options:
            raise needs_devices(
                "compiler_options",
                hint="lower with arrays on a mesh this machine has (the mesh's devices)",
            )
        pinned = self.exported("pin", self.jitted.remove_redundant_collectives, for_compile=True)
        exe = build_executable(
            pinned.text("pretty"),
            self.mesh,
            self.jitted.jax_mesh,
            self.in_avals,
            self.out_avals,
            list(pinned.in_shardings),
            list(pinned.out_shardings),
        )
        self.compiled_export_done()
        return Compiled(self, exe)


def lowered_from(jitted: Jitted, jl: JaxLowering) -> Lowered:
    """The `Lowered` of a call JAX lowered on the mesh's devices (jax_compile.lower_traced)."""
    lowered = Lowered(jitted, jl.traced, jl.module)
    lowered.jax_lowered = jl.jax_lowered  # type: ignore[attr-defined]
    lowered.jax_mesh_concrete = jl.jax_mesh_concrete  # type: ignore[attr-defined]
    lowered.argument_paths = jl.argument_paths  # type: ignore[attr-defined]
    lowered.mesh_symbol = jl.mesh_symbol  # type: ignore[attr-defined]
    lowered.call_arity = jl.call_arity  # type: ignore[attr-defined]
    lowered.call_key = jl.call_key  # type: ignore[attr-defined]
    lowered.explicit_axes = jl.explicit_axes  # type: ignore[attr-defined]
    lowered.jaxpr_effects = jl.jaxpr_effects  # type: ignore[attr-defined]
    lowered.plan_source = jl.plan_source
    lowered.report = jl.report
    lowered.origin = jl.origin
    lowered.written = jl.written
    if jl.checked is not None:
        # the export the check compiled is the `pin` export `.compile()` makes
        lowered._exports[("pin", jitted.remove_redundant_collectives)] = jl.checked.exported
        lowered.xla_route = jl.checked.route
        lowered.checked = jl.checked
    return lowered


class Jitted:
    """The result of `shardc.jit(fun, ...)`: `.lower(*args)`, `.trace(*args)`, or call it like
    `jax.jit`."""

    def __init__(
        self,
        fun: Callable[..., Any],
        mesh: Any,
        in_shardings: Any = None,
        out_shardings: Any = None,
        static_argnums: int | tuple[int, ...] = (),
        options: Any = None,
        check_replication: bool = True,
        remove_redundant_collectives: bool = True,
        static_argnames: str | tuple[str, ...] = (),
        donate_argnums: int | tuple[int, ...] = (),
        donate_argnames: str | tuple[str, ...] = (),
    ):

        if not callable(fun):
            raise ArgumentTypeError(
                f"shardc.jit({_short(fun)}): {type(fun).__name__!r} object is not callable",
                hint="pass the function to jit: shardc.jit(f, mesh=...) or @shardc.jit(mesh=...)",
            )
        self.fun = fun
        # mesh=None: the mesh `jax.set_mesh` sets around each call (`mesh`, `jax_mesh`)
        self._mesh_arg = mesh
        self._given_mesh = None if mesh is None else specs.to_mesh(mesh)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.argspec = resolve_argspec(
            fun, static_argnums, static_argnames, donate_argnums, donate_argnames
        )
        self.static_argnums = self.argspec.static_argnums
        self.options = options
        self.check_replication = check_replication
        self.remove_redundant_collectives = remove_redundant_collectives
        self.caller = Caller(function="shardc.jit")  # `shardc compile` sets the CLI
        self.entry_args: tuple[Any, ...] | None = None
        # per call signature, what a call runs (filled by calls and by `.lower().compile()`)
        self._cache: dict[Any, Any] = {}
        functools.update_wrapper(self, fun)
        # what a call runs (see `__call__`): JAX's C++ dispatch over this function's miss
        # handler, or the handler alone where this JAX has no such object; the handler holds
        # the function weakly, so no cycle keeps it alive
        miss = _miss_handler(self)
        made = make_dispatcher(fun, getattr(fun, "__name__", "fun"), miss,
                               self.argspec.static_argnums, self.argspec.static_argnames)
        self._dispatch_cache: Any = None
        self._dispatch: Callable[..., Any] = lambda *a, **k: miss(*a, **k)[0]
        if made is not None:
            cpp, self._dispatch_cache = made
            self._dispatch = cpp
            if self.argspec.static_argnums or self.argspec.static_argnames:
                self._dispatch = _static_values_checked(cpp, miss)

    @property
    def mesh(self) -> Mesh:
        """The mesh the function runs on: the one given, else the one `jax.set_mesh` set."""
        if self._given_mesh is not None:
            return self._given_mesh

        return resolve_mesh(None, self.fun)[0]

    @property
    def jax_mesh(self) -> Any:
        """The JAX mesh object the mesh came from (`jax.sharding.Mesh`, `AbstractMesh`), or
        None for a mesh given as text or as a shardc `Mesh`."""

        return resolve_mesh(self._mesh_arg, self.fun)[1]

    def _key_mesh(self) -> Any:
        """The part of a call's cache key that the context decides: the context's mesh when
        no mesh was given."""
        if self._mesh_arg is not None:
            return None

        return context_mesh()

    def __repr__(self) -> str:
        name = getattr(self.fun, "__name__", "fun")
        mesh = self._given_mesh.body() if self._given_mesh is not None else "from jax.set_mesh"
        return f"<shardc.jit {name}, mesh {mesh}, {len(self._cache)} compiled>"

    def with_mesh(self, mesh: Any) -> Jitted:
        """The same function for another mesh (same axis names, other sizes)."""
        spec = self.argspec
        new = Jitted(self.fun, mesh, self.in_shardings, self.out_shardings,
                     spec.static_argnums, self.options, self.check_replication,
                     self.remove_redundant_collectives, spec.static_argnames,
                     spec.donate_argnums, spec.donate_argnames)
        new.entry_args = self.entry_args
        return new

    def lower(self, *args: Any, strategy: str | None = None, **kwargs: Any) -> Lowered:
        """Trace with JAX, import, then the pipeline (verify, shard_map checks, propagate);
        `args` may be ShapeDtypeStructs.

        On a mesh this machine has, JAX lowers on its devices and `.compile()` hands shardc's
        module back to JAX's own compile (callbacks, donation, placement are JAX's); a mesh
        bigger than the machine lowers abstractly (inspect only)."""
        if self._fits_machine():
            return self.trace(*args, **kwargs).lower(strategy=strategy)
        return self._lower_abstract(args, kwargs, strategy)

    def trace(self, *args: Any, **kwargs: Any) -> TracedStage:
        """Trace with JAX as a call would (arguments may be ShapeDtypeStructs): the traced
        stage, whose `.lower()` gives the `Lowered` that `.lower(*args)` gives, and whose
        `.jaxpr`, `.out_info` and `.args_info` are JAX's."""

        if not self._fits_machine():
            raise ShardcError(
                f"shardc.jit({getattr(self.fun, '__name__', 'fun')}).trace needs a mesh this "
                f"machine has; mesh {self.mesh.body()} is abstract or bigger",
                hint="use .lower(...) for an abstract lowering, or give a concrete mesh",
            )
        args, kwargs = normalize_call(self.fun, args, kwargs)
        return TracedStage(trace_call(self, args, kwargs))

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes as `jax.ShapeDtypeStruct`s, as `jax.jit(f).eval_shape`
        gives them (traced, not lowered or compiled)."""
        import jax


        args, kwargs = normalize_call(self.fun, args, kwargs)
        if not self._fits_machine():
            return jax.eval_shape(self.fun, *args, **kwargs)
        traced = self.trace(*args, **kwargs)
        out_info = traced.out_info
        if self.out_shardings is None:
            return out_info
        # out_shardings JAX can say name the outputs' shardings, as jax.jit's eval_shape says
        leaves, tree = jax.tree.flatten(out_info)
        given = flat_shardings(self.out_shardings, out_info, leaves, traced._call.mesh,
                               "out_shardings", specs.MESH_SYMBOL)
        jmesh = traced._call.jmesh
        return jax.tree.unflatten(tree, [
            leaf if s is None or native_sharding(s, jmesh) is None
            else leaf.update(sharding=native_sharding(s, jmesh))
            for leaf, s in zip(leaves, given, strict=True)])

    def clear_cache(self) -> None:
        """Forget every compiled call (the next call of each signature compiles again)."""
        self._cache.clear()
        self.__dict__.pop("_inner_jits", None)
        if self._dispatch_cache is not None:
            self._dispatch_cache.clear()

    def _lower_abstract(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                        strategy: str | None) -> Lowered:
        """Lower for a mesh this machine lacks (an `AbstractMesh`, or too few devices): JAX
        traces on the abstract mesh, for inspection only."""
        if kwargs:
            raise unsupported(
                f"keyword arguments ({', '.join(kwargs)})",
                "a lowering on an abstract mesh (an AbstractMesh, or a mesh bigger than this "
                "machine)", cls=ShardcError,
                hint="pass them positionally to .lower() for an abstract lowering, or give "
                "shardc.jit a concrete jax.sharding.Mesh",
            )
        traced = trace_function(
            self.fun, args, self.mesh, self.static_argnums, self.in_shardings, self.out_shardings,
            jax_mesh=self.jax_mesh,
        )
        name = getattr(self.fun, "__name__", "fun")
        generic = mlir_bridge.generic_text(traced.module)
        module = import_generic(generic, f"<shardc.jit {name}>")
        options = _options(self.options, strategy)
        # `.plan()` re-propagates the unpropagated IR (re-imported then) with origins
        source = functools.partial(import_generic, generic, f"<shardc.jit {name}>")
        written = record_written(module)
        module, report = self.run_pipeline(module, options)
        lowered = Lowered(self, traced, module)
        lowered.written = written
        lowered.plan_source = (source, options)
        lowered.report = report
        return lowered

    def _auto_fit_devices(self, options: Any) -> list[Any] | None:
        """The devices to check an auto plan's memory on (None: no budget, or too few)."""
        if options is None or not options.auto or options.memory_budget in ("", None, 0):
            return None

        try:
            return mesh_devices(self.mesh, self.jax_mesh)
        except ShardcError:
            return None

    @suspended_gc()
    def run_pipeline(
        self, module: Module, options: Any = None, check: Callable[[Module], int] | None = None
    ) -> tuple[Module, Any]:
        """The pipeline every lowering runs: verify, shard_map checks, propagate (and auto);
        returns the propagated module and the propagation report. With `auto` and a memory
        budget, on a machine with the mesh's devices, auto's plan is checked against XLA's
        `memory_analysis` and re-planned until it fits (auto_fit.py): the module returned is
        then the best fitting plan's, not `module`. `check`: XLA's memory of a propagated
        module's layout (`jax_compile.CompileCheck`, which keeps the compiles); by default
        its `pin` export's text compiled for the mesh's devices."""
        # check_vma=False does not reach shardc.jit; its own check_replication switch does
        # what XLA deletes before its own propagation (unused constraints too) decides nothing
        # of what runs
        propagation = replace(
            options or PropagationOptions(), xla_dead_code=True, xla_dead_constraints=True
        )
        pipeline = PipelineOptions(
            check_replication=self.check_replication,
            propagation=propagation,
        )
        devices = self._auto_fit_devices(options)
        if devices is None:
            ctx = run_pipeline(module, pipeline, self.caller)
            return module, ctx.require(PropagationReport)

        # the checks once; then each of auto_fit's tries propagates a fresh copy
        run_pipeline(module, replace(pipeline, propagate=False), self.caller)
        if check is None:

            def check(m: Module) -> int:
                return xla_memory(export_copy(m, "pin", False).text("pretty"), devices)

        return fit_to_budget(module.clone, propagation, check)  # type: ignore[no-any-return]

    def _fits_machine(self) -> bool:
        """Whether to lower on the mesh's devices (JAX's own lowering, compile and call): for a
        concrete `Mesh`, or a mesh given by its axes that this machine has the devices for. An
        `AbstractMesh` is lowered abstractly, as the user's shard_maps name it (JAX requires a
        shard_map's mesh to equal the context mesh, and a concrete one carries a device kind)."""
        import jax

        jax_mesh = self.jax_mesh
        if jax_mesh is not None:
            return type(jax_mesh).__name__ == "Mesh"
        return self.mesh.num_devices <= jax.device_count()

    # Calling a Jitted calls `_dispatch` itself: `f(...)` finds this property on the class and
    # calls what it returns, with no Python frame of shardc's in between (a wrapper method
    # would add one to every call: ~6% of a one-leaf jax.jit call, bench/bench_call.py).
    # A call compiles once per abstract signature (shapes, dtypes, weak types, committed
    # layouts, static values, the context's mesh) and runs; a signature seen before runs in
    # JAX's C++ dispatch, as a `jax.jit` call does. Under a JAX transform or an outer jit it
    # acts as an inner `jax.jit` call with the same shardings (`_miss`).
    __call__ = property(operator.attrgetter("_dispatch"))

    def _miss(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
        """A call the C++ dispatch has no record of: (outputs, JAX's fast-path record of the
        call or None, False). Traced calls go to `transforms.traced_call`; others compile once
        per signature (or reuse what `.lower(...).compile()` compiled for it) and run."""

        given = args, kwargs
        args, kwargs = normalize_call(self.fun, args, kwargs)
        dyn, dyn_kw, statics = split_call(self.argspec, args, kwargs)
        if is_traced((dyn, dyn_kw)):
            return traced_call(self, args, kwargs), None, False
        key = call_key(dyn, dyn_kw, statics, self._key_mesh())
        entry = self._cache.get(key)
        if entry is None and self.options is not None and self.options.auto:
            entry = fed_back_entry(key, self._cache)
            if entry is not None:
                self._cache[key] = entry
        if entry is None:
            lowered = self._lower_for_call(args, kwargs)
            lowered.compile()  # (registers what it compiled under the call's key)
            lowered.release_ir()  # nothing reaches it but the cache: free it now, not at a GC
            entry = self._cache.get(key)
            if entry is None:  # pragma: no cover - a lowering whose key differs
                raise ShardcError("the compiled call was not recorded under its signature",
                                  hint="report this: shardc.jit's call cache lost a compile")
        # the fast path flattens the arguments as given: record it only where shardc did not
        # move keywords into positions
        exact = given[0] is args and given[1] is kwargs
        outs, fast = entry.run(dyn, dyn_kw, exact and self._dispatch is not None)
        return outs, fast, False

    def offer_compiled(self, key: Any, compiled: Any, effects: Any) -> None:
        """Record JAX's compiled function of a lowering (compiled with default options) as what
        a call with signature `key` runs, as `jax.jit` reuses `.lower(...).compile()`."""

        self._cache[key] = CallEntry(compiled, effects)

    def _lower_for_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Lowered:
        """Lower a call on the mesh's devices (every keyword is the function's, even one named
        `strategy`); a `ShardcError` naming the missing devices when the machine is too small."""
        return lowered_from(self, lower_for_call(self, args, kwargs, _options(self.options)))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _static_values_checked(cpp: Callable[..., Any], miss: Callable[..., Any]) -> Callable[..., Any]:
    """`cpp` (JAX's dispatch) for a function with static arguments: JAX's dispatch hashes the
    static values before anything else, and a value it cannot hash is said as shardc says it,
    naming the argument (the miss handler raises it)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return cpp(*args, **kwargs)
        except ValueError as e:
            if "Non-hashable static" not in str(e):
                raise
        return miss(*args, **kwargs)[0]

    return call


def _miss_handler(jitted: Jitted) -> Callable[..., Any]:
    """`jitted._miss` through a weak reference (the C++ dispatch object holds its handler)."""
    ref = weakref.ref(jitted)

    def miss(*args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
        target = ref()
        if target is None:  # pragma: no cover - the dispatch object outlived its function
            raise ShardcError("this shardc.jit function was freed")
        return target._miss(*args, **kwargs)

    return miss


class TracedStage:
    """`Jitted.trace(...)`: the function traced by JAX for one call signature.

    `.lower()` gives the `Lowered` that `Jitted.lower(...)` gives for the same arguments;
    `.jaxpr`, `.out_info`, `.args_info` and `.fun_name` are JAX's."""

    def __init__(self, call: Any):
        self._call = call

    @property
    def jaxpr(self) -> Any:
        """JAX's closed jaxpr of the call."""
        return self._call.traced.jaxpr

    @property
    def out_info(self) -> Any:
        """The outputs as `jax.ShapeDtypeStruct`s (JAX's, typed on Explicit axes)."""
        return self._call.traced.out_info

    @property
    def args_info(self) -> Any:
        """The arguments as JAX describes them (shape, dtype, donation)."""
        return self._call.traced.args_info

    @property
    def fun_name(self) -> str:
        return str(self._call.traced.fun_name)

    def lower(self, strategy: str | None = None) -> Lowered:
        """Lower, import and propagate: the `Lowered` of this call."""
        jitted = self._call.jitted
        return lowered_from(jitted, lower_traced(self._call, _options(jitted.options, strategy)))

    def __repr__(self) -> str:
        return f"<shardc traced {self.fun_name} on mesh {self._call.mesh.body()}>"


# `shardc.jit(f, ...)` is a `Jitted`; `shardc.jit(mesh=...)` without `f`, a decorator making one
@overload
def jit(
    fun: Callable[..., Any],
    *,
    mesh: Any = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | tuple[int, ...] = (),
    options: Any = None,
    check_replication: bool = True,
    remove_redundant_collectives: bool = True,
    static_argnames: str | tuple[str, ...] = (),
    donate_argnums: int | tuple[int, ...] = (),
    donate_argnames: str | tuple[str, ...] = (),
    auto: bool = False,
    memory_budget: int | str | None = None,
    axis_cost: str | None = None,
) -> Jitted: ...


@overload
def jit(
    fun: None = None,
    *,
    mesh: Any = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | tuple[int, ...] = (),
    options: Any = None,
    check_replication: bool = True,
    remove_redundant_collectives: bool = True,
    static_argnames: str | tuple[str, ...] = (),
    donate_argnums: int | tuple[int, ...] = (),
    donate_argnames: str | tuple[str, ...] = (),
    auto: bool = False,
    memory_budget: int | str | None = None,
    axis_cost: str | None = None,
) -> Callable[[Callable[..., Any]], Jitted]: ...


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    mesh: Any = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | tuple[int, ...] = (),
    options: Any = None,
    check_replication: bool = True,
    remove_redundant_collectives: bool = True,
    static_argnames: str | tuple[str, ...] = (),
    donate_argnums: int | tuple[int, ...] = (),
    donate_argnames: str | tuple[str, ...] = (),
    auto: bool = False,
    memory_budget: int | str | None = None,
    axis_cost: str | None = None,
) -> Jitted | Callable[[Callable[..., Any]], Jitted]:
    """Like `jax.jit`, with shardc's propagation; usable as `@shardc.jit(mesh=...)` too.

    `mesh`: a `jax.sharding.Mesh` (its axis types kept: shardc propagates over `Auto` axes and
    keeps the shardings JAX types on `Explicit` ones), an `AbstractMesh` (lower only, or run on
    the first devices of the machine), a shardc `Mesh` or `"x=4,y=2"`; left out, the mesh
    `jax.set_mesh` sets around each call (then `PartitionSpec`s are enough, as for `jax.jit`). `in_shardings`/`out_shardings`: one spec for all values, or a pytree prefix of
    specs (compact text like `"x?p1, _"`, `PartitionSpec`, `NamedSharding`, logical specs,
    placements); `None` leaves a value open for propagation. `options`: `PropagationOptions`.
    `check_replication`: check that no shard_map output declared replicated along a manual axis
    varies along it (JAX's `check_vma=False` does not turn this off; this flag does).
    `remove_redundant_collectives`: what `.compile()` and calls run has collectives of shard_map
    regions that act on device-invariant values rewritten (a psum of an invariant value becomes
    a multiply); `as_text()` shows the module as traced either way.
    `static_argnums`/`static_argnames`, `donate_argnums`/`donate_argnames`: as for `jax.jit`
    (donated buffers are aliased to outputs by XLA and deleted after the call). Calls take
    keywords, Python scalars (weak types), typed PRNG keys and any pytree; a committed
    `jax.Array` keeps its layout unless `in_shardings` names another (which raises, as jax.jit
    does); a sharding whose axes do not divide a dim raises. Under `jax.jit`, `grad`, `vmap`,
    `checkpoint` or a `scan` body the function acts as an inner `jax.jit` call with the
    shardings JAX can say as its own in/out shardings (so it runs on the mesh's devices) and
    the others (open dims, priorities) as sharding constraints.
    `auto`, `memory_budget`, `axis_cost`: cost-based choice of what no annotation decided
    (`PropagationOptions.auto` and its fields; `Lowered.auto_explanation()` says why).
    """
    if auto or memory_budget is not None or axis_cost is not None:
        options = _auto_options(options, auto, memory_budget, axis_cost)
    if fun is None:
        return functools.partial(
            jit,
            mesh=mesh,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
            static_argnums=static_argnums,
            options=options,
            check_replication=check_replication,
            remove_redundant_collectives=remove_redundant_collectives,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
        )
    return Jitted(
        fun,
        mesh,
        in_shardings,
        out_shardings,
        static_argnums,
        options,
        check_replication,
        remove_redundant_collectives,
        static_argnames,
        donate_argnums,
        donate_argnames,
    )


def _auto_options(
    options: Any, auto: bool, memory_budget: int | str | None, axis_cost: str | None
) -> Any:
    """`options` with the auto-sharding keywords of `shardc.jit` folded in."""
    import dataclasses

    options = _options(options) or _options({})
    extra: dict[str, Any] = {"auto": auto or options.auto}
    if memory_budget is not None:
        extra["memory_budget"] = memory_budget
    if axis_cost is not None:
        extra["axis_cost"] = axis_cost
    return dataclasses.replace(options, **extra)


def entry(*example_args: Any, name: str | None = None) -> Callable[[Any], Jitted]:
    """Mark a `shardc.jit` function as an entry of `shardc compile`, with example arguments.

        @shardc.entry(jax.ShapeDtypeStruct((8, 16), jnp.float32), ...)
        @shardc.jit(mesh=mesh, in_shardings=...)
        def step(x, w): ...
    """

    def mark(fun: Any) -> Jitted:
        if not isinstance(fun, Jitted):
            raise ShardcError(
                f"@shardc.entry on {getattr(fun, '__name__', fun)!r}, which is not a shardc.jit "
                "function",
                hint="put @shardc.entry(...) above @shardc.jit(mesh=...)",
            )
        fun.entry_args = tuple(example_args)
        fun.entry_name = name or getattr(fun.fun, "__name__", "main")  # type: ignore[attr-defined]
        return fun

    return mark
