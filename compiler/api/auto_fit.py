"""Auto-sharding checked against XLA: plan, compile, read `memory_analysis`, re-plan if over.

The auto pass plans memory with a live-set estimate that does not see XLA's schedule, fusion
decisions or allocator. Where the mesh's devices are present, `shardc.jit(..., auto=True,
memory_budget=...)` compiles the pinned layout, and when XLA's figure (arguments + outputs +
temporaries - aliased) is over the budget, plans again with the target scaled by the measured
ratio (and up again when XLA's figure is well under, where a plan with more memory may move
fewer bytes), at most `ROUNDS` times; the plan that moves the fewest bytes among those XLA fits
is kept. The report says what each round measured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from shardc.api.propagate import propagate_module
from shardc.backend.xla import compile_text
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module
from shardc.passes.auto.cost import format_bytes, parse_size

ROUNDS = 4


def xla_memory(text: str, devices: list[Any]) -> int:
    """Per-device bytes XLA's `memory_analysis` gives the compiled module."""
    stats = compile_text(text, devices).get_compiled_memory_stats()
    return int(
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        + stats.temp_size_in_bytes
        - stats.alias_size_in_bytes
    )


def fit_to_budget(
    make_module: Callable[[], Module],
    options: Any,
    export_pin: Callable[[Module], str],
    devices: list[Any],
) -> tuple[Module, Any]:
    """Propagate with auto until XLA's memory of the pinned layout is within the budget."""
    budget = parse_size(options.memory_budget)
    headroom = options.auto_headroom / 100
    notes: list[str] = []
    best: tuple[float, Module, Any] | None = None
    tried: set[float] = set()
    for _ in range(ROUNDS):
        key = round(headroom, 3)
        if key in tried:
            break
        tried.add(key)
        module = make_module()
        opts = dataclasses.replace(options, auto_headroom=round(headroom * 100, 3))
        report = propagate_module(module, opts)
        used = xla_memory(export_pin(module), devices)
        planned = sum(f.objective for f in report.auto.functions) if report.auto else 0.0
        notes.append(
            f"auto: the plan made with {headroom:.0%} headroom moves {format_bytes(planned)}; "
            f"XLA's memory_analysis: {format_bytes(used)} ({used} bytes) for a budget of "
            f"{format_bytes(budget)}"
        )
        if used <= budget and (best is None or planned < best[0]):
            best = (planned, module, report)
        if 0.93 * budget <= used <= budget:
            break
        # scale the planning target by what XLA measured, towards the budget either way
        target = (1 - headroom) * budget * (0.98 * budget / used)
        headroom = max(-1.0, min(0.95, 1 - target / budget))
    if best is not None:
        _, module, report = best
        if report.auto is not None:
            report.auto.notes.extend(notes)
        return module, report
    raise ShardcError(
        f"memory budget {format_bytes(budget)} ({budget} bytes) is not met by XLA after "
        f"{len(notes)} plans: " + "; ".join(n.removeprefix("auto: ") for n in notes),
        hint="give a larger --memory-budget, or a mesh with more devices",
    )
