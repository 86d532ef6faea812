"""Automatic sharding as pipeline passes (pipeline.py: propagate -> auto -> ... -> export).

`PropagationOptions(auto=True)` adds two passes around propagation:
- `auto-snapshot` (before Shardy's import steps): records the user's annotations, which auto
  keeps as written (unless `auto_keep_propagated`, or when annotations carry priorities: then
  what propagation settled stays too, since priorities say how conflicts are settled);
- `auto` (after propagate): the cost-based choice of what no annotation decided
  (`auto_sharding.py`), then propagation once more so that what auto does not model (region
  bodies, ops without rules) follows. Its report lands in the run's `PropagationReport` (`.auto`) and, with
  `debug_origins`, its explanation in that report's `explanation`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.errors import ShardcError, not_one_of
from shardc.dialect.ir import Module

from ..context import ALL, NONE, PassContext
from ..pin import Written
from ..propagation.driver import propagate
from ..propagation.options import PropagationOptions
from ..propagation.report import PropagationReport
from .auto_sharding import SOLVERS, AutoShardingPass
from .checked import run_checked, solved
from .cost import parse_size
from .graph import Kept

_PRIORITIES_NOTE = (
    "auto: annotations carry priorities, so every dim propagation decided stays "
    "(as with --auto-keep-propagated) and auto only fills what nothing reached"
)


@dataclass(frozen=True)
class AutoOptions:
    """The auto pass's options, checked when built: `memory_budget` in bytes (given as bytes or
    "64MiB"; None: no budget), `axis_cost` ("data=4,model=1"), `time_limit` (wall-clock
    seconds for the exact solve; None: the solvers' deterministic limits only, so the layout
    does not depend on the machine's load), `headroom` (percent of the budget the plan keeps free), `solver` ("highs" or
    "cp-sat"), `keep_propagated` (keep every dim propagation decided, not only annotations)."""

    memory_budget: int | str | None = None
    axis_cost: str = ""
    time_limit: float | None = None
    headroom: float = 0.0
    solver: str = "highs"
    keep_propagated: bool = False

    def __post_init__(self) -> None:
        budget = self.memory_budget
        if budget in ("", 0):
            budget = None
        if budget is not None:
            budget = parse_size(budget)
        object.__setattr__(self, "memory_budget", budget)
        if self.solver not in SOLVERS:
            raise not_one_of(
                "auto solver", self.solver, SOLVERS, hint="use highs (the default) or cp-sat"
            )
        if (self.time_limit is not None and self.time_limit <= 0) or not -100 <= self.headroom < 100:
            raise ShardcError(
                f"auto time limit {self.time_limit} s / headroom {self.headroom}% out of range",
                hint="a positive time limit, a headroom under 100 percent (negative: plan "
                "over the budget, as shardc.jit's fit to XLA's figures may)",
            )

    @property
    def budget(self) -> int | None:
        """The memory budget in bytes (None: no budget)."""
        return self.memory_budget  # type: ignore[return-value]

    @staticmethod
    def of(options: PropagationOptions) -> AutoOptions:
        """The auto options `PropagationOptions(auto=True, ...)` carries."""
        return AutoOptions(
            memory_budget=options.memory_budget,
            axis_cost=options.axis_cost,
            time_limit=float(options.auto_time_limit) if options.auto_time_limit else None,
            headroom=float(options.auto_headroom),
            solver=options.auto_solver,
            keep_propagated=options.auto_keep_propagated,
        )


@dataclass
class AutoKept:
    """What `auto-snapshot` recorded for `auto`: the annotations auto keeps (None: every dim
    propagation decides) and a note saying why where it keeps more."""

    kept: Kept | None = None
    note: str | None = None


@dataclass(frozen=True)
class AutoSnapshot:
    """Record the annotations auto must keep, before anything adds to them (`AutoKept`)."""

    name: ClassVar[str] = "auto-snapshot"
    preserves: ClassVar[frozenset[type]] = ALL
    options: AutoOptions = dataclasses.field(default_factory=AutoOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        if self.options.keep_propagated:
            ctx.put(AutoKept())
            return
        kept = Kept.snapshot(module)
        if kept.has_priorities():
            ctx.put(AutoKept(None, _PRIORITIES_NOTE))
            return
        ctx.put(AutoKept(kept))


@dataclass(frozen=True)
class AutoPass:
    """Choose the shardings no annotation decided, within the memory budget; then propagate
    again (with `propagation`, what propagation ran with) so that what auto does not model
    follows. Its report goes into the run's `PropagationReport` (`.auto`)."""

    name: ClassVar[str] = "auto"
    # it adds ops (the reshards it relies on, made explicit) and may rebuild the body
    preserves: ClassVar[frozenset[type]] = NONE
    options: AutoOptions = dataclasses.field(default_factory=AutoOptions)
    propagation: PropagationOptions = dataclasses.field(default_factory=PropagationOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        o = self.options
        snapshot = ctx.result(AutoKept) or AutoKept()
        again = dataclasses.replace(self.propagation, debug_origins=False, dump_rounds=False, auto=False)
        warnings: list[str] = []

        def make(headroom: float, smallest: bool) -> AutoShardingPass:
            return AutoShardingPass(
                memory_budget=o.budget, axis_cost=o.axis_cost, time_limit=o.time_limit,
                solver=o.solver, headroom=headroom, explain=True, smallest=smallest,
                memo=solved(),
            )  # fmt: skip

        def repropagate(m: Module) -> None:
            warnings[:] = propagate(m, again).warnings

        auto = run_checked(module, snapshot.kept, make, o.budget, o.headroom / 100, repropagate)
        if solved() is None:  # (within `remembered` the caller explains the report it keeps)
            auto.explain()  # (the layout kept only: the other solves' are never explained)
        written = ctx.result(Written)
        if written is not None:  # (a `pin` export follows: XLA is handed auto's entry layouts)
            ctx.put(dataclasses.replace(written, keep_entries=True))
        if snapshot.note is not None:
            auto.notes.insert(0, snapshot.note)
        report = ctx.result(PropagationReport)
        if report is None:
            return
        report.auto = auto
        report.warnings.extend(w for w in warnings if w not in report.warnings)
        if self.propagation.debug_origins:
            report.explanation.extend(auto.lines())
