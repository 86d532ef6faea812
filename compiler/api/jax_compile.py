"""Lowering and compiling a `shardc.jit` call through JAX's own stage objects.

JAX traces and lowers the function on the mesh's devices (axes `Auto`); shardc writes the
arguments' annotations on that module, imports it, propagates, and its `pin` export replaces the
module inside (a copy of) JAX's lowering object, so that JAX compiles and calls it: host
callbacks, keep-alives, ordered effects' tokens, donation (input/output aliasing), argument
placement and the multi-process runtime are JAX's, nothing home-made.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from shardc.api.auto_fit import analysed_memory
from shardc.api.exported import Exported, export_copy
from shardc.backend import mlir_bridge
from shardc.backend.importer import import_generic
from shardc.backend.xla import to_partition_spec
from shardc.backend.xla_form import ShardyOracle, parse_for_xla
from shardc.backend.xla_module import attach_jax_locations, build_xla_module, record_origin
from shardc.dialect.axis_types import EXPLICIT_AXES
from shardc.dialect.errors import ShardcError, xla_refused
from shardc.dialect.ir import Module
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import split_function_type
from shardc.frontend.calling import (
    check_divisible,
    leaf_paths,
)
from shardc.frontend.jit_trace import CallTrace, trace_call
from shardc.frontend.meshes import native_sharding
from shardc.frontend.tracing import Traced, _main_func, _mesh_symbol, _set_attrs, flat_shardings
from shardc.passes.pin import Written, record_written

# `Lowered` (api/jitted.py) is the stage object these functions build and compile for: that
# module imports this one, so here it is only a duck-typed `Any`
Lowered = Any


@dataclass
class JaxLowering:
    """A call traced and lowered by JAX, imported and propagated by shardc: what `Lowered` is
    built from (`jitted.lowered_from`), JAX's lowering object kept for `compile_lowered`."""

    traced: Traced
    module: Module  # the propagated IR
    jax_lowered: Any
    jax_mesh_concrete: Any
    argument_paths: Any
    mesh_symbol: str
    call_arity: int
    call_key: Any
    explicit_axes: Any
    jaxpr_effects: Any
    plan_source: tuple[Callable[[], Module], Any]
    report: Any
    origin: Any
    written: Written
    # shardc.jit's XLA check of the auto layout kept (`CompileCheck`): `.compile()` returns it
    checked: Checked | None = None


def lower_for_call(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                   options: Any = None) -> JaxLowering:
    """Trace and lower with JAX on the mesh's devices, propagate with shardc, and keep JAX's
    lowering object so that `compile_lowered` compiles shardc's module through it."""
    return lower_traced(trace_call(jitted, args, kwargs), options)


def lower_traced(call: CallTrace, options: Any = None) -> JaxLowering:
    """Lower a traced call with JAX, write its annotations on `@main`, import and propagate
    (`Jitted.trace(...).lower()` and `Jitted.lower(...)` both end here)."""
    import time

    import jax
    from jaxlib.mlir import ir

    jitted, traced, mesh, ins = call.jitted, call.traced, call.mesh, call.ins
    jax_lowered = traced.lower()
    out_info = traced.out_info  # (JAX builds it anew on every read)
    out_avals, out_tree = jax.tree.flatten(out_info)
    out_paths = leaf_paths(out_info, "output")
    # JAX caches its lowerings: shardc works on copies and never mutates JAX's objects
    jax_lowered = _fresh_copy(jax_lowered)
    if call.explicit:
        _unpin_typed_arguments(jax_lowered, call)
    module = jax_lowered._lowering.stablehlo().operation.clone().opview  # a detached copy
    with module.context, ir.Location.unknown():
        symbol = _mesh_symbol(module, mesh)
        ins_sym = [None if s is None else TensorSharding(symbol, s.dims, s.replicated, s.unreduced)
                   for s in ins]
        outs = flat_shardings(jitted.out_shardings, out_info, out_avals, mesh,
                              "out_shardings", symbol)
        for s, a, p in zip(outs, out_avals, out_paths, strict=True):
            check_divisible(s, tuple(a.shape), mesh, f"{p} (out_shardings = {s.body() if s else None})")
        main = _main_func(module)
        tokens_in = _token_positions(main, "arg_attrs")
        tokens_out = _token_positions(main, "res_attrs")
        n_args = len(main.regions[0].blocks[0].arguments)
        if n_args - len(tokens_in) != len(ins):
            raise ShardcError(
                f"the lowered @main has {n_args} arguments for {len(ins)} array arguments "
                f"({len(tokens_in)} effect tokens)",
                hint="report this: shardc does not know this JAX lowering's argument layout",
            )
        _set_attrs(main, "arg_attrs", _with_tokens(ins_sym, tokens_in))
        _set_attrs(main, "res_attrs", _with_tokens(outs, tokens_out))
        if call.explicit:
            module.operation.attributes[EXPLICIT_AXES] = ir.ArrayAttr.get(
                [ir.StringAttr.get(n) for n in mesh.axis_names if n in call.explicit])

    name = getattr(jitted.fun, "__name__", "fun")
    # without locations: each op reads its own from JAX's module when a message, listing or
    # plan asks (xla_module.JaxLocations), not all of them printed and parsed every lowering
    generic = mlir_bridge.generic_text(module, with_locs=False)
    ir_module = import_generic(generic, f"<shardc.jit {name}>")
    # what `.compile()` writes its export onto; JAX's locations given to the IR as it walks
    origin = record_origin(ir_module, module, locate=True)
    # `.plan()` re-propagates the unpropagated IR with origins: it re-imports the text then,
    # rather than every lowering paying for a copy of the IR
    source = functools.partial(_import_located, generic, f"<shardc.jit {name}>", module)
    written = record_written(ir_module)
    # (with auto: XLA is handed auto's entry layouts)
    check = CompileCheck(jax_lowered, call.jmesh, symbol, origin,
                         replace(written, keep_entries=True), jitted.remove_redundant_collectives)
    ir_module, report = jitted.run_pipeline(ir_module, options, check)
    if getattr(report, "auto", None) is not None:
        written = replace(written, keep_entries=True)
    record = Traced(module, call.tree, out_tree, list(call.sds_leaves), list(out_avals), ins, outs,
                    symbol, time.perf_counter() - call.start)
    return JaxLowering(record, ir_module, jax_lowered, call.jmesh, call.paths, symbol,
                       len(call.args), call.key, call.explicit, traced.jaxpr.effects,
                       (source, options), report, origin, written, check.take(ir_module))


def _unpin_typed_arguments(jax_lowered: Any, call: CallTrace) -> None:
    """On a mesh with Explicit axes an argument whose layout JAX cannot say (an open dim, a
    priority) was traced typed by its Explicit part only: JAX's compile must not take that
    type for the whole layout (XLA chooses the Auto axes, and JAX reads them back)."""
    from jax._src.sharding_impls import UNSPECIFIED

    args = jax_lowered._lowering.compile_args
    current = tuple(args["in_shardings"])
    if len(current) != len(call.ins):
        return
    args["in_shardings"] = tuple(
        UNSPECIFIED if s is not None and native_sharding(s, call.jmesh) is None else cur
        for cur, s in zip(current, call.ins, strict=True))


def _import_located(generic: str, source_name: str, jax_module: Any) -> Module:
    """Import `generic` (JAX's module `jax_module` printed without locations) with JAX's
    locations attached (`xla_module.attach_jax_locations`)."""
    module = import_generic(generic, source_name)
    attach_jax_locations(module, jax_module)
    return module


def _fresh_copy(jax_lowered: Any) -> Any:
    """A copy of JAX's `Lowered` with its own lowering object and compile arguments (JAX
    returns the same cached objects for the same trace; `compile_lowered` swaps the module in).
    The copy shares JAX's module, which shardc only reads (it writes its shardings on a clone)."""
    import copy

    lowering = copy.copy(jax_lowered._lowering)
    lowering.compile_args = dict(lowering.compile_args)
    lowering._executable = None
    out = copy.copy(jax_lowered)
    out._lowering = lowering
    return out


def _token_positions(main: Any, key: str) -> set[int]:
    from jaxlib.mlir import ir

    if key not in main.attributes:
        return set()
    out = set()
    for i, d in enumerate(main.attributes[key]):
        if "jax.token" in ir.DictAttr(d):
            out.add(i)
    return out


def _with_tokens(shardings: list[Any], tokens: set[int]) -> list[Any]:
    it = iter(shardings)
    total = len(shardings) + len(tokens)
    return [None if i in tokens else next(it) for i in range(total)]


def compile_lowered(lowered: Lowered, compiler_options: dict[str, Any] | None = None) -> Any:
    """Compile shardc's compiled form (the `pin` export) through JAX's own lowering object:
    JAX's compiled object (`Lowered.compile` wraps it in a `JaxCompiled`). XLA starts on the
    module as written (no pin yet) in a second thread while the export asks jaxlib's Shardy what
    XLA would derive from it: where nothing needs a pin (the usual case) that compile is the one
    returned, and the check cost no wall time."""
    jax_lowered = lowered.jax_lowered
    lowering = getattr(jax_lowered, "_lowering", None)
    if lowering is None or not hasattr(lowering, "_hlo") or not hasattr(lowering, "compile_args"):
        import jax

        raise ShardcError(
            f"jax {jax.__version__}'s Lowered object has no module and compile arguments where "
            "shardc hands its module to JAX (`Lowered._lowering._hlo`, `.compile_args`)",
            hint="use a jax version shardc supports (0.10.2 to 0.11 are tested), or report it",
        )
    checked, lowered.checked = getattr(lowered, "checked", None), None
    remove = lowered.jitted.remove_redundant_collectives
    if (checked is not None and not compiler_options
            and lowered.exported("pin", remove) is checked.exported):  # fmt: skip
        # auto's layout, compiled as below by shardc.jit's XLA check of its memory
        return checked.compiled
    speculation = _Speculation(lowered, compiler_options)
    exported, module = _compiled_form(lowered, for_compile=True, speculate=speculation.start)
    arg_sh, res_sh = _array_shardings(exported)
    compiled = speculation.take(module, arg_sh, res_sh)
    if compiled is None:
        compiled = _compile(lowered.jax_mesh_concrete, lowered.mesh_symbol, jax_lowered, module,
                            arg_sh, res_sh, compiler_options)  # fmt: skip
    return compiled


def _compile(
    cmesh: Any,
    symbol: str,
    jax_lowered: Any,
    module: Any,
    arg_sh: list[Any],
    res_sh: list[Any],
    compiler_options: dict[str, Any] | None,
) -> Any:
    """XLA's compile of `module` through `jax_lowered` (its lowering object takes the module
    and the in/out shardings JAX places arrays by, named on `cmesh`, the concrete mesh of
    `symbol`), errors as `ShardcError`s."""
    lowering = jax_lowered._lowering
    lowering._hlo = module
    lowering._executable = None
    args = lowering.compile_args
    args["in_shardings"] = _named(args["in_shardings"], arg_sh, cmesh, symbol)
    args["out_shardings"] = _named(args["out_shardings"], res_sh, cmesh, symbol)
    try:
        return jax_lowered.compile(compiler_options)
    except ShardcError:
        raise
    except Exception as e:  # noqa: BLE001 - XLA raises its own runtime errors
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if compiler_options and ("option" in first.lower() or "flag" in first.lower()):
            raise ShardcError(
                f"compiler_options = {compiler_options!r}: XLA refused them: {first}",
                hint="pass XLA debug option names without the leading --, e.g. "
                "{'xla_embed_ir_in_executable': True}",
            ) from None
        raise xla_refused("compile the module", first) from None


class _Speculation:
    """XLA's compile of the first module the `pin` export builds, in a thread of its own, on
    its own copy of JAX's lowering object: taken when the export ends with that very module
    and those in/out shardings (nothing pinned), else left to finish unread."""

    def __init__(self, lowered: Lowered, compiler_options: dict[str, Any] | None):
        self.lowered = lowered
        self.compiler_options = compiler_options
        self.module: Any = None
        self.shardings: tuple[list[Any], list[Any]] | None = None
        self.thread: threading.Thread | None = None
        self.result: Any = None
        self.error: BaseException | None = None

    def start(self, export: Module, module: Any) -> None:
        arg_sh, res_sh = _array_shardings(Exported(export, "pin"))
        self.module, self.shardings = module, (arg_sh, res_sh)
        copy = _fresh_copy(self.lowered.jax_lowered)  # type: ignore[attr-defined]

        def run() -> None:
            try:
                self.result = _compile(
                    self.lowered.jax_mesh_concrete, self.lowered.mesh_symbol, copy, module,
                    arg_sh, res_sh, self.compiler_options,
                )
            except BaseException as e:  # noqa: BLE001 - re-raised where the result is taken
                self.error = e

        # not a daemon: a speculation left unread may still be compiling when the program
        # ends, and the interpreter killing it inside XLA aborts the process ("terminate
        # called ...", seen at exit on a GPU, whose compiles are slower); exit waits for it
        self.thread = threading.Thread(target=run, name="shardc-xla-compile", daemon=False)
        self.thread.start()

    def take(self, module: Any, arg_sh: list[Any], res_sh: list[Any]) -> Any:
        """The compile of `module` with those shardings, if it is the one started; else None."""
        if self.thread is None or module is not self.module or self.shardings != (arg_sh, res_sh):
            return None
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.result


def module_for_compile(lowered: Lowered) -> Any:
    """The jaxlib module `compile_lowered` hands to XLA for `lowered`, without compiling: what
    `Lowered.compiler_ir()` returns and `Lowered.cost_analysis()` analyses."""
    return _compiled_form(lowered)[1]


def _compiled_form(
    lowered: Lowered,
    for_compile: bool = False,
    speculate: Callable[[Module, Any], None] | None = None,
) -> tuple[Exported, Any]:
    """The `pin` export of `lowered` (made on the propagated IR itself when `for_compile`) and
    the jaxlib module XLA compiles from it: one builder for `.compile()` and `compiler_ir()`."""
    exported = lowered.exported("pin", lowered.jitted.remove_redundant_collectives,
                                for_compile=for_compile, speculate=speculate)
    return exported, _module_for_xla(lowered, exported)


def lowering_for_xla(lowered: Lowered) -> Any:
    """A copy of JAX's lowering object of `lowered` holding the module XLA would compile (its
    `hlo()` and `cost_analysis()` are then of shardc's module)."""
    lowering = _fresh_copy(lowered.jax_lowered)._lowering  # type: ignore[attr-defined]
    lowering._hlo = module_for_compile(lowered)
    return lowering


def _module_for_xla(lowered: Lowered, exported: Exported) -> Any:
    """The jaxlib module XLA compiles: the one the `pin` export's last question to its oracle
    was about, where that was the export as it ends (the usual case: nothing to pin, or the
    last round of pins checked), else built anew the same way (`Lowered.xla_oracle`)."""
    return _xla_module_of(exported, lambda m: lowered.xla_oracle().build(m))


def _xla_module_of(exported: Exported, build: Callable[[Module], Any]) -> Any:
    """`_module_for_xla` with `build` building XLA's module of an export where needed."""
    report, oracle = exported.pin_report, exported.oracle
    if report is not None and report.last_checked and oracle is not None and oracle.last is not None:
        return oracle.last
    return build(exported.module)


def xla_builder(origin: Any, route: Callable[[str], None]) -> Callable[[Module], Any]:
    """What builds the jaxlib module XLA is handed for an export: on a copy of JAX's own
    module (`origin`, `xla_module.build_xla_module`) where the export allows, else parsed from
    its text; `route` is told which ("bindings" or "text")."""

    def build(module: Module) -> Any:
        built = build_xla_module(origin, module) if origin is not None else None
        route("text" if built is None else "bindings")
        return built if built is not None else parse_for_xla(module)

    return build


@dataclass
class Checked:
    """One layout compiled by `CompileCheck`: its `pin` export, how XLA's module was built
    from it (`Lowered.xla_route`) and JAX's compiled object."""

    exported: Exported
    route: str
    compiled: Any


class CompileCheck:
    """shardc.jit's XLA check of auto's layouts (`auto_fit.fit_to_budget`'s `measure`): each
    propagated module is exported and compiled as `compile_lowered` would (the `pin` export
    with jaxlib's Shardy as its oracle, XLA's module built on JAX's, compiled through a copy of
    JAX's lowering object), and its memory read from that compile. The compile of the layout
    auto keeps (`take`) goes to the `Lowered`, whose `.compile()` returns it rather than
    compiling the same module again."""

    def __init__(self, jax_lowered: Any, cmesh: Any, symbol: str, origin: Any,
                 written: Written, remove_redundant: bool):  # fmt: skip
        self.jax_lowered, self.cmesh, self.symbol = jax_lowered, cmesh, symbol
        self.origin, self.written, self.remove_redundant = origin, written, remove_redundant
        self.done: dict[int, tuple[Module, Checked]] = {}  # by id of the module measured

    def __call__(self, module: Module) -> int:
        """XLA's memory of `module`'s layout (arguments + outputs + temporaries - aliased)."""
        route: list[str] = []
        build = xla_builder(self.origin, route.append)
        exported = export_copy(module, "pin", self.remove_redundant, oracle=ShardyOracle(build),
                               written=self.written)  # fmt: skip
        jmodule = _xla_module_of(exported, build)
        arg_sh, res_sh = _array_shardings(exported)
        compiled = _compile(self.cmesh, self.symbol, _fresh_copy(self.jax_lowered), jmodule,
                            arg_sh, res_sh, None)  # fmt: skip
        self.done[id(module)] = (module, Checked(exported, route[-1], compiled))
        return analysed_memory(compiled.memory_analysis())

    def take(self, module: Module) -> Checked | None:
        """The compile of `module` if it was measured (the others are dropped)."""
        got = self.done.get(id(module))
        self.done.clear()
        return got[1] if got is not None and got[0] is module else None


def _array_shardings(exported: Exported) -> tuple[list[Any], list[Any]]:
    """The exported `sdy.sharding` of every non-token argument and result of `@main` (what JAX
    places arrays by; effect tokens are JAX's own)."""
    main = exported.main()
    arg_types = [str(a.type) for a in main.op.regions[0].entry.args]
    _, res_types = split_function_type(str(main.op.properties["function_type"]))
    args = [s for s, t in zip(exported.in_shardings, arg_types, strict=True) if not _token(t)]
    results = [s for s, t in zip(exported.out_shardings, res_types, strict=True) if not _token(t)]
    return args, results


def _token(type_text: str) -> bool:
    return type_text.strip() == "!stablehlo.token"


def _is_open(s: TensorSharding) -> bool:
    """Whether XLA may still add axes to `s` (an open dim, as written): JAX then reads the
    layout back from the executable."""
    return any(not d.is_closed for d in s.dims)


def _named(
    current: Sequence[Any], exported: list[Any], cmesh: Any, symbol: str
) -> tuple[Any, ...]:
    """The shardings JAX compiles with: the compiled form's layout as a `NamedSharding` where a
    `PartitionSpec` says it exactly and it is closed, else what JAX had (unspecified: read
    back from XLA)."""
    from jax.sharding import NamedSharding

    current = tuple(current)
    if len(exported) != len(current):
        return current
    out = []
    for cur, s in zip(current, exported, strict=True):
        pspec = to_partition_spec(s) if s is not None and s.mesh == symbol else None
        if pspec is None or (s is not None and (s.replicated or _is_open(s))):
            out.append(cur)
        else:
            out.append(NamedSharding(cmesh, pspec))
    return tuple(out)
