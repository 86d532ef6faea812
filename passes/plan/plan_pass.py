"""The plan as a pipeline pass: after propagation, the collectives and memory of the layout.

`PipelineOptions(plan=PlanOptions(...))` adds it (and records propagation origins, which the
plan's causes read); the pass leaves the IR as it is and puts the `Plan` and the IR position of
each reshard (for `explicit.py`) on the pipeline's context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from shardc.dialect.ir import Module

from ..context import PassContext
from .plan import PlanOptions, plan_with_rewrites


@dataclass(frozen=True)
class PlanPass:
    """Plan the communication of the propagated layout (`ctx.plan`, `ctx.plan_rewrites`)."""

    name: ClassVar[str] = "plan"
    changes_ir: ClassVar[bool] = False
    options: PlanOptions = field(default_factory=PlanOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        origins = ctx.report.origins if ctx.report is not None else None
        ctx.plan, ctx.plan_rewrites = plan_with_rewrites(module, origins, self.options)
        if ctx.report is not None:  # the ops propagation found no rule for, as it names them
            ctx.plan.ruleless = dict(ctx.report.ops_without_rules)
        auto = ctx.report.auto if ctx.report is not None else None
        if auto is not None:
            ctx.plan.auto = auto.lines()
