"""Automatic sharding as pipeline passes (design.md: propagate -> auto -> ... -> export).

`PropagationOptions(auto=True)` adds two passes around propagation:
- `auto-snapshot` (before Shardy's import steps): records the user's annotations, which auto
  keeps as written (unless `auto_keep_propagated`, or when annotations carry priorities: then
  what propagation settled stays too, since priorities say how conflicts are settled);
- `auto` (after propagate): the cost-based choice of what no annotation decided
  (`auto_sharding.py`), then propagation once more so that what auto does not model (region
  bodies, ops without rules) follows. Its report lands in `ctx.report.auto` and, with
  `debug_origins`, its explanation in `ctx.report.explanation`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import Module

from ..context import PassContext
from ..propagation.options import PropagationOptions

_PRIORITIES_NOTE = (
    "auto: annotations carry priorities, so every dim propagation decided stays "
    "(as with --auto-keep-propagated) and auto only fills what nothing reached"
)


@dataclass(frozen=True)
class AutoSnapshot:
    """Record the annotations auto must keep, before anything adds to them (`ctx.auto_kept`)."""

    name: ClassVar[str] = "auto-snapshot"
    changes_ir: ClassVar[bool] = False
    options: PropagationOptions = dataclasses.field(default_factory=PropagationOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        from .graph import Kept

        ctx.auto_kept = None
        ctx.auto_note = None
        if self.options.auto_keep_propagated:
            return
        kept = Kept.snapshot(module)
        if kept.has_priorities():
            ctx.auto_note = _PRIORITIES_NOTE
            return
        ctx.auto_kept = kept


@dataclass(frozen=True)
class AutoPass:
    """Choose the shardings no annotation decided, within the memory budget; re-propagate."""

    name: ClassVar[str] = "auto"
    changes_ir: ClassVar[bool] = True
    options: PropagationOptions = dataclasses.field(default_factory=PropagationOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        from ..propagation.driver import propagate
        from .auto_sharding import AutoShardingPass

        o = self.options
        auto = AutoShardingPass(
            memory_budget=o.memory_budget,
            axis_cost=o.axis_cost,
            time_limit=float(o.auto_time_limit),
            solver=o.auto_solver,
            headroom=o.auto_headroom / 100,
            explain=True,
        ).run(module, ctx.auto_kept)  # type: ignore[arg-type]
        if ctx.auto_note is not None:
            auto.notes.insert(0, ctx.auto_note)
        again = dataclasses.replace(o, debug_origins=False, dump_rounds=False, auto=False)
        warnings = propagate(module, again).warnings
        report = ctx.report
        if report is None:
            return
        report.auto = auto
        report.warnings.extend(w for w in warnings if w not in report.warnings)
        if o.debug_origins:
            report.explanation.extend(auto.lines())
