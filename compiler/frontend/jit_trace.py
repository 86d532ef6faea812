"""The first stage of a `shardc.jit` call: resolve the arguments' layouts and trace with JAX.

JAX traces the function as `jax.jit` would in the same place: under the mesh `jax.set_mesh` set
around the call, or under none (Flax, for one, applies its logical constraints only under a
mesh, and some of its layers break there), with the arguments typed as `jax.jit` types them on
the mesh's axes (an `Explicit` axis carries the argument's sharding in its type). Two things
that need a context mesh are traced again under the jit's mesh when no context mesh is set:
`jax.shard_map` without `mesh=` and `jax.sharding.reshard` to a bare `PartitionSpec`. The
lowering then runs with the jit's mesh as its context, so that it is for the mesh's devices.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shardc.backend.xla import mesh_devices
from shardc.dialect.errors import ShardcError, ShardingError
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.frontend import specs
from shardc.frontend.annotations import tracing_mesh
from shardc.frontend.calling import (
    argument_paths,
    call_key,
    check_divisible,
    committed_annotation,
    leaf_aval,
    same_layout,
    split_call,
)
from shardc.frontend.meshes import (
    check_auto,
    check_request,
    context_mesh,
    explicit_axes,
    explicit_part,
    mesh_mismatch,
    native_sharding,
    same_axes,
    typed_concrete_mesh,
)
from shardc.frontend.tracing import (
    _check_static_argnums,
    _exclude_shardc_frames,
    flat_shardings,
    jax_errors_translated,
)

# what JAX says when a trace needs a context mesh and none is set
_NEEDS_CONTEXT = ("The context mesh cannot be empty", "not under a mesh context")


@dataclass
class CallTrace:
    """A call traced by JAX, with what the lowering needs: the mesh (shardc's, and JAX's with
    its axis types), the flat dynamic arguments with their paths, abstract values and resolved
    shardings, and the cache key of the call."""

    jitted: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    mesh: Mesh
    jmesh: Any  # the jax.sharding.Mesh traced and compiled on (axis types kept)
    explicit: frozenset[str]
    leaves: list[Any]
    tree: Any
    paths: list[str]
    sds_leaves: list[Any]
    ins: list[TensorSharding | None]
    traced: Any  # jax.stages.Traced
    key: Any  # the call cache key of these arguments
    start: float


def _sds(leaf: Any, aval: Any, sharding: Any) -> Any:
    import jax

    if isinstance(leaf, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, weak_type=leaf.weak_type,
                                    sharding=sharding)
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=getattr(aval, "weak_type", False),
                                sharding=sharding)


def _typed(sharding: TensorSharding | None, jmesh: Any, explicit: frozenset[str]) -> Any:
    """The sharding JAX traces an argument with: on a mesh with Explicit axes, what types it
    (the whole layout where JAX can say it, else its Explicit part); on an all-Auto mesh none
    (types carry no Auto axis, and shardc writes the layout on the module itself)."""
    from jax.sharding import NamedSharding

    if not explicit or sharding is None:
        return None
    return native_sharding(sharding, jmesh) or NamedSharding(jmesh, explicit_part(sharding, explicit))


def trace_call(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CallTrace:
    """Resolve every dynamic argument's layout (in_shardings, else a committed array's own;
    checked for divisibility and for propagation-only requests on Explicit axes) and trace the
    function with JAX, arguments typed as `jax.jit` types them."""
    import jax


    start = time.perf_counter()
    _exclude_shardc_frames()
    spec = jitted.argspec
    _check_static_argnums(jitted.fun, args, spec.given_static_argnums, spec.given_donate_argnums)
    mesh = jitted.mesh
    devices = mesh_devices(mesh, jitted.jax_mesh)
    jmesh = typed_concrete_mesh(mesh, jitted.jax_mesh, devices)
    explicit = explicit_axes(jmesh)
    if getattr(jitted.options, "auto", False):
        check_auto(mesh, explicit)
    dyn, dyn_kw, statics = split_call(spec, args, kwargs)
    leaves, tree = jax.tree.flatten((dyn, dyn_kw))
    paths = argument_paths(jitted.fun, args, spec, dyn, dyn_kw)
    avals = [leaf_aval(leaf, p) for leaf, p in zip(leaves, paths, strict=True)]

    # in_shardings over the dynamic positional args (keywords open), then the committed
    # arrays' own layouts where in_shardings says nothing
    n_pos = len(jax.tree.leaves(dyn))
    pos_sds = jax.tree.unflatten(jax.tree.structure(dyn), [_sds(a, v, None) for a, v in
                                                           zip(leaves[:n_pos], avals, strict=False)])
    given = flat_shardings(jitted.in_shardings, pos_sds, jax.tree.leaves(pos_sds), mesh,
                           "in_shardings", specs.MESH_SYMBOL)
    given += [None] * (len(leaves) - n_pos)
    ins: list[TensorSharding | None] = []
    for i, (leaf, path, user) in enumerate(zip(leaves, paths, given, strict=True)):
        what = f"argument {path}"
        committed = committed_annotation(leaf, mesh, devices, what)
        if user is not None and committed is not None and not same_layout(user, committed):
            raise ShardingError(
                f"{what} is a jax.Array committed to "
                f"{leaf.sharding.spec if hasattr(leaf.sharding, 'spec') else leaf.sharding} "
                f"({committed.body()}), but in_shardings gives {user.body()}",
                hint="jax.jit refuses to move a committed array: jax.device_put it to the layout "
                "in_shardings names first, or drop its in_shardings entry (None) to keep its "
                "layout",
            )
        chosen = user if user is not None else committed
        label = f"{what} (in_shardings = {chosen.body() if chosen else None})"
        check_divisible(chosen, tuple(avals[i].shape), mesh, label)
        check_request(user, mesh, explicit, label)
        ins.append(chosen)
    sds_leaves = [_sds(leaf, a, _typed(s, jmesh, explicit))
                  for leaf, a, s in zip(leaves, avals, ins, strict=True)]

    fun = jitted.fun
    if explicit and jitted.out_shardings is not None:
        fun = _typed_outputs(fun, jitted.out_shardings, mesh, jmesh, explicit)
    call_args, call_kw = _rebuild(args, kwargs, spec, jax.tree.unflatten(tree, sds_leaves))
    traced = _trace(jitted, fun, call_args, call_kw, mesh, jmesh, explicit)
    return CallTrace(jitted, args, kwargs, mesh, jmesh, explicit, leaves, tree, paths,
                     sds_leaves, ins, traced, call_key(dyn, dyn_kw, statics, jitted._key_mesh()),
                     start)


def _trace(jitted: Any, fun: Callable[..., Any], call_args: tuple[Any, ...],
           call_kw: dict[str, Any], mesh: Mesh, jmesh: Any, explicit: frozenset[str]) -> Any:
    """`jax.jit(fun).trace(...)` in the context `jax.jit` would see, then given the jit's mesh
    as the lowering's context mesh (its devices, whatever the trace saw)."""
    import jax

    spec = jitted.argspec

    def trace() -> Any:
        return jax.jit(
            fun,
            static_argnums=spec.static_argnums or None,
            static_argnames=spec.static_argnames or None,
            donate_argnums=spec.donate_argnums or None,
            donate_argnames=spec.donate_argnames or None,
            keep_unused=True,
        ).trace(*call_args, **call_kw)

    with jax_errors_translated(mesh), tracing_mesh(mesh, explicit):
        try:
            traced = trace()
        except ValueError as e:
            if context_mesh() is not None or not any(m in str(e) for m in _NEEDS_CONTEXT):
                raise
            with jax.set_mesh(jmesh):  # shard_map without mesh=, reshard to a bare spec
                traced = trace()
        params = getattr(traced, "_params", None)
        if isinstance(params, dict) and "ctx_mesh" in params:
            traced._params = {**params, "ctx_mesh": jmesh}
            return traced
        with jax.set_mesh(jmesh):  # a JAX that keeps no context in its trace: trace under it
            return trace()


def _typed_outputs(fun: Callable[..., Any], out_shardings: Any, mesh: Mesh, jmesh: Any,
                   explicit: frozenset[str]) -> Callable[..., Any]:
    """`fun` with each result that `out_shardings` gives other Explicit axes than its type
    resharded to them: `jax.jit`'s `out_shardings` type its results so."""
    import jax
    from jax.sharding import NamedSharding


    @functools.wraps(fun)
    def typed(*args: Any, **kwargs: Any) -> Any:
        out = fun(*args, **kwargs)
        leaves, tree = jax.tree.flatten(out)
        avals = [jax.typeof(v) for v in leaves]
        shardings = flat_shardings(out_shardings, out, avals, mesh, "out_shardings",
                                   specs.MESH_SYMBOL)
        typed_leaves = []
        for v, a, s in zip(leaves, avals, shardings, strict=True):
            if s is not None and len(s.dims) == a.ndim:
                want = explicit_part(s, explicit)
                have = getattr(getattr(a, "sharding", None), "spec", None)
                if have is None or _explicit_entries(have, explicit, a.ndim) != _explicit_entries(
                        want, explicit, a.ndim):
                    v = jax.sharding.reshard(v, NamedSharding(jmesh, want))
            typed_leaves.append(v)
        return jax.tree.unflatten(tree, typed_leaves)

    return typed


def _explicit_entries(pspec: Any, explicit: frozenset[str], rank: int) -> tuple[tuple[str, ...], ...]:
    entries = list(pspec) + [None] * (rank - len(pspec))
    out = []
    for e in entries[:rank]:
        names = e if isinstance(e, tuple | list) else (() if e is None else (e,))
        out.append(tuple(str(n) for n in names if str(n) in explicit))
    return tuple(out)


def _rebuild(args: tuple[Any, ...], kwargs: dict[str, Any], spec: Any,
             abstract: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments with every dynamic leaf replaced by its ShapeDtypeStruct."""
    dyn, dyn_kw = abstract
    n = len(args)
    static_idx = {i % n for i in spec.static_argnums if -n <= i < n}
    it = iter(dyn)
    call_args = tuple(args[i] if i in static_idx else next(it) for i in range(n))
    call_kw = {k: (v if k in spec.static_argnames else dyn_kw[k]) for k, v in kwargs.items()}
    return call_args, call_kw


def resolve_mesh(given: Any, fun: Any) -> tuple[Mesh, Any]:
    """The jit's mesh (shardc's, and the JAX object it came from or None): `given`, else the
    mesh `jax.set_mesh` set around the call; a `ShardcError` without either, or when both are
    given and differ."""
    ctx = context_mesh()
    name = getattr(fun, "__name__", fun)
    if given is None:
        if ctx is None:
            raise ShardcError(
                f"shardc.jit({name}) needs a mesh",
                hint='pass mesh=jax.make_mesh(...), an AbstractMesh or "x=4,y=2", or call it '
                "inside `with jax.set_mesh(mesh):`",
            )
        return specs.to_mesh(ctx), ctx
    mesh = specs.to_mesh(given)
    if ctx is not None and not same_axes(mesh, specs.to_mesh(ctx)):
        raise mesh_mismatch(mesh, specs.to_mesh(ctx), str(name))
    return mesh, (given if not isinstance(given, str | Mesh | dict) else None)

