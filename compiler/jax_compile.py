"""Lowering and compiling a `shardc.jit` call through JAX's own stage objects.

JAX traces and lowers the function on the mesh's devices (axes `Auto`); shardc writes the
arguments' annotations on that module, imports it, propagates, and its `pin` export replaces the
module inside (a copy of) JAX's lowering object, so that JAX compiles and calls it: host
callbacks, keep-alives, ordered effects' tokens, donation (input/output aliasing), argument
placement and the multi-process runtime are JAX's, nothing home-made.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from shardc.dialect.errors import ShardcError, ShardingError
from shardc.dialect.ir import Module
from shardc.dialect.shardings import TensorSharding
from shardc.passes.pin import record_written

from . import specs
from .calling import (
    ArgSpec,
    argument_paths,
    check_divisible,
    committed_annotation,
    leaf_aval,
    leaf_paths,
    same_layout,
    split_call,
)
from .jitted import Compiled

if TYPE_CHECKING:
    from .exported import Exported
    from .jitted import Jitted, Lowered


def _sds(leaf: Any, aval: Any) -> Any:
    import jax

    if isinstance(leaf, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, weak_type=leaf.weak_type)
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=getattr(aval, "weak_type", False))


def lower_for_call(jitted: Jitted, args: tuple[Any, ...], kwargs: dict[str, Any],
                   options: Any = None) -> Lowered:
    """Trace and lower with JAX on the mesh's devices, propagate with shardc, and keep JAX's
    lowering object so that `compile_lowered` compiles shardc's module through it."""
    import time

    import jax
    from jaxlib.mlir import ir

    from shardc import mlir_bridge
    from shardc.importer import import_generic

    from .annotations import tracing_mesh
    from .backend import concrete_mesh, mesh_devices
    from .frontend import (
        Traced,
        _check_static_argnums,
        _exclude_shardc_frames,
        _main_func,
        _mesh_symbol,
        _set_attrs,
        flat_shardings,
        jax_errors_translated,
    )
    from .jitted import Lowered
    from .xla_module import record_origin

    start = time.perf_counter()
    _exclude_shardc_frames()
    spec = jitted.argspec
    _check_static_argnums(jitted.fun, args, spec.given_static_argnums)
    mesh = jitted.mesh
    devices = mesh_devices(mesh, jitted.jax_mesh)
    cmesh = concrete_mesh(mesh, devices)
    dyn, dyn_kw, _ = split_call(spec, args, kwargs)
    leaves, tree = jax.tree.flatten((dyn, dyn_kw))
    paths = argument_paths(jitted.fun, args, spec, dyn, dyn_kw)
    avals = [leaf_aval(leaf, p) for leaf, p in zip(leaves, paths, strict=True)]
    sds_leaves = [_sds(leaf, a) for leaf, a in zip(leaves, avals, strict=True)]

    # shardings: in_shardings over the dynamic positional args (keywords open), then the
    # committed arrays' own layouts where in_shardings says nothing
    n_pos = len(jax.tree.leaves(dyn))
    pos_sds = jax.tree.unflatten(jax.tree.structure(dyn), sds_leaves[:n_pos])
    given = flat_shardings(jitted.in_shardings, pos_sds, sds_leaves[:n_pos], mesh,
                           "in_shardings", specs.MESH_SYMBOL)
    given += [None] * (len(leaves) - n_pos)
    ins: list[TensorSharding | None] = []
    for i, (leaf, path, user) in enumerate(zip(leaves, paths, given, strict=True)):
        what = f"argument {path}"
        committed = committed_annotation(leaf, mesh, devices, what)
        if user is not None and committed is not None and not same_layout(user, committed):
            raise ShardingError(
                f"{what} is a jax.Array committed to {leaf.sharding.spec if hasattr(leaf.sharding, 'spec') else leaf.sharding} "
                f"({committed.body()}), but in_shardings gives {user.body()}",
                hint="jax.jit refuses to move a committed array: jax.device_put it to the layout "
                "in_shardings names first, or drop its in_shardings entry (None) to keep its "
                "layout",
            )
        chosen = user if user is not None else committed
        check_divisible(chosen, tuple(avals[i].shape), mesh,
                        f"{what} (in_shardings = {chosen.body() if chosen else None})")
        ins.append(chosen)

    call_args, call_kw = _rebuild(args, kwargs, spec, jax.tree.unflatten(tree, sds_leaves))
    with jax_errors_translated(mesh), tracing_mesh(mesh), jax.set_mesh(cmesh):
        traced = jax.jit(
            jitted.fun,
            static_argnums=spec.static_argnums or None,
            static_argnames=spec.static_argnames or None,
            donate_argnums=spec.donate_argnums or None,
            donate_argnames=spec.donate_argnames or None,
            keep_unused=True,
        ).trace(*call_args, **call_kw)
        jax_lowered = traced.lower()

    out_info = traced.out_info  # (JAX builds it anew on every read)
    out_avals, out_tree = jax.tree.flatten(out_info)
    out_paths = leaf_paths(out_info, "output")
    # JAX caches its lowerings: shardc works on copies and never mutates JAX's objects
    jax_lowered = _fresh_copy(jax_lowered)
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
    ir_module, report = jitted.run_pipeline(ir_module, options)
    record = Traced(module, tree, out_tree, list(sds_leaves), list(out_avals), ins, outs,
                    symbol, time.perf_counter() - start)
    lowered = Lowered(jitted, record, ir_module)
    lowered.jax_lowered = jax_lowered  # type: ignore[attr-defined]
    lowered.jax_mesh_concrete = cmesh  # type: ignore[attr-defined]
    lowered.argument_paths = paths  # type: ignore[attr-defined]
    lowered.mesh_symbol = symbol  # type: ignore[attr-defined]
    lowered.call_arity = len(args)  # type: ignore[attr-defined]
    lowered.plan_source = (source, options)
    lowered.report = report
    lowered.origin = origin
    lowered.written = written
    return lowered


def _import_located(generic: str, source_name: str, jax_module: Any) -> Module:
    """Import `generic` (JAX's module `jax_module` printed without locations) with JAX's
    locations attached (`xla_module.attach_jax_locations`)."""
    from shardc.importer import import_generic

    from .xla_module import attach_jax_locations

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


def _rebuild(args: tuple[Any, ...], kwargs: dict[str, Any], spec: ArgSpec,
             abstract: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments with every dynamic leaf replaced by its ShapeDtypeStruct."""
    dyn, dyn_kw = abstract
    n = len(args)
    static_idx = {i % n for i in spec.static_argnums if -n <= i < n}
    it = iter(dyn)
    call_args = tuple(args[i] if i in static_idx else next(it) for i in range(n))
    call_kw = {k: (v if k in spec.static_argnames else dyn_kw[k]) for k, v in kwargs.items()}
    return call_args, call_kw


def compile_lowered(lowered: Lowered, compiler_options: dict[str, Any] | None = None) -> Any:
    """Compile shardc's `pin` export through JAX's own lowering object; a `JaxCompiled`."""
    ref = getattr(lowered, "_compiled_default", None)
    cached = ref() if ref is not None else None
    if cached is not None and not compiler_options:
        return cached
    jax_lowered = lowered.jax_lowered  # type: ignore[attr-defined]
    exported = lowered.exported("pin", lowered.jitted.remove_redundant_collectives,
                                for_compile=True)
    arg_sh, res_sh = _array_shardings(exported)
    module = _module_for_xla(lowered, exported)
    lowering = getattr(jax_lowered, "_lowering", None)
    if lowering is None or not hasattr(lowering, "_hlo") or not hasattr(lowering, "compile_args"):
        import jax

        raise ShardcError(
            f"jax {jax.__version__}'s Lowered object has no module and compile arguments where "
            "shardc hands its module to JAX (`Lowered._lowering._hlo`, `.compile_args`)",
            hint="use a jax version shardc supports (0.10.2 to 0.11 are tested), or report it",
        )
    lowering._hlo = module
    lowering._executable = None
    cmesh = lowered.jax_mesh_concrete  # type: ignore[attr-defined]
    symbol = lowered.mesh_symbol  # type: ignore[attr-defined]
    args = lowering.compile_args
    args["in_shardings"] = _named(args["in_shardings"], arg_sh, cmesh, symbol)
    args["out_shardings"] = _named(args["out_shardings"], res_sh, cmesh, symbol)
    try:
        compiled = jax_lowered.compile(compiler_options)
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
        raise ShardcError(f"XLA could not compile the module: {first}") from None
    out = JaxCompiled(lowered, compiled)
    if not compiler_options:
        # a weak reference: the compiled function holds its lowering, and a cycle between the
        # two would keep both (and JAX's jaxpr under them) until a full GC collection
        lowered._compiled_default = weakref.ref(out)  # type: ignore[attr-defined]
    lowered.compiled_export_done()
    return out


def _module_for_xla(lowered: Lowered, exported: Exported) -> Any:
    """The jaxlib module XLA compiles: the one the `pin` export's last question to its oracle
    was about, where that was the export as it ends (the usual case: nothing to pin, or the
    last round of pins checked), else built anew the same way (`Lowered.xla_oracle`)."""
    report, oracle = exported.pin_report, exported.oracle
    if report is not None and report.last_checked and oracle is not None and oracle.last is not None:
        return oracle.last
    return lowered.xla_oracle().build(exported.module)


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
            raise ShardcError(
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


def _array_shardings(exported: Exported) -> tuple[list[Any], list[Any]]:
    """The exported `sdy.sharding` of every non-token argument and result of `@main` (what JAX
    places arrays by; effect tokens are JAX's own)."""
    from shardc.dialect.types import split_function_type

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
        pspec = specs.to_partition_spec(s) if s is not None and s.mesh == symbol else None
        if pspec is None or (s is not None and (s.replicated or _is_open(s))):
            out.append(cur)
        else:
            out.append(NamedSharding(cmesh, pspec))
    return tuple(out)
