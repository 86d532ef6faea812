"""The mesh of a `shardc.jit` function, and what its axis types allow.

The mesh is the one given (`mesh=`), else the one `jax.set_mesh` set around the call, as
`jax.jit` takes it. JAX types a mesh's axes: on an `Explicit` axis (`jax.make_mesh`'s default) a
value's sharding is part of its type (`jax.typeof(x)` prints `float32[8@x,16]`) and JAX decides
it op by op; an `Auto` axis is left to propagation. shardc keeps the Explicit part of every
sharding as JAX typed it and propagates over Auto axes only, so a request that only propagation
could satisfy (an open dim when no axis is Auto, a priority on an Explicit axis, `auto=True`
without an Auto axis) is an error that says how to get an Auto axis.
"""

from __future__ import annotations

from typing import Any

from shardc.backend.xla import to_partition_spec
from shardc.dialect.errors import ShardcError, ShardingError, wrong_mesh
from shardc.dialect.shardings import Mesh, TensorSharding

AUTO_HINT = (
    "make the axis Auto (jax.make_mesh(..., axis_types=(jax.sharding.AxisType.Auto,) * n)), or "
    "wrap the part to propagate in jax.sharding.auto_axes(f, axes=...)"
)


def context_mesh() -> Any | None:
    """The mesh `jax.set_mesh` (or `jax.sharding.use_abstract_mesh`) set around the call: the
    concrete `jax.sharding.Mesh` when there is one, else the `AbstractMesh`; None outside."""
    import jax

    abstract = jax.sharding.get_abstract_mesh()
    if abstract is None or abstract.empty:
        return None
    try:
        from jax._src.mesh import get_concrete_mesh  # (jax.sharding.get_mesh refuses in a trace)

        concrete = get_concrete_mesh()
    except ImportError:  # pragma: no cover - a JAX without it
        concrete = None
    if concrete is not None and not getattr(concrete, "empty", True):
        return concrete
    return abstract


def explicit_axes(jax_mesh: Any) -> frozenset[str]:
    """The names of the `Explicit` axes of a JAX mesh (none for a shardc mesh or text)."""
    if jax_mesh is None or isinstance(jax_mesh, str | Mesh | dict):
        return frozenset()
    names = getattr(jax_mesh, "axis_names", ())
    types = getattr(jax_mesh, "axis_types", None) or ()
    return frozenset(str(n) for n, t in zip(names, types, strict=False) if _is_explicit(t))


def _is_explicit(axis_type: Any) -> bool:
    return getattr(axis_type, "name", str(axis_type)) == "Explicit"


def same_axes(a: Mesh, b: Mesh) -> bool:
    """Whether two meshes have the same axis names and sizes, in order."""
    return a.axis_names == b.axis_names and a.axis_sizes == b.axis_sizes


def typed_concrete_mesh(mesh: Mesh, jax_mesh: Any, devices: list[Any]) -> Any:
    """The `jax.sharding.Mesh` to trace and compile on: the user's own concrete mesh (its axis
    types kept), else one over `devices` with the axis types of a given `AbstractMesh`, else
    with every axis `Auto` (a mesh given as text or as a shardc `Mesh`)."""
    import jax
    import numpy as np
    from jax.sharding import AxisType

    if type(jax_mesh).__name__ == "Mesh" and hasattr(jax_mesh, "devices"):
        return jax_mesh
    shape = tuple(a.size for a in mesh.axes)
    explicit = explicit_axes(jax_mesh)
    types = tuple(AxisType.Explicit if n in explicit else AxisType.Auto for n in mesh.axis_names)
    return jax.sharding.Mesh(
        np.array(devices, dtype=object).reshape(shape), mesh.axis_names, axis_types=types
    )


def check_request(
    sharding: TensorSharding | None, mesh: Mesh, explicit: frozenset[str], given: str
) -> None:
    """A `ShardingError` if `sharding` asks for what only propagation does where no axis can
    propagate: an open dim on a mesh whose every axis is Explicit, or a priority on a dim with
    an Explicit axis (or on a mesh without an Auto axis). `given` names it as the user wrote it
    (`in_shardings[0] = x?p1, _`)."""
    if sharding is None or not explicit:
        return
    auto = [n for n in mesh.axis_names if n not in explicit]
    for i, d in enumerate(sharding.dims):
        on_explicit = [a.name for a in d.axes if a.name in explicit]
        if d.priority is not None and (on_explicit or not auto):
            axes = ", ".join(on_explicit or sorted(explicit))
            raise ShardingError(
                f"{given}: dim {i} has priority p{d.priority} on Explicit axis {axes}: priorities "
                "settle propagation's conflicts, and an Explicit axis is not propagated (its "
                "sharding is the value's type)",
                hint=f"drop the priority, or {AUTO_HINT}",
            )
        if not d.is_closed and not auto:
            axes = ", ".join(on_explicit or mesh.axis_names)
            raise ShardingError(
                f"{given}: dim {i} is open (?), but every axis of mesh {mesh.body()} is Explicit "
                f"({axes}): nothing propagates into it",
                hint=f"close the dim (write the axes it has, or _), or {AUTO_HINT}",
            )


def check_auto(mesh: Mesh, explicit: frozenset[str]) -> None:
    """`auto=True` needs an Auto axis to choose layouts over."""
    if explicit and all(n in explicit for n in mesh.axis_names):
        raise ShardingError(
            f"auto=True on mesh {mesh.body()}, whose every axis is Explicit "
            f"({', '.join(mesh.axis_names)}): automatic sharding chooses over Auto axes only",
            hint=AUTO_HINT,
        )


def native_sharding(sharding: TensorSharding | None, jmesh: Any) -> Any | None:
    """The `NamedSharding` on `jmesh` that says exactly what `sharding` says (every dim closed,
    no priority, whole axes only), else None: what `jax.jit` itself can be given."""
    from jax.sharding import NamedSharding

    if sharding is None or any(not d.is_closed or d.priority is not None for d in sharding.dims):
        return None
    pspec = to_partition_spec(sharding)
    return None if pspec is None else NamedSharding(jmesh, pspec)


def explicit_part(sharding: TensorSharding, explicit: frozenset[str]) -> Any:
    """The `PartitionSpec` of the Explicit axes of `sharding` (the value's type under it)."""
    from jax.sharding import PartitionSpec

    entries: list[Any] = []
    for d in sharding.dims:
        names = tuple(a.name for a in d.axes if a.name in explicit)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


def mesh_mismatch(given: Mesh, context: Mesh, fun: str) -> ShardcError:
    """The error for a `mesh=` that differs from the mesh `jax.set_mesh` set around the call."""
    return wrong_mesh(
        f"shardc.jit({fun})", given.body(), context.body(), "the jax.set_mesh block it runs under",
        hint="call it outside that block, or leave out mesh= (it then takes the context's mesh)",
    )
