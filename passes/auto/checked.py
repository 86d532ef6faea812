"""Auto checked by the plan: the layout auto chooses is measured with the communication plan
(`passes.plan`, the model of what XLA compiles), and the budget is a promise by that measure.

Auto's solver bounds memory with the plan's own measure of each layout (problem.py's rows are
built from the plan's buffers), but not all of it: what propagation lays out after the solve
(region bodies, ops without rules) and a reshard XLA computes once and reuses for later readers
are the plan's alone. So after each solve the module, with the chosen layout written and
propagated, is planned: its collective bytes and its memory (arguments + results +
temporaries, per device: XLA's memory_analysis measure) are the figures auto reports. With a
budget, the cheapest layout is solved first without memory rows (making them is most of a
budgeted solve): where the plan fits it, it is the answer, or where the plan puts it within
`PLAN_MARGIN` of the budget (the plan's error against XLA may put it over), the layout of
least memory among those moving as little (`solve.min_peak`). Else the solve bounded by the
budget follows; where the plan's memory of its layout is over the budget, auto solves again
from the layout before it, with that layout of the arguments ruled out and its target scaled
by half the measured ratio (at most `ROUNDS` solves). Where no solve fits, the smallest layout
found (the least memory `solve.min_peak` reaches from budget-independent seeds, whatever it
moves: one layout per program, whatever budget was asked) is taken if the plan says it fits
(`AutoReport.fell_back_to_smallest`, `smallest_memory`), else auto fails naming that layout's
figure (`BudgetNotMet.smallest`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module, Operation, Value

from ..plan.plan import plan_module
from .auto_sharding import AutoReport, AutoShardingPass, BudgetUnmet
from .cost import format_bytes
from .graph import Kept
from .solve import Solution

ROUNDS = 3
# how far the plan's memory may be from XLA's (issue 23: within 20%)
PLAN_MARGIN = 0.2


# the answers of the solves no budget enters, within `remembered` (`AutoShardingPass.memo`)
_SOLVED: ContextVar[dict[tuple[Any, ...], Solution] | None] = ContextVar("auto_solved",
                                                                        default=None)


@contextmanager
def remembered() -> Iterator[None]:
    """Within it, auto plans one program, for one or more budgets (shardc.jit's XLA check of
    the budget re-plans): the solves no budget enters (the cheapest layout, the smallest, the
    least memory at the fewest bytes) are made once and taken by later runs of the pass, and
    the caller explains the one report it keeps (`AutoReport.explain`; the pass does not)."""
    token = _SOLVED.set({})
    try:
        yield
    finally:
        _SOLVED.reset(token)


def solved() -> dict[tuple[Any, ...], Solution] | None:
    """The answers `remembered` keeps (None outside it): `AutoShardingPass.memo`."""
    return _SOLVED.get()


class BudgetNotMet(ShardcError):
    """No layout auto found fits the budget; `smallest`: the plan's memory of the smallest."""

    def __init__(self, smallest: int, message: str, *, hint: str | None = None):
        self.smallest = smallest
        super().__init__(message, hint=hint)


@dataclasses.dataclass(frozen=True)
class Planned:
    """The plan's figures of a layout: collective bytes and memory per device."""

    bytes: int
    memory: int


def planned(module: Module) -> Planned:
    """The plan's collective bytes and memory (arguments + results + peak - aliased, XLA's
    measure) of `module`."""
    plan = plan_module(module)
    return Planned(plan.total_bytes, plan.memory.total)


def _remap(kept: Kept, mapping: dict[int, Value]) -> Kept:
    """`kept` for a clone of its module (`mapping`: old value id -> the clone's value)."""
    values = {id(mapping[k]): s for k, s in kept.values.items() if k in mapping}
    return Kept(values, dict(kept.results), kept.everything_propagated)


class _Restorer:
    """Puts the module back to what it was before auto wrote anything, as often as asked; the
    ops replaced are held until the end so that no value id is reused while `Kept` maps ids."""

    def __init__(self, module: Module, kept: Kept):
        mapping: dict[int, Value] = {}
        self.pristine: Operation = module.op.clone(mapping)
        self.kept = _remap(kept, mapping)
        self.held: list[Operation] = []

    def restore(self, module: Module) -> Kept:
        mapping: dict[int, Value] = {}
        self.held.append(module.op)
        module.op = self.pristine.clone(mapping)
        return _remap(self.kept, mapping)


def run_checked(
    module: Module,
    kept: Kept | None,
    make: Callable[[float, bool], AutoShardingPass],
    budget: int | None,
    headroom: float,
    repropagate: Callable[[Module], None],
) -> AutoReport:
    """Auto on `module` (in place) with the plan's check described above. `make(headroom,
    smallest)` builds the solve's options, `repropagate` lays out what auto does not model."""
    if budget is None:
        return _cheapest(module, kept, make, headroom, repropagate)[0]
    spent: list[float] = []  # the seconds of every solve, whichever layout is kept

    def run(auto: AutoShardingPass, kept: Kept | None) -> AutoReport:
        report = auto.run(module, kept)
        spent.extend(f.seconds for f in report.functions)
        report.solve_seconds = sum(spent)
        return report

    saved = _Restorer(module, kept or Kept.propagated(module))
    # the cheapest layout first, solved without memory rows (making them is most of a budgeted
    # solve's time): where the plan fits it in the budget, a solve bounded by the budget
    # answers the same layout
    report, got = _cheapest(module, kept, make, headroom, repropagate)
    spent.append(report.solve_seconds)
    # (the budgeted solves start from that answer rather than solving it again)
    start = tuple((f.func, f.choice, f.shape) for f in report.functions)
    if got.memory <= min(1.0, 1 - headroom) * budget:
        note = (f"auto: the cheapest layout, solved without memory rows, fits the budget "
                f"({format_bytes(budget)}) by the plan: {format_bytes(got.memory)}")  # fmt: skip
        if got.memory > (1 - PLAN_MARGIN) * budget:
            # near the budget, where the plan's error may put XLA's figure over it: of the
            # layouts that move as little, the one of least memory
            report, got, note = _least_at_fewest(
                module, saved, make, headroom, repropagate, start, (report, got), note
            )
        for f in report.functions:
            f.budget = budget
        report.notes.append(note)
        return report
    notes = [
        f"auto: the cheapest layout (no memory bound) moves {format_bytes(got.bytes)} and needs "
        f"{format_bytes(got.memory)} by the plan, over the budget ({format_bytes(budget)})"
    ]  # the report's notes
    planned_notes: list[str] = []  # those of them by the plan's measure (the error names them)
    cuts: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    price = True
    rounds = 0
    while rounds < ROUNDS:
        kept = saved.restore(module)
        try:
            auto = dataclasses.replace(make(headroom, False), exclude=tuple(cuts), start=start,
                                       price_memory=price)  # fmt: skip
            report = run(auto, kept)
        except BudgetUnmet as e:
            # (kept in the report, left out of the error, which names one figure as the
            # smallest layout's)
            notes.append(f"auto: no layout fits {1 - headroom:.0%} of the budget by auto's "
                         f"estimate ({e.message.split(': ', 1)[-1]})")  # fmt: skip
            break
        repropagate(module)
        got = planned(module)
        planned_notes.append(
            f"auto: the layout solved with {headroom:.0%} headroom moves "
            f"{format_bytes(got.bytes)} and needs {format_bytes(got.memory)} by the plan "
            f"(budget {format_bytes(budget)})"
        )
        notes.append(planned_notes[-1])
        if got.memory <= budget:
            _record(report, got, notes)
            return report
        if price and any("priced" in f.method for f in report.functions):
            # the priced layout is over by the plan: this round once more by the rows' MILP
            price = False
            continue
        # rule that layout of the arguments out, and aim lower by half of what the plan
        # measured over the budget (the layouts between may fit the plan)
        cuts.extend((f.func, f.arg_choice) for f in report.functions if f.arg_choice)
        target = (1 - headroom) * budget * (0.98 * budget / got.memory) ** 0.5
        headroom = min(0.95, 1 - target / budget)
        rounds += 1
    kept = saved.restore(module)
    report = run(dataclasses.replace(make(headroom, True), start=start), kept)
    repropagate(module)
    got = planned(module)
    report.smallest_memory = got.memory
    if got.memory <= budget:
        notes.append(
            f"auto: took the smallest layout found: {format_bytes(got.memory)} by the plan, "
            f"moving {format_bytes(got.bytes)}"
        )
        report.fell_back_to_smallest = True
        _record(report, got, notes)
        return report
    raise BudgetNotMet(
        got.memory,
        f"memory budget {format_bytes(budget)} ({budget} bytes) cannot be met: the smallest "
        f"layout found needs {format_bytes(got.memory)} ({got.memory} bytes) per device by the "
        "plan (arguments + results + temporaries)"
        + "".join("; " + n.removeprefix("auto: ") for n in planned_notes),
        hint=f"give --memory-budget {got.memory} or more, or a mesh with more devices",
    )


def _least_at_fewest(
    module: Module,
    saved: _Restorer,
    make: Callable[[float, bool], AutoShardingPass],
    headroom: float,
    repropagate: Callable[[Module], None],
    start: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...],
    cheapest: tuple[AutoReport, Planned],
    note: str,
) -> tuple[AutoReport, Planned, str]:
    """Of the layouts moving no more than the cheapest one, the one of least memory
    (`solve.min_peak`), laid out on `module` where the plan says it needs less than the
    cheapest (`cheapest`: its report and figures, kept otherwise); with the note to report."""
    report, got = cheapest
    cheapest_op = module.op  # (`restore` holds it unchanged: no copy needed to go back)
    kept = saved.restore(module)
    least = dataclasses.replace(make(headroom, False), memory_budget=None, start=start,
                                least_peak_at_fewest=True).run(module, kept)  # fmt: skip
    repropagate(module)
    now = planned(module)
    least.solve_seconds = report.solve_seconds + sum(f.seconds for f in least.functions)
    if now.memory < got.memory and now.bytes <= got.bytes:
        _record(least, now)
        note += (f"; of the layouts moving as little, the one of least memory needs "
                 f"{format_bytes(now.memory)}")  # fmt: skip
        return least, now, note
    saved.held.append(module.op)
    module.op = cheapest_op
    report.solve_seconds = least.solve_seconds
    return report, got, note


def _cheapest(
    module: Module,
    kept: Kept | None,
    make: Callable[[float, bool], AutoShardingPass],
    headroom: float,
    repropagate: Callable[[Module], None],
) -> tuple[AutoReport, Planned]:
    """Auto without a budget on `module` (in place), and the plan's figures of its layout: the
    solve makes no memory rows, so its peak is the plan's memory of the layout."""
    report = dataclasses.replace(make(headroom, False), memory_budget=None).run(module, kept)
    repropagate(module)
    got = planned(module)
    _record(report, got)
    report.solve_seconds = sum(f.seconds for f in report.functions)
    for f in report.functions:
        if f.peak is None and len(report.functions) == 1:
            f.peak = got.memory
    return report, got


def _record(report: AutoReport, got: Planned, notes: list[str] = ()) -> None:  # type: ignore[assignment]
    report.planned_bytes = got.bytes
    report.planned_memory = got.memory
    report.notes.extend(notes)
