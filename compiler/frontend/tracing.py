"""The JAX frontend: trace a Python function to StableHLO + sdy through JAX's own lowering.

`trace_function` runs `jax.jit(f, keep_unused=True).trace(...)` under an `AbstractMesh` whose
axes are all `Auto` (so JAX leaves the interior to propagation, and a mesh larger than the
machine lowers fine), takes the module with debug locations (`compiler_ir("stablehlo")`, so
locations point at the user's lines), and writes shardc's resolved argument/result shardings,
with their priorities and open dims, onto `@main` through jaxlib's bindings.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from shardc.dialect.errors import (
    ArgumentError,
    ManualComputationError,
    ShardcError,
    ShardingError,
    count_mismatch,
    no_main,
    not_an_array,
)
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.frontend import specs
from shardc.frontend.annotations import tracing_mesh
from shardc.frontend.calling import ArgSpec, argument_paths, check_divisible, leaf_paths


@dataclass
class Traced:
    """What tracing produced: the jaxlib module and the flat signature of `@main`."""

    module: Any  # jaxlib ir.Module (shardings written on @main)
    in_tree: Any
    out_tree: Any
    in_avals: list[Any]  # flat jax.ShapeDtypeStruct of dynamic args
    out_avals: list[Any]
    in_shardings: list[TensorSharding | None]
    out_shardings: list[TensorSharding | None]
    mesh_symbol: str
    seconds: float


def abstract_mesh(mesh: Mesh, jax_mesh: Any = None) -> Any:
    """The `jax.sharding.AbstractMesh` of `mesh` with every axis `Auto` (keeping the device
    kind of a given JAX mesh, so a `shard_map` over that mesh matches the context mesh)."""
    from jax.sharding import AbstractMesh, AxisType

    names = mesh.axis_names
    device = None
    given = getattr(jax_mesh, "abstract_mesh", jax_mesh)
    if given is not None and type(given).__name__ == "AbstractMesh":
        device = getattr(given, "abstract_device", None)
    return AbstractMesh(
        tuple(mesh.axis_sizes[n] for n in names),
        names,
        axis_types=(AxisType.Auto,) * len(names),
        abstract_device=device,
    )


def abstractify(x: Any) -> Any:
    """A `jax.ShapeDtypeStruct` for an array, a ShapeDtypeStruct or a Python scalar."""
    import jax
    import numpy as np

    if isinstance(x, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(x.shape, x.dtype)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype)
    try:
        arr = jax.numpy.asarray(x)
    except TypeError:
        raise not_an_array(
            repr(x), type(x).__name__,
            hint="pass arrays or jax.ShapeDtypeStruct, or mark the argument static",
        ) from None
    return jax.ShapeDtypeStruct(arr.shape, np.dtype(arr.dtype))


def flat_shardings(
    given: Any, tree: Any, avals: list[Any], mesh: Mesh, label: str, mesh_ref: str
) -> list[TensorSharding | None]:
    """Broadcast `given` (one spec, or a pytree prefix of specs) to the flat leaves of `tree`."""
    import jax

    if given is None:
        return [None] * len(avals)
    kind = label.split("_")[0]  # "in" or "out"
    try:
        full = jax.tree.broadcast(given, tree, is_leaf=specs.is_spec_like)
    except (ValueError, TypeError):
        shape = jax.tree.map(lambda a: f"{a.dtype}{list(a.shape)}", tree)
        raise ShardingError(
            f"{label} = {given!r} does not match the structure of the {kind}puts: {shape}",
            hint=f"give one spec for all {kind}puts, or a pytree prefix of them with one spec "
            "(or None) per leaf",
        ) from None
    leaves = jax.tree.leaves(full, is_leaf=lambda x: x is None or specs.is_spec_like(x))
    if len(leaves) != len(avals):
        raise count_mismatch(
            label, len(leaves), "shardings", len(avals), "values", cls=ShardingError,
            hint=f"give one spec for all {kind}puts, or one (or None) per {kind}put",
        )
    out = []
    # a model repeats its specs: each (spec, shape) resolved once (the same answer, or the
    # first one's error)
    seen: dict[tuple[Any, tuple[int, ...]], TensorSharding | None] = {}
    for i, (spec, aval) in enumerate(zip(leaves, avals, strict=True)):
        shape = tuple(aval.shape)
        try:
            key: tuple[Any, tuple[int, ...]] | None = (spec, shape)
            got = seen.get(key)  # type: ignore[arg-type]
        except TypeError:  # an unhashable spec
            key, got = None, None
        if got is None:
            got = specs.to_sharding(spec, mesh, shape, f"{label}[{i}]", mesh_ref)
            if key is not None:
                seen[key] = got
        out.append(got)
    return out


def _main_func(module: Any) -> Any:
    from jaxlib.mlir import ir

    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op
    raise no_main("the lowered module")


def _mesh_symbol(module: Any, mesh: Mesh) -> str:
    """The name of an `sdy.mesh` equal to `mesh`, inserting `@mesh` (or a free name) if none."""
    from jaxlib.mlir import ir

    wanted = str(mesh)
    taken = set()
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            taken.add(name)
            if str(op.attributes["mesh"]) == wanted:
                return name
    name = "mesh"
    i = 0
    while name in taken:
        name, i = f"mesh_{i}", i + 1
    with ir.InsertionPoint.at_block_begin(module.body):
        op = ir.Operation.create(
            "sdy.mesh",
            attributes={"sym_name": ir.StringAttr.get(name), "mesh": ir.Attribute.parse(wanted)},
        )
    del op
    return name


def _set_attrs(func: Any, key: str, shardings: list[TensorSharding | None]) -> None:
    from jaxlib.mlir import ir

    old = func.attributes[key] if key in func.attributes else None
    dicts = []
    parsed: dict[TensorSharding, Any] = {}  # (a model repeats its shardings)
    for i, sharding in enumerate(shardings):
        entries: dict[str, Any] = {}
        if old is not None:
            old_dict = ir.DictAttr(old[i])
            for j in range(len(old_dict)):
                named = old_dict[j]
                entries[named.name] = named.attr
        if sharding is not None:
            attr = parsed.get(sharding)
            if attr is None:
                attr = parsed[sharding] = ir.Attribute.parse(str(sharding))
            entries["sdy.sharding"] = attr
        dicts.append(ir.DictAttr.get(entries))
    func.attributes[key] = ir.ArrayAttr.get(dicts)


def _exclude_shardc_frames() -> None:
    """Make JAX's source locations skip shardc's own frames (they point at the user's lines)."""
    import os

    from jax._src import source_info_util

    here = os.path.dirname(os.path.abspath(__file__))
    if here not in getattr(source_info_util, "_exclude_paths", []):
        source_info_util.register_exclusion(here)


def _check_static_argnums(fun: Any, args: tuple[Any, ...], static_argnums: tuple[int, ...],
                          donate_argnums: tuple[int, ...] = ()) -> None:
    """Static and donated argument numbers must name given positional arguments, as
    `jax.jit` requires."""
    name = getattr(fun, "__name__", "fun")
    for what, nums in (("static", static_argnums), ("donate", donate_argnums)):
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ArgumentError(
                    f"{what}_argnums={nums} names argument {i}, but {name} was given "
                    f"{len(args)} positional arguments",
                    hint=f"number the {'static' if what == 'static' else 'donated'} arguments "
                    "from 0 among the positional arguments of the call",
                )


@contextlib.contextmanager
def jax_errors_translated(mesh: Mesh) -> Iterator[None]:
    """Trace and lower under this: JAX's shard_map errors come out as one-line `ShardcError`s
    (both lowering paths, abstract and on the mesh's devices, use it)."""
    try:
        yield
    except ShardcError:
        raise
    except ValueError as e:
        translated = _translate_jax_error(e, mesh)
        if translated is None:
            raise
        raise translated from e


def _translate_jax_error(e: ValueError, mesh: Mesh) -> ShardcError | None:
    """JAX's own shard_map errors raised while tracing, as one-line `ShardcError`s."""
    text = str(e).strip()
    if "should match the mesh passed to shard_map" in text:
        given = text.splitlines()[0].rpartition("passed to shard_map ")[2]
        return ManualComputationError(
            f"jax.shard_map(mesh={given}) inside shardc.jit: shardc lowers mesh {mesh.body()} "
            "with every axis Auto, and JAX requires shard_map's mesh to match that context mesh",
            hint="leave out mesh= in jax.shard_map (it then takes shardc.jit's mesh), or build "
            "the mesh with axis_types=(jax.sharding.AxisType.Auto,) * n",
        )
    if text.startswith("shard_map"):
        paragraphs = [p.replace("\n", " ").strip() for p in text.split("\n\n") if p.strip()]
        details = [p for p in paragraphs[1:-1] if not p.startswith("The mesh given")]
        message = paragraphs[0].rstrip(":")
        if details:
            message += ": " + "; ".join(details)
        hint = paragraphs[-1] if len(paragraphs) > 1 else None
        return ManualComputationError(message, hint=hint)
    return None


def _check_layouts(fun: Any, args: tuple[Any, ...], static_argnums: tuple[int, ...],
                   dyn: tuple[Any, ...], ins: list[Any], in_avals: list[Any], outs: list[Any],
                   out_info: Any, mesh: Mesh) -> None:
    """Argument and result shardings whose axes do not divide a dim raise, as under jax.jit,
    naming the argument's or output's path."""
    import jax

    in_paths = argument_paths(fun, args, ArgSpec(static_argnums=static_argnums), dyn, {})
    out_avals = jax.tree.leaves(out_info)
    out_paths = leaf_paths(out_info, "output")
    for label, shardings, avals, paths in (("argument", ins, in_avals, in_paths),
                                           ("", outs, out_avals, out_paths)):
        kind = "in_shardings" if label else "out_shardings"
        for s, a, path in zip(shardings, avals, paths, strict=True):
            what = f"{label} {path}".strip()
            check_divisible(s, tuple(a.shape), mesh, f"{what} ({kind} = {s.body() if s else None})")


def trace_function(
    fun: Any,
    args: tuple[Any, ...],
    mesh: Mesh,
    static_argnums: tuple[int, ...],
    in_shardings: Any,
    out_shardings: Any,
    platform: str | None = None,
    jax_mesh: Any = None,
) -> Traced:
    """Trace `fun(*args)` and return its module with shardc's shardings on `@main`."""
    import jax
    from jaxlib.mlir import ir

    start = time.perf_counter()
    _exclude_shardc_frames()
    _check_static_argnums(fun, args, static_argnums)
    dyn = tuple(a for i, a in enumerate(args) if i not in static_argnums)
    call_args = tuple(
        a if i in static_argnums else jax.tree.map(abstractify, a) for i, a in enumerate(args)
    )
    abstract_dyn = tuple(jax.tree.map(abstractify, a) for a in dyn)
    in_avals, in_tree = jax.tree.flatten(abstract_dyn)
    with jax_errors_translated(mesh), tracing_mesh(mesh), jax.sharding.use_abstract_mesh(
        abstract_mesh(mesh, jax_mesh)
    ):
        traced = jax.jit(fun, static_argnums=static_argnums, keep_unused=True).trace(*call_args)
        lowered = traced.lower(lowering_platforms=(platform or jax.default_backend(),))
    out_avals, out_tree = jax.tree.flatten(traced.out_info)
    module = lowered.compiler_ir("stablehlo")
    with module.context, ir.Location.unknown():
        symbol = _mesh_symbol(module, mesh)
        ins = flat_shardings(in_shardings, abstract_dyn, in_avals, mesh, "in_shardings", symbol)
        outs = flat_shardings(
            out_shardings, traced.out_info, out_avals, mesh, "out_shardings", symbol
        )
        _check_layouts(fun, args, static_argnums, dyn, ins, in_avals, outs, traced.out_info, mesh)
        main = _main_func(module)
        _set_attrs(main, "arg_attrs", ins)
        _set_attrs(main, "res_attrs", outs)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), mesh.num_devices
        )
    return Traced(
        module,
        in_tree,
        out_tree,
        in_avals,
        out_avals,
        ins,
        outs,
        symbol,
        time.perf_counter() - start,
    )
