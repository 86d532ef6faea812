"""The analyses of shard_map regions the checks share (passes/context.py `Analysis`)."""

from __future__ import annotations

from shardc.dialect.ir import Module

from ..context import Analysis, PassContext
from .regions import MANUAL_OP, ManualRegion, manual_regions
from .variance import VarianceResult, View, analyze_variance


class ManualRegions(Analysis[list[ManualRegion]]):
    """The module's manual regions, outer before inner (none without a manual computation)."""

    @classmethod
    def compute(cls, module: Module, ctx: PassContext) -> list[ManualRegion]:
        return manual_regions(module) if ctx.has_op(module, MANUAL_OP) else []


class ValueVariance(Analysis[VarianceResult]):
    """Which values vary along which manual axes (the VALUE view), for the checks."""

    @classmethod
    def compute(cls, module: Module, ctx: PassContext) -> VarianceResult:
        return analyze_variance(module, View.VALUE, ctx.analysis(ManualRegions, module))
