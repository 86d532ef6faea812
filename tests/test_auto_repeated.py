"""Repeated layers share one decision: the problem auto's exact solver is given (its choices and
memory rows, after tying identical layers and folding chains) is the same size whatever the
depth of a stack of identical layers, and the solvers stop on deterministic limits only."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shardc
from shardc.passes.auto.auto_sharding import FunctionResult
from shardc.passes.auto.problem import Problem, _Sweep, _sweep_rows, quotient
from shardc.passes.auto.solve import _Lines, _milp_options, _priced, _solver, solve

from .auto_programs import MESH, fresh

B, D = 16, 32


def _step(params: list[Any], x: Any, y: Any) -> Any:
    """One SGD step of a stack of identical tanh layers on a squared loss."""

    def loss(ps: list[Any]) -> Any:
        h = x
        for w in ps:
            h = jnp.tanh(h @ w) + h
        return jnp.mean((h - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return [w - 0.1 * g for w, g in zip(params, grads, strict=True)], value


def _solved(layers: int, budget: str | None) -> FunctionResult:
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((D, D)).astype(np.float32) / D for _ in range(layers)]
    x = rng.standard_normal((B, D)).astype(np.float32)
    kw = {} if budget is None else {"memory_budget": budget}
    f = shardc.jit(fresh(_step), mesh=MESH, in_shardings=(None, "data, _", "data, _"),
                   auto=True, **kw)  # fmt: skip
    report = f.lower(params, x, x).report.auto
    assert report is not None
    return report.functions[0]


# (no budget; one the cheapest layout meets at both depths, so no memory rows are made; one
# it does not meet, which the solve bounds with rows)
@pytest.mark.parametrize("budget", [None, "400KB", "120KB"])
def test_the_problem_does_not_grow_with_repeated_layers(budget: str | None) -> None:
    # (the first and last layers differ from the others: 12 leaves ten alike)
    small, deep = _solved(12, budget), _solved(16, budget)
    assert deep.nodes > small.nodes + 4 * 6  # the graph grows with every layer ...
    assert deep.tied_nodes > small.tied_nodes
    # ... the problem solved does not: one layer's choices, one layer's memory rows
    assert 0 < deep.variables == small.variables
    assert deep.memory_rows == small.memory_rows
    assert (deep.memory_rows > 0) == (budget == "120KB")
    # (both solved by HiGHS; whether the MILP closes its gap or stops within 1% of optimal
    # may differ between the depths: the rows' terms are the same, the constants are not)
    assert deep.method.startswith("highs") and small.method.startswith("highs")
    if budget == "400KB":  # the cheapest layout, as with no budget
        assert deep.objective == _solved(16, None).objective


def test_tied_memory_rows_keep_the_bound_of_every_live_set() -> None:
    # three nodes tied to one choice, live one after another with the others' bytes held:
    # the live sets grow by equal steps, so only the first and the last are rows
    p = Problem(
        num_strategies=[2, 2, 2, 2],
        node_cost=[[0, 9], [0, 9], [0, 9], [0, 9]],
        edges={},
        value_node=[0, 1, 2, 3],
        value_bytes=[[8, 2], [8, 2], [8, 2], [8, 2]],
        rep=[0, 0, 0, 0],
    )
    sweep = _Sweep(p)
    terms = sweep.terms([((0, 0), 8), ((0, 1), 2)])
    # value i lives from point i to the end; a live set is taken at each point (a piece with
    # no bytes ends there)
    pieces = [(i, 3, terms) for i in range(4)] + [(i, i, []) for i in range(4)]
    p.rows = _sweep_rows(sweep, pieces, 3)
    assert p.rows == [{(0, 0): 8, (0, 1): 2}, {(0, 0): 32, (0, 1): 8}]
    q, spread = quotient(p)
    assert q.num_strategies == [2] and q.node_cost == [[0, 36]]
    assert spread([1]) == [1, 1, 1, 1]
    for budget, want in ((None, 0), (31, 1), (32, 0)):
        sol = solve(p, budget)
        assert sol.choice == [want] * 4 and sol.peak == (32 if want == 0 else 8)


def test_solvers_stop_on_deterministic_limits_only() -> None:
    # no wall-clock limit unless the user gives one: the layout does not depend on the load
    assert "time_limit" not in _milp_options(None)
    highs = _milp_options(None)
    assert highs["mip_rel_gap"] > 0 and highs["node_limit"] > 0
    assert _milp_options(30.0)["time_limit"] == 30.0
    cp = _solver(None).parameters
    assert cp.num_workers == 1 and cp.max_deterministic_time > 0
    assert cp.max_time_in_seconds == _default_cp_time()
    assert _solver(5.0).parameters.max_time_in_seconds == 5.0


def _default_cp_time() -> float:
    from ortools.sat.python import cp_model

    return float(cp_model.CpSolver().parameters.max_time_in_seconds)


def _chain(seed: int) -> Problem:
    """A chain of 8 nodes, 3 strategies each: splitting more moves more bytes and holds less."""
    rng = np.random.default_rng(seed)
    n, k = 8, 3
    edges = {(i, i + 1): [[0.0 if a == b else float(rng.integers(1, 50)) for b in range(k)]
                          for a in range(k)] for i in range(n - 1)}  # fmt: skip
    cost = [[float(c) for c in sorted(rng.integers(0, 30, k))] for _ in range(n)]
    held = [[int(b) for b in sorted(rng.integers(10, 100, k), reverse=True)] for _ in range(n)]
    # the values of nodes i - 2 .. i live at once, for each i
    rows = [{(j, s): held[j][s] for j in range(max(0, i - 2), i + 1) for s in range(k)}
            for i in range(n)]  # fmt: skip
    return Problem([k] * n, cost, edges, list(range(n)), held, rows=rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_added_as_answers_break_them_give_the_optimum_of_all_rows(seed: int) -> None:
    # the budgeted solve starts without memory rows and adds those its answers break; its
    # answer is the optimum of the problem with every row (checked by brute force)
    import itertools

    p = _chain(seed)
    every = list(itertools.product(range(3), repeat=8))
    for budget in (120, 150, 200, 10_000):
        fits = [c for c in every if p.peak_memory(list(c)) <= budget]
        sol = solve(p, budget)
        if not fits:
            assert not sol.feasible
            continue
        best = min(p.objective(list(c)) for c in fits)
        assert sol.feasible and sol.peak <= budget
        assert sol.objective <= best * 1.01 + 1e-9, (budget, sol.objective, best)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_a_problem_too_big_for_the_rows_milp_prices_memory_and_fits(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # above ROWS_EXACT_LIMIT choices the budget is kept by a price on memory (Lagrangian
    # relaxation, a bounded number of solves) instead of the rows' MILP: its answer fits
    # wherever some layout does, and it is the same answer every time (no clock involved)
    import itertools

    from shardc.passes.auto import solve as solve_module

    monkeypatch.setattr(solve_module, "ROWS_EXACT_LIMIT", 0)
    p = _chain(seed)
    every = list(itertools.product(range(3), repeat=8))
    for budget in (150, 200):
        fits = [c for c in every if p.peak_memory(list(c)) <= budget]
        assert fits, "some layout fits these budgets"
        sol = solve(p, budget)
        assert sol.method.startswith("highs, memory priced")
        solves = int(sol.method.split("(")[1].split()[0])
        assert solves <= solve_module.PRICE_RAISES + solve_module.PRICE_SPLITS
        assert sol.feasible and sol.peak is not None and sol.peak <= budget
        assert solve(p, budget).choice == sol.choice
    # a budget no layout meets: the answer of least peak found, not feasible
    assert not solve(p, 100).feasible


@pytest.mark.parametrize("seed", range(4))
def test_the_price_search_goes_where_the_known_layouts_lines_meet_highest(seed: int) -> None:
    # each layout known is a line over the price (its bytes plus the price times its priced
    # rows' mean excess over the budget); the next price is where the lowest of them is
    # highest, checked against a dense grid of prices, and none is given while every line
    # still rises with the price
    import itertools

    p = _chain(seed)
    rng = np.random.default_rng(seed)
    every = [list(c) for c in itertools.product(range(3), repeat=8)]
    peaks = sorted({p.peak_memory(c) for c in every})
    budget = peaks[len(peaks) // 3]
    over = [c for c in every if p.peak_memory(c) > budget]
    under = [c for c in every if p.peak_memory(c) <= budget]
    lines = _Lines(p, budget)
    for c in (over[i] for i in rng.choice(len(over), 3, replace=False)):
        assert lines.add(c, np.array(p.row_bytes(c), dtype=float))
    assert not lines.add(list(lines.known[0][0]), lines.known[0][2])
    if all(float(lines.weights(1.0) @ (r - budget)) > 0 for _, _, r in lines.known):
        assert lines.meet() is None
    for c in (under[i] for i in rng.choice(len(under), 2, replace=False)):
        lines.add(c, np.array(p.row_bytes(c), dtype=float))
    w = lines.weights(1.0)
    cs = [(cost, float(w @ (r - budget))) for _, cost, r in lines.known]
    meet = lines.meet()
    assert meet is not None
    price, height = meet
    assert height == pytest.approx(min(c + price * s for c, s in cs))
    top = max(min(c + x * s for c, s in cs) for x in np.linspace(0.0, 4 * price + 10, 20001))
    assert height >= top - 1e-9 * max(abs(top), 1.0)
    # the best layout known that fits is the one of them that moves least
    best = lines.best()
    assert best is not None and best[1] == min(p.objective(c) for c, _, r in lines.known
                                               if r.max() <= budget)  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_price_search_keeps_to_the_layouts_not_ruled_out(seed: int) -> None:
    # the search knows the greedy memory-only layout from the start; where a cut rules that
    # layout out (shardc.jit's XLA check rules out what it measured over the budget), the
    # answer is another one (fitting where it says so)
    import dataclasses

    from shardc.passes.auto.solve import solve_greedy

    p = _chain(seed)
    greedy = solve_greedy(p, None, memory_only=True).choice
    first = solve(p, None).choice
    budget = max(p.row_bytes(greedy))
    held = p.row_bytes(first)
    assert max(held) > budget
    assert _priced(p, budget, None, "highs", first, held).solution.choice == greedy
    cut = dataclasses.replace(p, cuts=[list(enumerate(greedy))])
    out = _priced(cut, budget, None, "highs", first, held)
    assert out is not None and out.solution.choice != greedy
    assert out.solution.feasible == (max(p.row_bytes(out.solution.choice)) <= budget)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_the_priced_answers_gap_is_a_true_bound_and_the_unbounded_start_changes_nothing(
    seed: int,
) -> None:
    # the price's Lagrangian bound is at most the optimum within the budget (checked by brute
    # force), so the gap it reports is a true one; and a budgeted solve handed the unbounded
    # solve's answer (as checked.py does) ends with the answer it finds when it solves that
    # first round itself
    import itertools

    p = _chain(seed)
    every = list(itertools.product(range(3), repeat=8))
    first = solve(p, None).choice
    for budget in (150, 200):
        held = p.row_bytes(first)
        assert max(held) > budget, "the cheapest layout breaks these budgets"
        best = min(p.objective(list(c)) for c in every if p.peak_memory(list(c)) <= budget)
        priced = _priced(p, budget, None, "highs", first, held)
        assert priced is not None and priced.solution.feasible
        cost = priced.solution.objective
        assert cost >= best - 1e-9
        assert cost * (1 - priced.gap) <= best + 1e-6, (cost, priced.gap, best)
        again = solve(p, budget, first=first)
        assert again.choice == solve(p, budget).choice
