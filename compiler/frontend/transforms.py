"""A `shardc.jit` function called under a JAX trace: `jax.jit`, `grad`, `vmap`, `checkpoint`,
a `scan`/`fori_loop` body, or another `shardc.jit` being traced.

There the arguments are tracers, nothing can be compiled on its own, and the right behaviour is
`jax.jit`'s for an inner call: the function's computation becomes part of the outer program, as
an inner `jax.jit` (a `pjit` equation JAX knows how to differentiate, batch and lower), with its
`in_shardings`/`out_shardings` written as sharding constraints on its inputs and outputs
(`shardc.constrain`, so open dims and priorities are kept and the outer propagation, shardc's or
XLA's Shardy, sees them). Donation means nothing inside a trace and is ignored, as in JAX.
"""

from __future__ import annotations

from typing import Any

from shardc.backend.xla import mesh_devices
from shardc.dialect.errors import ShardcError
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.frontend import specs
from shardc.frontend.annotations import constrain
from shardc.frontend.calling import argument_paths, check_divisible, leaf_paths, split_call
from shardc.frontend.meshes import native_sharding, typed_concrete_mesh
from shardc.frontend.tracing import flat_shardings


def is_traced(tree: Any) -> bool:
    """Whether the call happens inside a JAX trace: a leaf of `tree` is a tracer, or JAX is
    tracing (a `scan` body that closes over concrete arrays passes no tracer)."""
    import jax

    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(tree)):
        return True
    try:
        from jax._src import core
    except ImportError:  # pragma: no cover - a jax without the private module
        return False
    clean = getattr(core, "trace_state_clean", None)
    return clean is not None and not clean()


def _constrain_all(values: Any, shardings: list[TensorSharding | None], mesh: Any) -> Any:
    """`values` with each leaf whose sharding JAX cannot say itself (open dims, priorities)
    constrained by `shardc.constrain`; the others are the inner jit's own shardings."""
    import jax


    leaves, tree = jax.tree.flatten(values)
    out = [v if s is None or native(s) else constrain(v, s, mesh=mesh)
           for v, s in zip(leaves, shardings, strict=True)]
    return jax.tree.unflatten(tree, out)


def native(sharding: TensorSharding) -> bool:
    """Whether `jax.jit` can be given `sharding` itself (closed, no priority, whole axes)."""
    return all(d.is_closed and d.priority is None for d in sharding.dims) and not any(
        a.sub is not None for d in sharding.dims for a in d.axes)


def _resolve(given: Any, values: Any, mesh: Mesh, label: str,
             paths: list[str]) -> list[TensorSharding | None]:
    """The flat shardings `given` (a pytree prefix of specs, or None) says for `values`,
    checked for divisibility, naming each leaf by its path."""
    import jax


    leaves, tree = jax.tree.flatten(values)
    avals = [jax.ShapeDtypeStruct(jax.numpy.shape(v), jax.numpy.result_type(v)) for v in leaves]
    shardings = flat_shardings(given, jax.tree.unflatten(tree, avals), avals, mesh, label,
                               specs.MESH_SYMBOL)
    for s, a, path in zip(shardings, avals, paths, strict=True):
        check_divisible(s, tuple(a.shape), mesh, f"{path} ({label} = {s.body() if s else None})")
    return shardings


def traced_call(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call `jitted` inside a JAX trace as an inner `jax.jit` with its shardings: JAX's own
    where JAX can say them (the mesh's devices and axis types with them), `shardc.constrain`
    constraints where only shardc can (open dims, priorities)."""
    import jax


    spec = jitted.argspec
    mesh = jitted.mesh
    jmesh = typed_concrete_mesh(mesh, jitted.jax_mesh, mesh_devices(mesh, jitted.jax_mesh))
    dyn, dyn_kw, _ = split_call(spec, args, kwargs)
    paths = ["argument " + p for p in argument_paths(jitted.fun, args, spec, dyn, {})]
    ins = _resolve(jitted.in_shardings, dyn, mesh, "in_shardings", paths[:len(jax.tree.leaves(dyn))])
    n = len(args)
    dyn_kw = {k: v for k, v in kwargs.items() if k not in spec.static_argnames}
    static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in spec.static_argnames))
    key = (n, jax.tree.structure((dyn, dyn_kw)), tuple(ins), jmesh)
    cache = jitted.__dict__.setdefault("_inner_jits", {})
    if key not in cache:
        cache[key] = _inner_jit(jitted, n, dyn, dyn_kw, ins, jmesh)
    # keywords travel as two more positional arguments (JAX's jit takes no keywords where it
    # is given in_shardings): the dynamic ones as a dict, the static ones as a sorted tuple
    return cache[key](*args, dyn_kw, static_kw)


def _inner_jit(jitted: Any, n: int, dyn: tuple[Any, ...], dyn_kw: dict[str, Any],
               ins: list[TensorSharding | None], jmesh: Any) -> Any:
    """The inner `jax.jit` for calls with `n` positional arguments of the structure of `dyn`
    whose flat shardings are `ins`, and dynamic keywords like `dyn_kw` (built once per such
    call, so JAX's own cache keeps its traces)."""
    import jax


    spec = jitted.argspec
    mesh = jitted.mesh
    static_idx = {i % n for i in spec.static_argnums if -n <= i < n}
    in_named = [_jax_sharding(s, jmesh) for s in ins]
    out_named = _out_prefix(jitted.out_shardings, jmesh, mesh)
    carried = any(s is not None and native_sharding(s, jmesh) is not None for s in ins) or (
        out_named is not None and any(
            not _unspecified(s) for s in jax.tree.leaves(out_named, is_leaf=_unspecified)))

    def inner(*all_args: Any) -> Any:
        *call_args, call_kw, static_kw = all_args
        dyn_args = tuple(a for i, a in enumerate(call_args) if i not in static_idx)
        constrained = iter(_carry_mesh(_constrain_all(dyn_args, ins, mesh), jmesh, carried))
        full = tuple(
            call_args[i] if i in static_idx else next(constrained) for i in range(len(call_args))
        )
        out = jitted.fun(*full, **call_kw, **dict(static_kw))
        paths = leaf_paths(out, "output")
        outs = _resolve(jitted.out_shardings, out, mesh, "out_shardings", paths)
        return _constrain_all(out, outs, mesh)

    inner.__name__ = getattr(jitted.fun, "__name__", "fun")
    in_tree = jax.tree.structure(dyn)
    kw_shardings = jax.tree.map(lambda _: _UNSPECIFIED(), dyn_kw)
    return jax.jit(
        inner,
        in_shardings=(*jax.tree.unflatten(in_tree, in_named), kw_shardings),
        out_shardings=_UNSPECIFIED() if out_named is None else out_named,
        static_argnums=(*sorted(static_idx), n + 1),
    )


def _unspecified(x: Any) -> bool:
    return type(x).__name__ == "UnspecifiedValue"


def _UNSPECIFIED() -> Any:  # noqa: N802 - JAX's sentinel
    from jax._src.sharding_impls import UNSPECIFIED

    return UNSPECIFIED


def _jax_sharding(sharding: TensorSharding | None, jmesh: Any) -> Any:
    """What the inner jit is given for a value: the `NamedSharding` where JAX can say it, else
    JAX's unspecified (propagation's, under the constraint `_constrain_all` writes)."""

    named = native_sharding(sharding, jmesh) if sharding is not None else None
    return named if named is not None else _UNSPECIFIED()


def _out_prefix(given: Any, jmesh: Any, mesh: Mesh) -> Any:
    """`out_shardings` (a pytree prefix of specs) as the inner jit's out_shardings: each spec
    that names a layout JAX can say on its own (rank-free: closed, no priority) as its
    `NamedSharding`, every other unspecified; None when nothing is given."""
    import jax

    if given is None:
        return None

    def one(s: Any) -> Any:
        if s is None:
            return _UNSPECIFIED()
        try:
            spec = specs.to_spec(s, mesh, 0)
        except ShardcError:
            return _UNSPECIFIED()  # resolved per value later (a rank-dependent spec)
        sharding = TensorSharding(specs.MESH_SYMBOL, spec.dims, spec.replicated, spec.unreduced)
        return _jax_sharding(sharding, jmesh)

    return jax.tree.map(one, given, is_leaf=lambda x: x is None or specs.is_spec_like(x))


def _carry_mesh(values: tuple[Any, ...], jmesh: Any, carried: bool) -> tuple[Any, ...]:
    """With no sharding of JAX's naming the mesh, its first array leaf under an unconstrained
    `with_sharding_constraint` on the mesh: it constrains nothing, and it is how JAX learns
    which devices an inner jit runs on (an eager `jax.grad` of it, an outer `jax.jit` without
    `jax.set_mesh`), so that it never runs on one device while its mesh has more."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    if carried or all(_is_explicit_axis(t) for t in getattr(jmesh, "axis_types", ())):
        return values
    leaves, tree = jax.tree.flatten(values)
    for i, v in enumerate(leaves):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            spec = PartitionSpec(*[PartitionSpec.UNCONSTRAINED] * len(v.shape))
            leaves[i] = jax.lax.with_sharding_constraint(v, NamedSharding(jmesh, spec))
            break
    return tuple(jax.tree.unflatten(tree, leaves))


def _is_explicit_axis(t: Any) -> bool:
    return getattr(t, "name", str(t)) == "Explicit"
