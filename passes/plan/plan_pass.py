"""The plan as a pipeline pass: after propagation, the collectives and memory of the layout.

`PipelineOptions(plan=PlanOptions(...))` adds it (and records propagation origins, which the
plan's causes read); the pass leaves the IR as it is; its results are the `Plan` and the IR
position of each reshard (`PlanRewrites`, for `explicit.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from shardc.dialect.ir import Module

from ..context import ALL, PassContext
from ..pin import Written
from ..propagation.report import PropagationReport
from .plan import PlanOptions, Rewrite, plan_with_rewrites


@dataclass
class PlanRewrites:
    """Where each reshard of the plan sits in the IR (what `--explicit` writes there)."""

    rewrites: list[Rewrite] = field(default_factory=list)


@dataclass(frozen=True)
class PlanPass:
    """Plan the communication of the propagated layout (results: `Plan`, `PlanRewrites`)."""

    name: ClassVar[str] = "plan"
    preserves: ClassVar[frozenset[type]] = ALL
    options: PlanOptions = field(default_factory=PlanOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        report = ctx.result(PropagationReport)
        origins = report.origins if report is not None else None
        plan, rewrites = plan_with_rewrites(module, origins, self.options, ctx.result(Written))
        if report is not None:  # the ops propagation found no rule for, as it names them
            plan.ruleless = dict(report.ops_without_rules)
        auto = report.auto if report is not None else None
        if auto is not None:
            plan.auto = auto.lines()
        ctx.put(plan)
        ctx.put(PlanRewrites(rewrites))
