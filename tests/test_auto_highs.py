"""The strategy problem's linear program for HiGHS (passes/auto/highs_lp.py) and the numpy
helpers around it: checked against brute force on small problems with every kind of edge
(tied nodes, tables that depend on one side only, cuts, memory terms over two nodes)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shardc.passes.auto.problem import Problem, quotient
from shardc.passes.auto.solve import _with_price, solve_milp


def _problem(seed: int) -> Problem:
    """Six nodes of 2-3 strategies, nodes 4 and 5 tied to 2; a table of each kind; memory
    rows with single and pair terms."""
    rng = np.random.default_rng(seed)
    ns = [3, 2, 3, 2, 3, 3]
    cost = [[float(rng.integers(0, 40)) for _ in range(k)] for k in ns]

    def table(u: int, v: int) -> list[list[float]]:
        return [[float(rng.integers(0, 30)) for _ in range(ns[v])] for _ in range(ns[u])]

    edges = {(0, 1): table(0, 1), (1, 2): table(1, 2), (0, 3): table(0, 3), (3, 4): table(3, 4),
             (2, 5): table(2, 5)}  # fmt: skip
    edges[(2, 3)] = [[float(x) for x in rng.integers(0, 20, ns[3])]] * ns[2]  # v's side only
    edges[(1, 3)] = [[float(rng.integers(0, 20))] * ns[3] for _ in range(ns[1])]  # u's only
    edges[(4, 5)] = table(4, 5)  # within the tied class: its diagonal
    rep = [0, 1, 2, 3, 2, 2]
    rows = []
    for i in range(4):
        row: dict[tuple[int, ...], int] = {}
        for n in (0, 1, 2, 3):
            if rng.random() < 0.7:
                for k in range(ns[n]):
                    row[(n, k)] = int(rng.integers(1, 60))
        if i % 2:
            row[(0, 2, 1, 2)] = int(rng.integers(10, 80))
            row[(3, 1, 0, 1)] = int(rng.integers(10, 80))
        rows.append(row)
    return Problem(ns, cost, edges, [], [], rep=rep, rows=rows,
                   cuts=[[(0, 0), (1, 1)]] if seed % 2 else [])  # fmt: skip


def _every(p: Problem) -> list[list[int]]:
    """Every choice per node that gives tied nodes their representative's choice and breaks
    no cut."""
    reps = sorted(set(p.rep))
    out = []
    for picks in itertools.product(*(range(p.num_strategies[r]) for r in reps)):
        at = dict(zip(reps, picks, strict=True))
        c = [at[p.rep[n]] for n in range(len(p.rep))]
        if not any(all(c[n] == k for n, k in cut) for cut in p.cuts):
            out.append(c)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_highs_program_finds_the_brute_force_optimum(seed: int) -> None:
    p = _problem(seed)
    every = _every(p)
    best = min(p.objective(c) for c in every)
    sol = solve_milp(p, None, None)
    assert sol is not None and sol.choice in every
    assert sol.objective == pytest.approx(best)
    peaks = sorted({p.peak_memory(c) for c in every})
    for budget in (peaks[0], peaks[len(peaks) // 2]):
        fits = [c for c in every if p.peak_memory(c) <= budget]
        bounded = solve_milp(p, budget, None)
        assert bounded is not None and bounded.peak is not None and bounded.peak <= budget
        assert bounded.objective <= min(p.objective(c) for c in fits) * 1.01 + 1e-9
    # below the least peak nothing fits: no answer
    assert solve_milp(p, peaks[0] - 1, None) is None


@pytest.mark.parametrize("seed", range(3))
def test_a_price_adds_the_priced_rows_bytes_to_every_layouts_cost(seed: int) -> None:
    # `_with_price` moves the rows' terms into costs and tables (copying only those a price
    # lands on): each layout's cost there is its bytes plus the price times its rows' bytes
    p = _problem(seed)
    q, spread = quotient(p)
    weights = np.array([0.5, 0.0, 2.0, 0.25])
    priced = _with_price(q, q.row_matrix(), weights)
    for c in itertools.product(*(range(k) for k in q.num_strategies)):
        held = np.array(q.row_bytes(list(c)), dtype=float)
        assert priced.objective(list(c)) == pytest.approx(q.objective(list(c)) + weights @ held)
        # (the quotient's rows are the problem's, renamed)
        assert q.row_bytes(list(c)) == p.row_bytes(spread(list(c)))
    assert q.edges is not priced.edges and all(q.edges[k] is priced.edges[k]
                                               for k in q.edges if k not in ((0, 2), (3, 1)))
