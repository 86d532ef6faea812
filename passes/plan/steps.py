"""The plan's collective steps and per-device sizes: plain data shared by the byte models
(`cost.py`, Shardy's explicit reshards; `xla_reshard.py`, XLA's partitioner)."""

from __future__ import annotations

from dataclasses import dataclass

from shardc.dialect.layout_math import local_bytes, local_shape
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding

__all__ = ["local_bytes", "local_shape"]  # (the layout arithmetic, for the byte models)

ALL_GATHER = "all-gather"
ALL_SLICE = "all-slice"
ALL_REDUCE = "all-reduce"
REDUCE_SCATTER = "reduce-scatter"
ALL_TO_ALL = "all-to-all"
COLLECTIVE_PERMUTE = "collective-permute"
KINDS = (ALL_GATHER, ALL_SLICE, ALL_REDUCE, REDUCE_SCATTER, ALL_TO_ALL, COLLECTIVE_PERMUTE)


@dataclass(frozen=True, slots=True)
class Step:
    """One collective of a reshard or reduction: its kind, mesh axes, bytes and the layout after.

    `after` is the tensor's layout once the collective ran (`layout_math.axes_layout`: closed
    dims on the byte model's mesh); `per_dim` holds the axes gathered or sliced on each dim
    (all-gather, all-slice, reduce-scatter) in the same form, `move` the source and target dim
    of an all-to-all: what an explicit `sdy` collective op needs."""

    kind: str
    axes: tuple[AxisRef, ...]
    bytes: int
    after: TensorSharding
    per_dim: TensorSharding | None = None
    move: tuple[int, int] | None = None


def merge_axes(axes: list[AxisRef] | tuple[AxisRef, ...], mesh: Mesh) -> tuple[AxisRef, ...]:
    """Consecutive sub-axes of one axis merged (`"x":(1)2, "x":(2)2` -> `"x"` on x=4)."""
    out: list[AxisRef] = []
    for a in axes:
        if out and out[-1].can_merge(a, mesh):
            out[-1] = out[-1].merge(a, mesh)
        else:
            out.append(a)
    return tuple(out)


def sort_axes(axes: list[AxisRef] | tuple[AxisRef, ...], mesh: Mesh) -> tuple[AxisRef, ...]:
    """Axes in mesh order, consecutive sub-axes merged (how collectives name their axes)."""
    return merge_axes(
        sorted(axes, key=lambda a: (mesh.axis_index.get(a.name, 0), a.pre_size())), mesh
    )
