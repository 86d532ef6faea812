"""`manual-axes-cleanup`: a manual computation's manual axes in mesh order, size-1 axes dropped
(as Shardy's import leaves them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import Module, Operation
from shardc.dialect.op_views import MANUAL_COMPUTATION, ManualComputation

from ..context import SAME_OPS, OpList, PassContext


@dataclass(frozen=True)
class ManualAxesCleanup:
    """The manual-axes cleanup pass; no options."""

    name: ClassVar[str] = "manual-axes-cleanup"
    preserves: ClassVar[frozenset[type]] = SAME_OPS

    def run(self, module: Module, ctx: PassContext) -> None:
        if ctx.has_op(module, MANUAL_COMPUTATION):
            cleanup_manual_axes(module, ctx.analysis(OpList, module))


def cleanup_manual_axes(module: Module, ops: list[Operation] | None = None) -> None:
    """Sort every region's manual axes in mesh order and drop axes of size 1 (`ops`: the
    module's ops, `list(module.walk())`, when the caller has them)."""
    for op in module.walk() if ops is None else ops:
        if op.name != MANUAL_COMPUTATION:
            continue
        view = ManualComputation(op)
        mesh = view.mesh
        if mesh is None:
            continue
        names = [a for a in view.manual_axes if mesh.axis_sizes.get(a) != 1]
        names.sort(key=lambda n: mesh.axis_index.get(n, 0))
        if tuple(names) != view.manual_axes:
            view.manual_axes = tuple(names)
