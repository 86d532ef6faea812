"""Auto-sharding checked against XLA: plan, compile, read `memory_analysis`, re-plan once if over.

The auto pass keeps its budget by the plan's memory (passes/auto/checked.py), a model of what
XLA compiles. Where the mesh's devices are present, `shardc.jit(..., auto=True,
memory_budget=...)` compiles the pinned layout as `.compile()` compiles it (and `.compile()`
returns that compile for the layout kept) and reads XLA's own figure (arguments + outputs
+ temporaries - aliased), which is the promise there: where it differs from the plan's, auto
plans once more for the budget corrected by the plan's error (where the plan fits nothing, its
smallest layout is measured first; where auto kept its smallest layout and XLA measured it no
more than the plan did, for the budget widened by the plan's margin), and the layout XLA fits
that moves fewest bytes is kept; else the call fails naming the smallest layout found (by the
plan: one figure per program, whatever budget was asked). The report says what each compile
measured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from shardc.api.propagate import propagate_module
from shardc.backend.xla import compile_text
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module
from shardc.passes.auto.auto_pass import AutoOptions
from shardc.passes.auto.checked import PLAN_MARGIN, BudgetNotMet, remembered
from shardc.passes.auto.cost import format_bytes


def xla_memory(text: str, devices: list[Any]) -> int:
    """Per-device bytes XLA's `memory_analysis` gives the compiled module."""
    return analysed_memory(compile_text(text, devices).get_compiled_memory_stats())


def analysed_memory(stats: Any) -> int:
    """The bytes per device of a compiled program's memory stats: arguments + outputs +
    temporaries - aliased (what the budget bounds)."""
    return int(
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        + stats.temp_size_in_bytes
        - stats.alias_size_in_bytes
    )


def smallest_layout(make_module: Callable[[], Module], options: Any) -> int:
    """The plan's memory of the smallest layout auto finds for the program (the figure its
    budget errors name, whatever the budget)."""
    try:
        propagate_module(make_module(), dataclasses.replace(options, memory_budget=1))
    except BudgetNotMet as e:
        return e.smallest
    return 1


def fit_to_budget(
    make_module: Callable[[], Module],
    options: Any,
    measure: Callable[[Module], int],
) -> tuple[Module, Any]:
    """Propagate with auto and measure the layout with XLA (`measure`: XLA's memory of a
    propagated module's layout, arguments + outputs + temporaries - aliased). Where the plan
    finds nothing within the budget, the smallest layout it found is measured instead (the
    plan may overestimate).
    Where XLA's figure is over the budget, or the plan's bound and overestimated, plan once more
    for the budget corrected by the plan's error, and keep the layout that moves fewest bytes
    among those XLA fits; fail if none does."""
    with remembered():  # (the attempts plan one program: budget-free solves made once)
        return _fit(make_module, options, measure)


def _fit(
    make_module: Callable[[], Module],
    options: Any,
    measure: Callable[[Module], int],
) -> tuple[Module, Any]:
    """`fit_to_budget`'s attempts."""
    budget = AutoOptions.of(options).budget
    assert budget is not None
    notes: list[str] = []
    fits: list[tuple[int, Module, Any]] = []
    fell_back: list[bool] = []  # per attempt measured: auto kept its smallest layout
    spent: list[float] = []  # the seconds of every attempt's solves

    priced: list[bool] = []  # per attempt measured: auto priced memory (`solve._priced`)
    # the plan's memory of the smallest layout, where an attempt found it (one per program)
    smallest: list[int] = []

    def attempt(ask: int, rows: bool = False) -> tuple[int, int] | None:
        """(XLA's memory, the plan's) of the layout planned for `ask` (`rows`: by the rows'
        MILP, never priced); None if none fits it."""
        module = make_module()
        solver = {"auto_solver": "highs-rows"} if rows else {}
        try:
            report = propagate_module(module, dataclasses.replace(options, memory_budget=ask,
                                                                  **solver))  # fmt: skip
        except BudgetNotMet as e:
            notes.append(f"auto: the plan fits no layout in {format_bytes(ask)} (its smallest "
                         f"needs {format_bytes(e.smallest)})")  # fmt: skip
            smallest.append(e.smallest)
            return None
        spent.append(getattr(report.auto, "solve_seconds", 0.0))
        used = measure(module)
        planned = getattr(report.auto, "planned_memory", None) or used
        fell_back.append(bool(getattr(report.auto, "fell_back_to_smallest", False)))
        if getattr(report.auto, "smallest_memory", None) is not None:
            smallest.append(report.auto.smallest_memory)
        functions = getattr(report.auto, "functions", [])
        priced.append(any("priced" in f.method for f in functions))
        notes.append(
            f"auto: XLA's memory_analysis of the layout planned for {format_bytes(ask)}: "
            f"{format_bytes(used)} ({used} bytes; the plan said {format_bytes(planned)}) for a "
            f"budget of {format_bytes(budget)}"
        )
        if used <= budget:
            fits.append((getattr(report.auto, "planned_bytes", 0) or 0, module, report))
        return used, planned

    got = attempt(budget)
    if got is not None and not fits and priced[-1] and options.auto_solver == "highs":
        # the layout priced for the budget is over by XLA: the rows' MILP, as for a smaller
        # problem, before the budget is corrected by the plan's error
        got = attempt(budget, rows=True)
    if got is None:
        got = attempt(smallest[0])
    # plan once more where XLA measured more than the budget, or where the plan's budget bound
    # (its figure near the budget) and it overestimated: a cheaper layout may fit XLA
    if got is not None and (not fits or (got[1] > 0.95 * budget and got[1] > 1.05 * got[0])):
        used, planned = got
        # the plan's memory was off by planned/used: ask it for the budget corrected by that
        corrected = max(1, int(budget * planned / used * 0.98))
        attempt(corrected)
    elif got is not None and fell_back[-1] and got[0] <= got[1]:
        # the plan ruled out every layout the solves chose and auto kept its smallest one, which
        # XLA fits; the plan may have overestimated the ones ruled out (its memory is within
        # PLAN_MARGIN of XLA's): plan once more for the budget widened by that margin. Not
        # where XLA measured the smallest above the plan: the plan under-counts there, and the
        # layouts it ruled out are likely over by XLA too (the conv net's Adam step at 270 KB:
        # its smallest layout is 175.2 KiB by the plan and 249.3 by XLA; the widened budget's
        # layout 316.3 KiB by the plan and 334.4 by XLA)
        attempt(int(budget * (1 + PLAN_MARGIN)))
    if fits:
        _, module, report = min(fits, key=lambda f: f[0])
        if report.auto is not None:
            report.auto.notes.extend(notes)
            report.auto.solve_seconds = sum(spent)
            report.auto.explain()  # (the attempts measured and dropped are never explained)
        return module, report
    least = smallest[0] if smallest else smallest_layout(make_module, options)
    raise ShardcError(
        f"memory budget {format_bytes(budget)} ({budget} bytes) is not met by XLA: "
        + "; ".join(n.removeprefix("auto: ") for n in notes)
        + f"; the smallest layout found needs {format_bytes(least)} ({least} bytes) by "
        "the plan",
        hint="give a larger memory_budget, or a mesh with more devices",
    )
