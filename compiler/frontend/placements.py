"""Mesh-oriented placements (PyTorch DTensor style) <-> tensor-dim shardings.

One placement per mesh axis, in mesh order: `Shard(d)` splits tensor dim `d` over that axis,
`Replicate()` keeps full copies, `Partial()` holds partial sums (sdy `unreduced` axes).
Several mesh axes sharding one dim split it left to right by default (the first mesh axis is
major), as DTensor does; another order is given explicitly with `order={dim: ("tp", "dp")}`
(major to minor) or with DTensor's `StridedShard(d, split_factor)`, whose split factor must be
the product of the sizes of the later mesh axes that shard `d` (the strided axis then comes
after them). Uneven sizes are fine: both sides split in `ceil(size / shards)` blocks.

What cannot be expressed raises `ShardcError` with the reason: a sub-axis (placements split a
tensor by whole mesh axes), a `Partial` other than a sum, a split factor that is not such a
product, an axis given twice in an order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shardc.dialect.errors import ShardingError, count_mismatch
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding
from shardc.frontend.specs import MESH_SYMBOL, Spec


@dataclass(frozen=True)
class Shard:
    """Split tensor dim `dim` over this mesh axis."""

    dim: int

    def __repr__(self) -> str:
        return f"Shard({self.dim})"


@dataclass(frozen=True)
class StridedShard:
    """DTensor's strided shard: `dim` split over this axis after `split_factor` later shards."""

    dim: int
    split_factor: int

    def __repr__(self) -> str:
        return f"StridedShard({self.dim}, split_factor={self.split_factor})"


@dataclass(frozen=True)
class Replicate:
    """A full copy along this mesh axis."""

    def __repr__(self) -> str:
        return "Replicate()"


@dataclass(frozen=True)
class Partial:
    """Partial results along this mesh axis, to be reduced with `reduce_op` (only "sum")."""

    reduce_op: str = "sum"

    def __repr__(self) -> str:
        return "Partial()" if self.reduce_op == "sum" else f"Partial({self.reduce_op!r})"


Placement = Shard | StridedShard | Replicate | Partial


def _axis_name(mesh: Mesh, key: str | int) -> str:
    if isinstance(key, int):
        if not 0 <= key < len(mesh.axes):
            raise ShardingError(f"mesh dim {key} is out of range for mesh {mesh.body()}")
        return mesh.axes[key].name
    mesh.size_of(key)
    return key


def placements_to_sharding(
    placements: Sequence[Placement],
    mesh: Mesh,
    rank: int,
    order: Mapping[int, Sequence[str | int]] | None = None,
    mesh_ref: str | Mesh = MESH_SYMBOL,
) -> TensorSharding:
    """The tensor-dim sharding of `placements` (one per mesh axis) for a tensor of `rank`."""
    given = f"placements {tuple(placements)!r}"
    if len(placements) != len(mesh.axes):
        raise count_mismatch(
            given, len(placements), "placements", len(mesh.axes), f"axes of mesh {mesh.body()}",
            hint="give one placement per mesh axis, in mesh order", cls=ShardingError,
        )
    per_dim: dict[int, list[str]] = {}
    strided: dict[str, int] = {}
    unreduced: list[AxisRef] = []
    for axis, p in zip(mesh.axes, placements, strict=True):
        if isinstance(p, Shard | StridedShard):
            d = p.dim + rank if p.dim < 0 else p.dim
            if not 0 <= d < rank:
                raise ShardingError(
                    f"{given}: {p!r} on mesh axis {axis.name!r} names dim {p.dim}, but the "
                    f"tensor has rank {rank}"
                )
            per_dim.setdefault(d, []).append(axis.name)
            if isinstance(p, StridedShard):
                strided[axis.name] = p.split_factor
        elif isinstance(p, Partial):
            if p.reduce_op != "sum":
                raise ShardingError(
                    f"{given}: {p!r} on mesh axis {axis.name!r} cannot be expressed: sdy "
                    "unreduced axes hold partial sums only",
                    hint="reduce it first, or use Partial() (sum)",
                )
            unreduced.append(AxisRef(axis.name))
        elif not isinstance(p, Replicate):
            raise ShardingError(f"{given}: {p!r} is not a placement (Shard, Replicate, Partial)")
    for d, names in per_dim.items():
        per_dim[d] = _apply_strided(names, strided, mesh, given, d)
    for d, keys in (order or {}).items():
        wanted = [_axis_name(mesh, k) for k in keys]
        if sorted(wanted) != sorted(per_dim.get(d, [])) or len(set(wanted)) != len(wanted):
            raise ShardingError(
                f"{given}: order[{d}] = {tuple(keys)} must list exactly the mesh axes that "
                f"shard dim {d}: {tuple(per_dim.get(d, []))}"
            )
        per_dim[d] = wanted
    dims = tuple(DimSharding(tuple(AxisRef(n) for n in per_dim.get(d, []))) for d in range(rank))
    return TensorSharding(mesh_ref, dims, (), tuple(unreduced))


def _apply_strided(
    names: list[str], strided: dict[str, int], mesh: Mesh, given: str, dim: int
) -> list[str]:
    out = list(names)
    for name in names:
        factor = strided.get(name)
        if factor is None:
            continue
        later = out[out.index(name) + 1 :]
        product = 1
        for other in later:
            product *= mesh.size_of(other)
            if product == factor:
                out.remove(name)
                out.insert(out.index(other) + 1, name)
                break
        else:
            if factor != 1:
                raise ShardingError(
                    f"{given}: StridedShard({dim}, split_factor={factor}) on mesh axis "
                    f"{name!r} cannot be expressed: {factor} is not the size product of the "
                    "later mesh axes that shard the same dim"
                )
    return out


def sharding_to_placements(
    sharding: TensorSharding, mesh: Mesh
) -> tuple[tuple[Placement, ...], dict[int, tuple[str, ...]]]:
    """(one placement per mesh axis, order of dims not split in mesh order).

    Open dims and priorities are dropped (placements describe a layout, not a wish).
    """
    by_axis: dict[str, Placement] = {}
    order: dict[int, tuple[str, ...]] = {}
    for d, dim in enumerate(sharding.dims):
        for ref in dim.axes:
            if ref.sub is not None:
                raise ShardingError(
                    f"{sharding.body()} cannot be written as placements: dim {d} uses sub-axis "
                    f"{ref}, and a placement splits a tensor by whole mesh axes",
                    hint="use a mesh with that sub-axis as an axis of its own",
                )
            by_axis[ref.name] = Shard(d)
        names = [a.name for a in dim.axes]
        if names != sorted(names, key=lambda n: mesh.axis_index[n]):
            order[d] = tuple(names)
    for ref in sharding.unreduced:
        if ref.sub is not None:
            raise ShardingError(
                f"{sharding.body()} cannot be written as placements: unreduced sub-axis {ref}"
            )
        by_axis[ref.name] = Partial()
    return tuple(by_axis.get(a.name, Replicate()) for a in mesh.axes), order


@dataclass(frozen=True)
class Placements:
    """A spec written as placements; accepted wherever a spec is (in/out shardings, constrain)."""

    placements: tuple[Any, ...]
    order: Mapping[int, Sequence[str | int]] | None = field(default=None, hash=False)

    def __init__(self, *placements: Any, order: Mapping[int, Sequence[str | int]] | None = None):
        if len(placements) == 1 and isinstance(placements[0], list | tuple):
            placements = tuple(placements[0])
        object.__setattr__(self, "placements", tuple(placements))
        object.__setattr__(self, "order", order)

    def to_dim_shardings(self, mesh: Mesh, rank: int) -> Spec:
        s = placements_to_sharding(self.placements, mesh, rank, self.order)
        return Spec(s.dims, (), s.unreduced, text=repr(self))

    def __repr__(self) -> str:
        extra = f", order={dict(self.order)}" if self.order else ""
        return f"Placements({', '.join(map(repr, self.placements))}{extra})"
