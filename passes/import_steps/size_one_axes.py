"""`remove-size-one-axes`: axes of size 1 leave every sharding (Shardy's import does the same).

A dim that loses all its axes keeps its open/closed state; its priority goes with the axes
unless the dim is open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import Module
from shardc.dialect.op_views import rewrite_shardings
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding

from ..context import SAME_OPS, PassContext


@dataclass(frozen=True)
class RemoveSizeOneAxes:
    """The size-one-axis removal pass; no options."""

    name: ClassVar[str] = "remove-size-one-axes"
    preserves: ClassVar[frozenset[type]] = SAME_OPS

    def run(self, module: Module, ctx: PassContext) -> None:
        remove_size_one_axes(module)


def remove_size_one_axes(module: Module) -> None:
    """Drop the size-1 axes of each sharding's mesh from it (nothing to do on most modules)."""
    meshes = module.meshes
    ones = {name: {a.name for a in m.axes if a.size == 1} for name, m in meshes.items()}
    if not any(ones.values()):
        return

    def strip(s: TensorSharding) -> TensorSharding:
        if isinstance(s.mesh, Mesh):
            names = {a.name for a in s.mesh.axes if a.size == 1}
        else:
            names = ones.get(s.mesh, set())
        return without_axes(s, names) if names else s

    rewrite_shardings(module, strip)


def without_axes(s: TensorSharding, names: set[str]) -> TensorSharding:
    """`s` with the axes named in `names` removed."""

    def keep(axes: tuple[AxisRef, ...]) -> tuple[AxisRef, ...]:
        return tuple(a for a in axes if a.name not in names)

    dims = tuple(
        DimSharding(
            keep(d.axes), d.is_closed, d.priority if keep(d.axes) or not d.is_closed else None
        )
        for d in s.dims
    )
    return TensorSharding(s.mesh, dims, keep(s.replicated), keep(s.unreduced))
