"""The least-peak search (`solve.min_peak`): the smallest layout auto names, one per problem,
never above a layout its budget-independent seeds or a budgeted solve reach, and the
tie-break among the layouts that move the fewest bytes."""

from __future__ import annotations

import numpy as np
import pytest

from shardc.passes.auto import solve as solve_mod
from shardc.passes.auto.problem import Problem
from shardc.passes.auto.solve import min_peak, solve, solve_greedy


def _two_rows() -> Problem:
    # node 0: strategies 0 and 1 move nothing, 2 moves 5 B and holds least; node 1's strategy
    # 0 weighs on the second row, 1 on the first
    return Problem(
        num_strategies=[3, 2],
        node_cost=[[0, 0, 5], [0, 0]],
        edges={},
        value_node=[0, 1],
        value_bytes=[[100, 50, 10], [40, 30]],
        rows=[
            {(0, 0): 100, (0, 1): 50, (0, 2): 10, (1, 0): 10, (1, 1): 30},
            {(1, 0): 40, (1, 1): 5},
        ],
    )


def test_the_least_peak_and_the_least_peak_at_the_fewest_bytes() -> None:
    p = _two_rows()
    least = min_peak(p)
    assert least.peak == 40 and least.choice[0] == 2 and p.peak_memory(least.choice) == 40
    # of the layouts moving nothing, node 0's smaller one with node 1 off the first row
    tie = min_peak(p, fewest_bytes=True)
    assert tie.choice == [1, 0] and tie.objective == 0 and tie.peak == 60


def _random(seed: int) -> Problem:
    """A chain of nodes with 3 strategies each, random bytes and memory, 4 live sets; a node
    read in another strategy than its own makes a copy where both are live (a reshard
    temporary), so the least memory of each node alone is not the least peak."""
    rng = np.random.default_rng(seed)
    n = 10
    value_bytes = [[int(b) for b in rng.integers(1, 100, 3)] for _ in range(n)]
    copies = [[[0 if k == kv else int(rng.integers(0, 120)) for kv in range(3)]
               for k in range(3)] for _ in range(n - 1)]  # fmt: skip
    rows: list[dict[tuple[int, ...], int]] = []
    for r in range(4):
        live = range(r * 2, min(n, r * 2 + 5))
        row: dict[tuple[int, ...], int] = {
            (i, k): value_bytes[i][k] for i in live for k in range(3)
        }
        for i in live:
            if i + 1 in live:
                row.update({(i, i + 1, k, kv): copies[i][k][kv]
                            for k in range(3) for kv in range(3) if copies[i][k][kv]})  # fmt: skip
        rows.append(row)
    return Problem(
        num_strategies=[3] * n,
        node_cost=[[float(c) for c in rng.integers(0, 50, 3)] for _ in range(n)],
        edges={
            (i, i + 1): [[float(c) for c in rng.integers(0, 30, 3)] for _ in range(3)]
            for i in range(n - 1)
        },
        value_node=list(range(n)),
        value_bytes=value_bytes,
        rows=rows,
    )


@pytest.mark.parametrize("seed", range(4))
def test_the_least_peak_is_never_above_its_seeds_or_a_budgeted_solve(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _random(seed)
    cheapest = solve(p, None)
    greedy = solve_greedy(p, None, memory_only=True)
    seeds = min(p.peak_memory(cheapest.choice), p.peak_memory(greedy.choice))
    least = min_peak(p)
    assert least.peak == p.peak_memory(least.choice) <= seeds
    # the same answer again (deterministic limits only)
    assert min_peak(p).choice == least.choice
    # no budgeted solve finds a smaller layout
    for budget in range(least.peak - 1, least.peak - 60, -7):
        assert not solve(p, budget).feasible
    # the priced search alone (a problem too big for the budgeted descent) is not above its
    # seeds either
    monkeypatch.setattr(solve_mod, "PEAK_EXACT_LIMIT", 0)
    priced = min_peak(p)
    assert least.peak <= priced.peak == p.peak_memory(priced.choice) <= seeds
