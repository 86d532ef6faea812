"""Auto-sharding checked against XLA: plan, compile, read `memory_analysis`, re-plan once if over.

The auto pass keeps its budget by the plan's memory (passes/auto/checked.py), a model of what
XLA compiles. Where the mesh's devices are present, `shardc.jit(..., auto=True,
memory_budget=...)` compiles the pinned layout and reads XLA's own figure (arguments + outputs
+ temporaries - aliased); when that is over the budget, auto plans once more for the budget
scaled by the ratio XLA measured, and that layout must fit by XLA, or the call fails naming the
smallest layout found (by the plan: one figure per program, whatever budget was asked). The
report says what each compile measured.
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
from shardc.passes.auto.checked import BudgetNotMet
from shardc.passes.auto.cost import format_bytes


def xla_memory(text: str, devices: list[Any]) -> int:
    """Per-device bytes XLA's `memory_analysis` gives the compiled module."""
    stats = compile_text(text, devices).get_compiled_memory_stats()
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
    export_pin: Callable[[Module], str],
    devices: list[Any],
) -> tuple[Module, Any]:
    """Propagate with auto; where XLA's memory of the pinned layout is over the budget, plan
    once more for a budget scaled by what XLA measured; fail where that is over too."""
    budget = AutoOptions.of(options).budget
    assert budget is not None
    notes: list[str] = []
    ask = budget
    for attempt in range(2):
        module = make_module()
        report = propagate_module(module, dataclasses.replace(options, memory_budget=ask))
        used = xla_memory(export_pin(module), devices)
        planned = getattr(report.auto, "planned_memory", None) if report.auto else None
        notes.append(
            f"auto: XLA's memory_analysis of the layout planned for {format_bytes(ask)}: "
            f"{format_bytes(used)} ({used} bytes; the plan said "
            f"{format_bytes(planned or 0)}) for a budget of {format_bytes(budget)}"
        )
        if used <= budget:
            if report.auto is not None:
                report.auto.notes.extend(notes)
            return module, report
        if attempt == 0:
            # the plan was low by used/planned: ask it for the budget less that error
            ask = max(1, int(budget * min(1.0, (planned or budget) / used) * 0.98))
    smallest = smallest_layout(make_module, options)
    raise ShardcError(
        f"memory budget {format_bytes(budget)} ({budget} bytes) is not met by XLA: "
        + "; ".join(n.removeprefix("auto: ") for n in notes)
        + f"; the smallest layout found needs {format_bytes(smallest)} ({smallest} bytes) by "
        "the plan",
        hint="give a larger memory_budget, or a mesh with more devices",
    )
