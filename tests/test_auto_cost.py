"""The auto-sharding cost model and solver on plain data (no IR, no XLA)."""

from __future__ import annotations

import pytest

from shardc.dialect.errors import ShardcError
from shardc.dialect.layout_math import sharded_local_bytes
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding
from shardc.passes.auto.cost import (
    collective_weight,
    parse_axis_costs,
    parse_size,
    reshard_bytes,
)
from shardc.passes.auto.problem import Problem, eliminate
from shardc.passes.auto.solve import SOLVERS, min_peak, solve, solve_exact, solve_greedy, solve_milp

MESH = Mesh.of(x=4, y=2)


def sh(*dims: tuple[str, ...]) -> TensorSharding:
    return TensorSharding("mesh", tuple(DimSharding(tuple(AxisRef(a) for a in d)) for d in dims))


def test_parse_size_units_and_errors() -> None:
    assert parse_size("64MiB") == 64 << 20
    assert parse_size("1.5 KiB") == 1536
    assert parse_size("2GB") == 2 * 10**9
    assert parse_size("123") == 123
    with pytest.raises(ShardcError, match="not a size"):
        parse_size("lots")


def test_parse_axis_costs() -> None:
    assert parse_axis_costs("x=4, y=1", ["x", "y"]) == {"x": 4.0, "y": 1.0}
    with pytest.raises(ShardcError, match=r"unknown axis name: \"z\" \(mesh axes: x, y\)"):
        parse_axis_costs("z=2", ["x", "y"])
    with pytest.raises(ShardcError, match="AXIS=WEIGHT"):
        parse_axis_costs("x", ["x"])


def test_local_bytes_divides_and_pads() -> None:
    assert sharded_local_bytes((8, 16), 4, sh(("x",), ()), MESH) == 2 * 16 * 4
    assert sharded_local_bytes((8, 16), 4, sh(("x", "y"), ()), MESH) == 1 * 16 * 4
    assert sharded_local_bytes((6, 16), 4, sh(("x",), ()), MESH) == 2 * 16 * 4  # ceil(6/4) = 2
    assert sharded_local_bytes((8, 16), 2, None, MESH) == 8 * 16 * 2


def test_reshard_bytes_by_kind() -> None:
    shape = (8, 16)
    # same layout, or gaining axes (a local slice): free
    assert reshard_bytes(shape, 4, sh(("x",), ()), sh(("x",), ()), MESH) == 0
    assert reshard_bytes(shape, 4, sh(("x",), ()), sh(("x",), ("y",)), MESH) == 0
    # losing "x" on dim 0: all-gather, bytes of the gathered (larger) side
    assert reshard_bytes(shape, 4, sh(("x",), ()), sh((), ()), MESH) == 8 * 16 * 4
    # losing only the minor "y" of {"x","y"}: gathered size is 8/4 x 16
    assert reshard_bytes(shape, 4, sh(("x", "y"), ()), sh(("x",), ()), MESH) == 2 * 16 * 4
    # moving "x" from dim 0 to dim 1: all-to-all at the local size
    assert reshard_bytes(shape, 4, sh(("x",), ()), sh((), ("x",)), MESH) == 2 * 16 * 4
    # weighted by the slowest axis lost
    w = {"x": 4.0, "y": 1.0}
    assert reshard_bytes(shape, 4, sh(("x",), ()), sh((), ()), MESH, w) == 4 * 8 * 16 * 4
    # a collective over several axes costs as its slowest one; over none it is free
    assert collective_weight([AxisRef("y")], w) == 1
    assert collective_weight([AxisRef("x"), AxisRef("y")], w) == 4
    assert collective_weight([], w) == 0


def _chain(budget_heavy: bool = False) -> Problem:
    # node 0 (a weight): strategy 0 replicated (100 B), 1 sharded (25 B)
    # node 1 (its reader): strategy 0 wants it replicated, 1 wants it sharded and pays 40 B
    return Problem(
        num_strategies=[2, 2],
        node_cost=[[0, 0], [0, 40]],
        edges={(0, 1): [[0, 50], [80, 0]]},
        value_node=[0, 1],
        value_bytes=[[100, 25], [10, 10]],
        # both values live at once: one memory row
        rows=[{(0, 0): 100, (0, 1): 25, (1, 0): 10, (1, 1): 10}],
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_exact_solve_minimizes_bytes_then_respects_the_budget(solver: str) -> None:
    p = _chain()
    free = solve(p, None, solver=solver)
    assert free.choice == [0, 0] and free.objective == 0 and free.peak == 110
    tight = solve(p, 50, solver=solver)
    assert tight.choice == [1, 1] and tight.objective == 40 and tight.peak == 35
    assert tight.method == f"{solver.removesuffix('-rows')} optimal"  # (highs-rows is HiGHS)


def test_infeasible_budget_and_the_smallest_peak() -> None:
    p = _chain()
    assert solve_exact(p, 20, 5.0) is None
    assert solve_milp(p, 20, 5.0) is None
    assert not solve(p, 20).feasible
    assert min_peak(p).peak == 35


def test_reshard_temporaries_count_in_memory() -> None:
    p = _chain()
    # reading the sharded weight as replicated makes a 100 B copy at the reader
    p.temps = [(0, 1, [[0, 0], [100, 0]])]
    p.rows = [{(0, 0): 100, (0, 1): 25, (1, 0): 10, (1, 1): 10, (0, 1, 1, 0): 100}]
    assert p.peak_memory([1, 0]) == 25 + 10 + 100
    sol = solve(p, 60)
    assert sol.choice == [1, 1] and sol.peak <= 60


def test_greedy_is_never_better_than_exact_and_ties_share_a_choice() -> None:
    p = _chain()
    # greedy decides node 0 without seeing node 1 (ties go to less memory): 40 B, exact 0 B
    assert solve_greedy(p, None).objective == 40 >= solve(p, None).objective
    assert solve_greedy(p, 50).choice == [1, 1]
    # two identical layers tied: both get the same strategy
    q = Problem(
        num_strategies=[2, 2],
        node_cost=[[5, 0], [0, 3]],
        edges={},
        value_node=[0, 1],
        value_bytes=[[1, 1], [1, 1]],
        rep=[0, 0],
        rows=[{(0, 0): 2, (0, 1): 2}],
    )
    sol = solve(q, None)
    assert sol.choice[0] == sol.choice[1] == 1 and sol.objective == 3


def test_elimination_folds_memory_free_chains_exactly() -> None:
    # 0 - 1 - 2 in a chain; node 1 holds no memory, so it folds into an edge 0 - 2
    p = Problem(
        num_strategies=[2, 3, 2],
        node_cost=[[0, 1], [5, 0, 2], [0, 0]],
        edges={(0, 1): [[0, 4, 9], [7, 0, 1]], (1, 2): [[0, 3], [6, 0], [1, 1]]},
        value_node=[0, 1, 2],
        value_bytes=[[10, 5], [0, 0, 0], [8, 4]],
        rows=[{(0, 0): 10, (0, 1): 5, (2, 0): 8, (2, 1): 4}],
    )
    q, recover = eliminate(p)
    assert q.num_strategies == [2, 1, 2] and set(q.edges) == {(0, 2)}
    for budget in (None, 14, 9):
        best = min(
            ((a, b, c) for a in range(2) for b in range(3) for c in range(2)
             if budget is None or p.peak_memory([a, b, c]) <= budget),
            key=lambda ch: p.objective(list(ch)),
        )  # fmt: skip
        sol = solve(p, budget)
        assert sol.objective == p.objective(list(best)), budget
        assert recover(solve(q, budget).choice) is not None
