"""`shardc.jit`'s calling convention, as `jax.jit` has it (the compile path is
api/jax_compile.py).

- Which arguments are static or donated (`static_argnums`/`static_argnames`,
  `donate_argnums`/`donate_argnames`, resolved against the function's signature as JAX does).
- The cache key of a call: the pytree structure, each leaf's shape, dtype and weak type, the
  sharding of committed arrays, and the static values, read from the arrays' metadata only (no
  host copy, no data touched, so it works on typed PRNG keys and on global arrays that span
  other processes).
- Readable paths of argument leaves (`params['w']`) for error messages.
- Honest layouts: a sharding whose axes do not divide a dim raises (as `jax.jit` does), and a
  committed `jax.Array` is laid out as it is unless `in_shardings` says otherwise, which raises.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from shardc.dialect.errors import (
    ArgumentError,
    ArgumentTypeError,
    ShardingError,
    not_an_array,
    not_divisible,
)
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.frontend import specs

# ---------------------------------------------------------------------------------------------
# static and donated arguments


@dataclass(frozen=True)
class ArgSpec:
    """Which positional indices and keyword names are static or donated."""

    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    donate_argnames: tuple[str, ...] = ()
    given_static_argnums: tuple[int, ...] = ()  # as the user wrote them (checked per call)
    given_donate_argnums: tuple[int, ...] = ()


def _as_tuple(value: Any, kind: type, what: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, kind):
        return (value,)
    try:
        out = tuple(value)
    except TypeError:
        out = (value,)
    for v in out:
        if not isinstance(v, kind) or isinstance(v, bool):
            raise ArgumentTypeError(
                f"{what} = {value!r}: {v!r} is not {'an int' if kind is int else 'a str'}",
                hint=f"give {what} as one {kind.__name__} or a tuple of them, as for jax.jit",
            )
    return out


def resolve_argspec(
    fun: Callable[..., Any],
    static_argnums: Any = (),
    static_argnames: Any = (),
    donate_argnums: Any = (),
    donate_argnames: Any = (),
) -> ArgSpec:
    """Numbers and names of static/donated arguments, each completed from the other through
    `fun`'s signature (as `jax.jit` does); a `ShardcError` for an unknown name or a clash."""
    s_nums = _as_tuple(static_argnums, int, "static_argnums")
    s_names = _as_tuple(static_argnames, str, "static_argnames")
    d_nums = _as_tuple(donate_argnums, int, "donate_argnums")
    d_names = _as_tuple(donate_argnames, str, "donate_argnames")
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    name = getattr(fun, "__name__", "fun")
    positional = [
        p.name for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    named = {p.name for p in params if p.kind != inspect.Parameter.VAR_POSITIONAL}
    takes_kwargs = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params)

    def complete(nums: tuple[int, ...], names: tuple[str, ...], what: str) -> tuple[
        tuple[int, ...], tuple[str, ...]
    ]:
        for n in names:
            if params and n not in named and not takes_kwargs:
                raise ArgumentError(
                    f"{what}_argnames names {n!r}, which is not a parameter of {name} "
                    f"(parameters: {', '.join(p.name for p in params) or 'none'})",
                    hint=f"name one of {name}'s parameters",
                )
        out_nums = set(nums) | {positional.index(n) for n in names if n in positional}
        out_names = set(names) | {
            positional[i] for i in nums if 0 <= i < len(positional)
        }
        return tuple(sorted(out_nums)), tuple(sorted(out_names))

    s_nums, s_names = complete(s_nums, s_names, "static")
    d_nums, d_names = complete(d_nums, d_names, "donate")
    both = set(s_nums) & set(d_nums) or set(s_names) & set(d_names)
    if both:
        raise ArgumentError(
            f"argument {sorted(both)[0]!r} of {name} is both static and donated",
            hint="a static argument is a Python value, not a buffer: donate only array arguments",
        )
    return ArgSpec(s_nums, s_names, d_nums, d_names, _as_tuple(static_argnums, int, "static_argnums"),
                   _as_tuple(donate_argnums, int, "donate_argnums"))


def normalize_call(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[
    tuple[Any, ...], dict[str, Any]
]:
    """Keywords that fill the next positional parameters become positional (so `in_shardings`,
    a prefix of the positional arguments, covers `f(x, b=w)` as it covers `f(x, w)`)."""
    if not kwargs:
        return args, kwargs
    names = _param_names(fun)
    if len(args) >= len(names) or names[len(args)] not in kwargs:
        return args, kwargs
    args, kwargs = tuple(args), dict(kwargs)
    while len(args) < len(names) and names[len(args)] in kwargs:
        args += (kwargs.pop(names[len(args)]),)
    return args, kwargs


def split_call(spec: ArgSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[
    tuple[Any, ...], dict[str, Any], tuple[Any, ...]
]:
    """The dynamic positional args, dynamic kwargs, and a hashable key of the static values."""
    n = len(args)
    static_idx = {i % n for i in spec.static_argnums if -n <= i < n}
    dyn = tuple(a for i, a in enumerate(args) if i not in static_idx)
    dyn_kw = {k: v for k, v in kwargs.items() if k not in spec.static_argnames}
    statics = tuple((i, args[i]) for i in sorted(static_idx)) + tuple(
        sorted((k, v) for k, v in kwargs.items() if k in spec.static_argnames)
    )
    for where, value in statics:
        try:
            hash(value)
        except TypeError:
            label = f"argument {where}" if isinstance(where, int) else f"argument {where!r}"
            raise ArgumentError(
                f"static {label} = {_short(value)} of type {type(value).__name__} is not hashable",
                hint="static arguments key the compile cache: pass a hashable value (a tuple, "
                "not a list), or make the argument dynamic",
            ) from None
    return dyn, dyn_kw, statics


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------------------------------------
# the abstract signature of a call (metadata only)


def leaf_aval(leaf: Any, path: str) -> Any:
    """The abstract value of one argument leaf (shape, dtype, weak type) without its data."""
    import jax

    try:
        return jax.typeof(leaf)
    except TypeError:
        raise not_an_array(
            f"{path} = {_short(leaf)}", type(leaf).__name__,
            hint="pass arrays, Python scalars or jax.ShapeDtypeStruct, or mark the argument "
            "static (static_argnums / static_argnames)",
        ) from None


def _committed_sharding(leaf: Any) -> Any:
    """The sharding of a committed `jax.Array` (the key of its layout), else None."""
    if getattr(leaf, "committed", False) and hasattr(leaf, "sharding"):
        return leaf.sharding
    return None


def call_key(
    dyn: tuple[Any, ...], dyn_kw: dict[str, Any], statics: tuple[Any, ...], context: Any = None
) -> tuple[Any, ...]:
    """The cache key of a call: structure, per-leaf (shape, dtype, weak type, committed
    sharding), static values, and `context` (what else decides the compile: the context's
    mesh of a jit without its own). Reads metadata only."""
    import jax

    leaves, tree = jax.tree.flatten((dyn, dyn_kw))
    sig: list[tuple[Any, ...]] = []
    for leaf in leaves:
        shape = getattr(leaf, "shape", None)
        dtype = getattr(leaf, "dtype", None)
        if shape is not None and dtype is not None and not isinstance(leaf, jax.ShapeDtypeStruct):
            weak = getattr(leaf, "weak_type", None)
            if weak is None:
                aval = getattr(leaf, "aval", None)
                weak = bool(getattr(aval, "weak_type", False))
            sig.append((tuple(shape), dtype, weak, _committed_sharding(leaf)))
        elif isinstance(leaf, jax.ShapeDtypeStruct):
            sig.append((tuple(leaf.shape), leaf.dtype, leaf.weak_type, leaf.sharding))
        else:  # Python scalars and other leaves: their type decides the aval (weak typed)
            sig.append((type(leaf),))
    return (tree, tuple(sig), statics, context)


# ---------------------------------------------------------------------------------------------
# honest layouts


def check_divisible(
    sharding: TensorSharding | None, shape: Sequence[int], mesh: Mesh, what: str
) -> None:
    """A `ShardingError` if the axes of some dim of `sharding` do not divide its size (XLA would
    pad or drop them silently; `jax.jit` raises for argument and result shardings)."""
    if sharding is None:
        return
    for i, (dim, size) in enumerate(zip(sharding.dims, shape, strict=False)):
        if not dim.axes:
            continue
        product = 1
        for a in dim.axes:
            product *= a.sub[1] if a.sub is not None else mesh.size_of(a.name)
        if size % product:
            axes = ", ".join(str(a).replace('"', "") for a in dim.axes)
            raise not_divisible(
                what, i, size, f"axes {axes} of {mesh.body()}", product, shape=tuple(shape),
                hint=f"shard it over axes whose product divides {size}, or leave it to "
                "propagation (None / an open dim)",
            )


def committed_annotation(
    leaf: Any, mesh: Mesh, devices: list[Any], what: str
) -> TensorSharding | None:
    """The annotation a committed array brings (its own layout, closed), as `jax.jit` takes it;
    None for an uncommitted one. A committed array on other devices raises."""
    sharding = _committed_sharding(leaf)
    if sharding is None and type(leaf).__name__ == "ShapeDtypeStruct":
        sharding = getattr(leaf, "sharding", None)  # `.lower(ShapeDtypeStruct(..., sharding=s))`
        if sharding is not None and not hasattr(sharding, "device_set"):
            sharding = None
    if sharding is None:
        return None
    shape = tuple(leaf.shape)
    ours = {d.id for d in devices}
    theirs = {d.id for d in sharding.device_set}
    if type(sharding).__name__ == "NamedSharding":
        smesh = sharding.mesh
        same_mesh = (
            tuple(smesh.axis_names) == mesh.axis_names
            and tuple(smesh.axis_sizes) == tuple(a.size for a in mesh.axes)
            and [d.id for d in getattr(smesh, "devices", _NoDevices()).flat] == [d.id for d in devices]
        )
        if same_mesh:
            spec = specs._from_partition_spec(sharding.spec)
            return specs.to_sharding(spec, mesh, shape, what, specs.MESH_SYMBOL)
    if theirs == ours and sharding.is_fully_replicated:
        return TensorSharding.replicated_of(specs.MESH_SYMBOL, len(shape))
    raise ShardingError(
        f"{what} is a jax.Array committed to {sharding}, which is not a layout on the mesh "
        f"{mesh.body()} of this shardc.jit (devices {sorted(ours)})",
        hint="jax.device_put it onto a NamedSharding of the same mesh, or pass an uncommitted "
        "array (numpy, or jax.device_put without a device) and say its layout in in_shardings",
    )


class _NoDevices:
    flat: tuple[Any, ...] = ()


def same_layout(a: TensorSharding, b: TensorSharding) -> bool:
    """Whether two shardings put the same axes on every dim (open/closed and priority aside)."""
    return [d.axes for d in a.dims] == [d.axes for d in b.dims] and a.unreduced == b.unreduced


# ---------------------------------------------------------------------------------------------
# lowering and compiling through JAX's own objects


def leaf_paths(tree_value: Any, prefix: str) -> list[str]:
    """The path of every leaf of `tree_value` after `prefix`: `output['o']`, `x[0]`."""
    import jax

    flat, _ = jax.tree_util.tree_flatten_with_path(tree_value)
    return [prefix + jax.tree_util.keystr(path) for path, _ in flat]


def _param_names(fun: Any) -> tuple[str, ...]:
    """The names of `fun`'s positional parameters, cached per function while it lives (calls
    read them every time; a strong cache would keep every jitted function alive, and with it
    JAX's traces of it)."""
    try:
        return _PARAM_NAMES[fun]
    except (KeyError, TypeError):  # not seen yet, or unhashable / not weakly referenceable
        pass
    try:
        names = tuple(
            p.name for p in inspect.signature(fun).parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        )
    except (TypeError, ValueError):
        names = ()
    try:
        _PARAM_NAMES[fun] = names
    except TypeError:
        pass
    return names


_PARAM_NAMES: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def argument_paths(fun: Any, args: tuple[Any, ...], spec: ArgSpec, dyn: tuple[Any, ...],
                   dyn_kw: dict[str, Any]) -> list[str]:
    """A readable path for every flat dynamic leaf: `x`, `params['w']`, `b` (a keyword)."""
    import jax

    names = _param_names(fun)
    n = len(args)
    static_idx = {i % n for i in spec.static_argnums if -n <= i < n}
    positions = [i for i in range(n) if i not in static_idx]
    out: list[str] = []
    for pos, value in zip(positions, dyn, strict=True):
        label = names[pos] if pos < len(names) else f"args[{pos}]"
        out += leaf_paths(value, label)
    for key, value in sorted(dyn_kw.items()):
        out += leaf_paths(value, key)
    assert len(out) == len(jax.tree.leaves((dyn, dyn_kw)))
    return out
