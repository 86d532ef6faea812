"""`manual-axes-cleanup`: a manual computation's manual axes in mesh order, size-1 axes dropped
(as Shardy's import leaves them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import Module
from shardc.dialect.op_views import ManualComputation

from ..context import PassContext


@dataclass(frozen=True)
class ManualAxesCleanup:
    """The manual-axes cleanup pass; no options."""

    name: ClassVar[str] = "manual-axes-cleanup"
    changes_ir: ClassVar[bool] = True

    def run(self, module: Module, ctx: PassContext) -> None:
        cleanup_manual_axes(module)


def cleanup_manual_axes(module: Module) -> None:
    """Sort every region's manual axes in mesh order and drop axes of size 1."""
    for op in module.walk():
        if op.name != "sdy.manual_computation":
            continue
        view = ManualComputation(op)
        mesh = view.mesh
        if mesh is None:
            continue
        names = [a for a in view.manual_axes if mesh.axis_sizes.get(a) != 1]
        names.sort(key=lambda n: mesh.axis_index.get(n, 0))
        if tuple(names) != view.manual_axes:
            view.manual_axes = tuple(names)
