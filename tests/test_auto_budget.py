"""The memory budget is a promise checked by XLA: an Adam train step (parameters and both moments
in and out, the case where auto's layout needed twice its budget) through `shardc.jit(auto=True,
memory_budget=...)` on 8 virtual CPU devices, at a budget only the 2D expert layouts meet, one
Megatron meets too, and one every layout meets: XLA's memory_analysis of auto's program is
within the budget, its numbers are the unsharded ones, and it moves at most 1.1x (+256 B) the
collective bytes of the best expert layout that fits (each compiled by XLA)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from .auto_programs import Measured, Program, measure, mlp_adam_program, reference


@functools.cache
def _program() -> Program:
    return mlp_adam_program()


@functools.cache
def _experts() -> dict[str, Measured]:
    prog = _program()
    return {k: measure(prog, i, o) for k, (i, o) in prog.hand.items()}


@pytest.mark.parametrize("budget", [1_700_000, 7_000_000, 11_000_000])
def test_adam_step_fits_the_budget_by_xla_and_moves_no_more_than_experts(budget: int) -> None:
    prog = _program()
    experts = _experts()
    fitting = {k: m.bytes for k, m in experts.items() if m.memory <= budget}
    assert fitting and len(fitting) < len(experts) or budget == 11_000_000
    if budget == 11_000_000:
        assert len(fitting) == len(experts), "every expert layout meets the largest budget"
    auto = measure(prog, prog.batch_only, auto=True, memory_budget=budget)
    assert auto.memory <= budget, (auto.memory, budget)
    for got, want in zip(auto.outputs, reference(prog), strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
    assert auto.bytes <= 1.1 * min(fitting.values()) + 256, (auto.bytes, fitting)
