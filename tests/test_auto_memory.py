"""One cost model: the memory auto's solve bounds is the plan's measure of the layout (its rows
are built from the plan's buffers: schedule, fusion, in-place reuse, alignment, reshard and
collective temporaries, arguments and results as XLA's memory_analysis counts them), so the
solve's peak estimate of the layout it chooses is the plan's memory of that layout."""

from __future__ import annotations

import pytest

import shardc

from .auto_programs import MESH, fresh, model_set, programs

# programs whose layouts the solve's own live-set sums got 7% to 25% off the plan's figure
NAMES = ["transformer train step", "transformer forward", "conv net Adam train step"]


@pytest.mark.parametrize("name", NAMES)
def test_the_solve_bounds_the_plans_memory_of_its_layout(name: str) -> None:
    prog = next(p for p in [*programs(), *model_set()] if p.name == name)
    f = shardc.jit(fresh(prog.fun), mesh=MESH, in_shardings=prog.batch_only, auto=True)
    auto = f.lower(*prog.args()).report.auto
    assert auto is not None and len(auto.functions) == 1
    assert auto.planned_memory > 0
    assert auto.functions[0].peak == auto.planned_memory
