"""Solving the strategy problem: exact with HiGHS (scipy's `milp`: `highs_lp`) or OR-tools CP-SAT,
greedy where it is too big.

The formulation is Alpa's / XLA auto-sharding's: one Boolean per (node, strategy), exactly one
per node; node costs linear in them; each edge's resharding cost linear in joint Booleans of the
pair of choices (with both marginals: the LP relaxation is tight on trees); for every live set,
the sum of its values' local bytes (and of the reshard copies made there) under the chosen
strategies at most the budget. HiGHS is the default: on a transformer layer's train step
(175 nodes, 2,228 strategies) it proves the optimum in ~5 s where CP-SAT (2 workers) still has
only a worse feasible answer after 60 s. Tied nodes (repeated layers) share their representative's
variables, so identical layers are one set of choices. When no layout fits, a second model
minimizes the peak memory alone, and its answer is the smallest budget found.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .highs_lp import add_memory_rows, assemble, solve_program
from .problem import Problem, Term, eliminate, quotient

# above this many (node, strategy) variables after tying, the greedy solver runs instead
EXACT_LIMIT = 60_000
# HiGHS stops once its answer is proven within this fraction of the optimum, or after this many
# branch-and-bound nodes; CP-SAT after this much deterministic time (one worker): limits that
# give the same layout under any load (a wall-clock limit only where the user sets one)
MIP_GAP = 0.01
NODE_LIMIT = 2000
DETERMINISTIC_TIME = 20.0
# constraint generation of the memory rows: at most this many rounds (the last one with every
# row), adding this many rows per round
ROW_ROUNDS = 6
ROWS_PER_ROUND = 4
# a budgeted problem bounds memory by a price on its rows first (`_priced`: a few LPs of the
# shape whose relaxation is integral) rather than by the rows' MILP, whose LP relaxation with
# even a few dense memory rows is fractional and slow (HiGHS spends 10 to 60 s in the root
# node at 1,300 to 2,000 choices, minutes at 6,000). The priced answer is kept where the
# Lagrangian bound proves it within `MIP_GAP` of the optimum, or where the problem has more
# (node, strategy) choices than this (after folding, without rows: the MLP steps of
# tests/auto_programs.py fold to under 200, a transformer layer's and the conv net's Adam
# steps to 800 to 1,300); a smaller one, whose MILP is quick, is solved exactly by the rows.
# At 500 the conv net's Adam step at 350 KB took the priced layout (256 KiB by the plan, 386 KiB
# by XLA, whose buffers the plan misses there) and failed the budget; by the rows it fits
ROWS_EXACT_LIMIT = 3000
# an infeasible problem of repeated layers is solved once more untied (auto_sharding.py) up
# to this many choices: bigger, the rows' MILP of the untied problem is hopeless
UNTIED_LIMIT = 3000
# the price of memory is raised (x4) at most this many times until some answer's priced rows
# fall with it, then set at most this many times where the answers' lines meet highest
# (`_priced`)
PRICE_RAISES = 8
PRICE_SPLITS = 3
# the least-peak search (`min_peak`): at most this many priced LP solves after its seeds,
# ending after `PEAK_STALL` in a row that lower no peak; the rate at which the rows' weights
# follow the rows nearest the peaks so far (multiplicative weights), and the weight below
# which a row is left unpriced (relative to the heaviest). On the model set of
# tests/auto_programs.py the least peak is found within the first two solves
PEAK_SOLVES = 10
PEAK_STALL = 3
PEAK_RATE = 16.0
PEAK_FLOOR = 1e-4
# a problem of at most this many choices (over the representatives) then lowers the least
# peak found by budgeted solves (`solve` at one byte below it) while they find one, at most
# `PEAK_DESCENTS` times: the priced solves miss layouts no price makes cheapest (a 64x64
# weight's decay step: 14 KiB where a budgeted solve finds 12.06 KiB); bigger, the rows'
# MILP takes tens of seconds per solve
PEAK_EXACT_LIMIT = 400
PEAK_DESCENTS = 4
# edge tables up to this many entries get joint Booleans, bigger ones an element constraint
JOINT_LIMIT = 4096


@dataclass
class Solution:
    """A choice per node, its objective (weighted bytes), peak memory (None: not computed,
    where no budget asked for the memory rows) and how it was found."""

    choice: list[int]
    objective: float
    peak: int | None
    method: str  # "cp-sat optimal", "cp-sat feasible (time limit)", "greedy"
    feasible: bool
    # the size of the problem the exact solver was given: (node, strategy) choices and memory
    # rows, after tying repeated layers and folding chains (`quotient`, `eliminate`)
    variables: int = 0
    rows: int = 0


def _scaled(x: float) -> int:
    return int(round(x))


# "highs-rows": HiGHS with the rows' MILP whatever the problem's size (never priced)
SOLVERS = ("highs", "cp-sat", "highs-rows")


def solve(
    p: Problem,
    budget: int | None,
    time_limit: float | None = None,
    exact_limit: int = EXACT_LIMIT,
    solver: str = "highs",
    price: bool = True,
    first: list[int] | None = None,
) -> Solution:
    """The cheapest choice whose peak memory is within `budget` (None: no bound), by `solver`
    (HiGHS, `highs_lp`, or OR-tools CP-SAT) on the exact formulation, or greedily
    when the problem is bigger than `exact_limit` (node, strategy) pairs or the solver's
    deterministic limits (or `time_limit` seconds, where given) end with nothing found. The
    memory rows join the problem as answers break them: the first round has none, so where the
    cheapest choice with no bound is within `budget` (the rows are the plan's measure, its peak
    is exact) it is the answer, without the rows' harder search. Where it is not, memory is
    priced first (`_priced`), and its answer kept where its bound proves it within `MIP_GAP`
    of the optimum or the problem has more than `ROWS_EXACT_LIMIT` choices (`price=False`:
    the rows' MILP always). `first`: the answer of this problem's solve without a budget (a
    choice per node), where one was made: the first round takes it instead of solving it
    again (it has no rows, so its answer is that one's; ignored where layouts are ruled out)."""
    if solver == "highs-rows":
        solver, price = "highs", False
    quot, spread = quotient(p)
    rows = quot.memory_rows() if budget is not None else []
    # the memory rows are added as the answers break them (constraint generation): first none,
    # then each round the rows most over the budget; an answer within every row is the optimum
    # of the whole problem (it is optimal with fewer constraints), and a budget the cheapest
    # layout meets costs no more than no budget
    active: list[int] = []
    sol = None
    for _ in range(ROW_ROUNDS):
        last = len(active) == len(rows) or _ == ROW_ROUNDS - 1
        sub = dataclasses.replace(quot, rows=rows if last else [rows[i] for i in active])
        q, recover = eliminate(sub, memory=budget is not None)
        size = sum(q.num_strategies)
        sol = None
        if not active and first is not None and budget is not None and not p.cuts:
            # (folded nodes take their best choice again on recovery: an answer as cheap)
            at_reps = [first[r] for r in sorted(set(p.rep))]
            mine = [k if q.num_strategies[n] > 1 else 0 for n, k in enumerate(at_reps)]
            sol = Solution(mine, q.objective(mine), None, "highs optimal", True)
        elif size <= exact_limit:
            if solver == "cp-sat":
                sol = solve_exact(q, budget, time_limit)
            else:
                sol = solve_milp(q, budget, time_limit)
        if sol is None or budget is None or last:
            break
        held = quot.row_bytes(recover(sol.choice))
        over = sorted((i for i, x in enumerate(held) if x > budget), key=lambda i: (-held[i], i))
        if not over:
            break
        if not active and price:
            # price the memory first (`_priced`): kept where its bound proves it near the
            # optimum or the problem is too big for the rows' MILP; else (or where no price
            # gives a layout within the budget) the rows' MILP
            priced = _priced(quot, budget, time_limit, solver, recover(sol.choice), held)
            if priced is not None and priced.solution.feasible and (
                size > ROWS_EXACT_LIMIT or priced.gap <= MIP_GAP
            ):
                sol, recover, size = priced.solution, (lambda c: c), priced.size
                break
        active.extend(over[:ROWS_PER_ROUND])
    if sol is None:
        sol = solve_greedy(p, budget)
        return dataclasses.replace(sol, variables=size, rows=len(rows))
    mine = recover(sol.choice)
    choice = spread(mine)
    # the peak by the quotient's rows (the same rows, over the representatives: their matrix
    # is made once); without a budget the rows are not made for the peak alone (the pass
    # reports the plan's memory of the layout it chose instead): given where they are at hand
    peak = quot.peak_memory(mine) if budget is not None or p.rows_at_hand() else None
    return Solution(choice, p.objective(choice), peak, sol.method, sol.feasible, size, len(rows))


@dataclass
class _Priced:
    """`_priced`'s answer: the best layout found, how far its bytes may be above the optimum
    within the budget (by the Lagrangian bound: 0.05 is 5%; inf where no solve gave a bound),
    and the size of the problem the solver was given."""

    solution: Solution
    gap: float
    size: int


def _priced(
    quot: Problem,
    budget: int,
    time_limit: float | None,
    solver: str,
    first: list[int],
    held: list[int],
) -> _Priced | None:
    """The cheapest answer found within `budget` where memory has a price: the problem without
    rows, each choice also paying `price` per byte it adds to the rows an answer has broken
    (Lagrangian relaxation; the problem keeps the shape whose LP relaxation is integral, so
    each solve is one LP). Each layout known is a line, its bytes plus the price times its
    priced rows' excess over the budget (`_Lines`); the lowest of them at a price bounds the
    priced optimum there from above, and a solve gives it exactly, so the dual's maximum is
    sought by Kelley's cutting planes in one dimension: the next price is where the lines
    of the layouts known meet highest (first those of `first`, the unbounded answer, whose
    rows `held`, and of the greedy memory-only layout where no cut rules it out), and the
    search ends where a solve
    finds nothing below them there (the dual's maximum: no price gives a better bound or a
    new layout near it), or where the best layout that fits is proven within `MIP_GAP`.
    Until some layout's line falls with the price, the price starts where it equals the
    bytes of `first` and rises x4. At most `PRICE_RAISES + PRICE_SPLITS` solves, a
    deterministic bound. The answer that fits and moves least is kept; where none fits, the
    one of least peak (not feasible). Each solve proven optimal also bounds the optimum
    within the budget from below (its priced objective less the price of the budget itself,
    since a layout within the budget pays at most that), which gives the answer's gap. None
    where a solve finds nothing."""
    import numpy as np

    matrix = quot.row_matrix()
    lines = _Lines(quot, budget)
    lines.add(first, np.asarray(held, dtype=np.float64))
    seed = solve_greedy(quot, None, memory_only=True).choice
    # (the greedy layout knows nothing of the layouts ruled out)
    if not any(all(seed[n] == k for n, k in cut) for cut in quot.cuts):
        lines.add(seed, np.asarray(quot.row_bytes(seed), dtype=np.float64))
    over = [i for i, x in enumerate(held) if x > budget]
    price = max(quot.objective(first), 1.0) / (sum(held[i] for i in over) / len(over))
    bound = -float("inf")
    solves = 0
    for _ in range(PRICE_RAISES + PRICE_SPLITS):
        meet = lines.meet()
        if meet is None:
            if solves >= PRICE_RAISES:
                break
            if solves:
                price *= 4
        else:
            price, expect = meet
        weights = lines.weights(price)
        q, recover = eliminate(_with_price(quot, matrix, weights), memory=False)
        if solver == "cp-sat":
            sol = solve_exact(q, None, time_limit)
        else:
            sol = solve_milp(q, None, time_limit)
        if sol is None:
            return None
        solves += 1
        choice = recover(sol.choice)
        now = np.asarray(quot.row_bytes(choice), dtype=np.float64)
        value = quot.objective(choice) + float(weights @ (now - budget))
        if sol.method.endswith(" optimal"):
            bound = max(bound, value)
        fresh = lines.add(choice, now)
        best = lines.best()
        if best is not None and best[1] - bound <= MIP_GAP * best[1]:
            break
        # (a solve at the meeting point that finds nothing below the lines: the dual's top)
        if meet is not None and (not fresh or value >= expect - 1e-9 * max(abs(expect), 1.0)):
            break
    best = lines.best()
    fits = best is not None
    if best is None:
        best = lines.least_peak()
    choice, cost = best
    gap = float("inf")
    if fits:
        # (bytes are never negative: an answer moving none is the optimum)
        gap = max(0.0, cost - bound) / cost if cost > 0 else 0.0
    within = f", within {gap:.0%} of the bound" if gap < float("inf") else ""
    name = "cp-sat" if solver == "cp-sat" else "highs"
    method = f"{name}, memory priced ({solves} solves{within})"
    out = Solution(choice, quot.objective(choice), None, method, fits)
    return _Priced(out, gap, sum(q.num_strategies) if solves else 0)


class _Lines:
    """The layouts `_priced` knows, each as a line over the price: its bytes plus the price
    times the excess over the budget of its bytes in the rows some layout broke (per byte of
    their mean: the priced rows' weights sum to one)."""

    def __init__(self, quot: Problem, budget: int):
        import numpy as np

        self.quot, self.budget = quot, budget
        self.broken = np.zeros(len(quot.memory_rows()), dtype=bool)
        self.known: list[tuple[list[int], float, Any]] = []  # (choice, bytes, row bytes)

    def add(self, choice: list[int], rows: Any) -> bool:
        """Know `choice` (whose rows hold `rows`); False where it was known."""
        self.broken |= rows > self.budget
        if any(c == choice for c, _, _ in self.known):
            return False
        self.known.append((choice, self.quot.objective(choice), rows))
        return True

    def weights(self, price: float) -> Any:
        """Per row, what a byte in it costs at `price` (only the rows some layout broke)."""
        return self.broken * (price / max(int(self.broken.sum()), 1))

    def _lines(self) -> list[tuple[float, float]]:
        w = self.weights(1.0)
        return [(cost, float(w @ (rows - self.budget))) for _, cost, rows in self.known]

    def meet(self) -> tuple[float, float] | None:
        """The price where the lowest of the lines is highest, and its height there; None
        while no line falls with the price (the maximum is further up)."""
        lines = self._lines()
        if all(s > 0 for _, s in lines):
            return None
        prices = [0.0] + [(c2 - c1) / (s1 - s2) for c1, s1 in lines for c2, s2 in lines
                          if s1 > 0 >= s2 and c2 > c1]  # fmt: skip
        top = max((min(c + x * s for c, s in lines), x) for x in prices)
        return top[1], top[0]

    def best(self) -> tuple[list[int], float] | None:
        """The layout known that fits and moves least (the first found of equal bytes)."""
        fit = [(cost, i) for i, (_, cost, rows) in enumerate(self.known)
               if rows.max(initial=0) <= self.budget]  # fmt: skip
        if not fit:
            return None
        cost, i = min(fit)
        return self.known[i][0], cost

    def least_peak(self) -> tuple[list[int], float]:
        """The layout known of least peak (the first found of equal peaks)."""
        i = min(range(len(self.known)), key=lambda i: (self.known[i][2].max(initial=0), i))
        return self.known[i][0], self.known[i][1]


def _with_price(quot: Problem, matrix: Any, weights: Any) -> Problem:
    """`quot` with each term of the rows costing `weights` (per row) times its bytes: a
    choice's term adds to its node's cost, a pair's to their edge's table. Terms of no price
    (those of rows no answer broke) add nothing, and no edge: the nodes they join may still
    be folded away (`eliminate`), which keeps the priced problem near the unbounded one's
    size. Only the costs and tables a price lands on are copied."""
    import numpy as np

    per_term = matrix.matrix.T @ weights
    cost = list(quot.node_cost)
    singles = np.flatnonzero(per_term[matrix.single_cols])
    if len(singles):
        at = matrix.single[singles]
        add = per_term[matrix.single_cols[singles]]
        for r in np.unique(at[:, 0]).tolist():
            mine = at[:, 0] == r
            row = np.array(cost[r], dtype=np.float64)
            np.add.at(row, at[mine, 1], add[mine])
            cost[r] = row.tolist()
    edges = dict(quot.edges)
    pairs = np.flatnonzero(per_term[matrix.pair_cols])
    if len(pairs):
        at = matrix.pair[pairs]
        add = per_term[matrix.pair_cols[pairs]]
        order = np.lexsort((at[:, 1], at[:, 0]))
        at, add = at[order], add[order]
        cut = np.flatnonzero(np.any(np.diff(at[:, :2], axis=0) != 0, axis=1)) + 1
        for lo, hi in zip([0, *cut.tolist()], [*cut.tolist(), len(at)], strict=True):
            key = (int(at[lo, 0]), int(at[lo, 1]))
            old = edges.get(key)
            tbl = np.array(old, dtype=np.float64) if old is not None else np.zeros(
                (quot.num_strategies[key[0]], quot.num_strategies[key[1]]))  # fmt: skip
            np.add.at(tbl, (at[lo:hi, 2], at[lo:hi, 3]), add[lo:hi])
            edges[key] = tbl.tolist()
    return dataclasses.replace(quot, node_cost=cost, edges=edges, rows=[], make_rows=None)


def _model(p: Problem):  # noqa: ANN202 - (model, x) of ortools
    from ortools.sat.python import cp_model

    m: Any = cp_model.CpModel()
    reps = sorted(set(p.rep))
    x: dict[int, list] = {}
    for r in reps:
        x[r] = [m.NewBoolVar(f"x{r}_{k}") for k in range(p.num_strategies[r])]
        m.AddExactlyOne(x[r])
    return m, x


class _Indexes:
    """Per representative, an integer var equal to its choice; per pair, the flat index."""

    def __init__(self, p: Problem, m, x: dict[int, list]):  # noqa: ANN001
        self.p, self.m, self.x = p, m, x
        self.idx: dict[int, object] = {}
        self.pos: dict[tuple[int, int], object] = {}
        self.temp_vars: dict[tuple, object] = {}
        self.pairs: dict[tuple[int, int], list[list]] = {}

    def index(self, r: int):  # noqa: ANN201
        if r not in self.idx:
            v = self.m.NewIntVar(0, self.p.num_strategies[r] - 1, f"i{r}")
            self.m.Add(v == sum(k * b for k, b in enumerate(self.x[r])))
            self.idx[r] = v
        return self.idx[r]

    def pair(self, ru: int, rv: int):  # noqa: ANN201
        key = (ru, rv)
        if key not in self.pos:
            nu, nv = self.p.num_strategies[ru], self.p.num_strategies[rv]
            v = self.m.NewIntVar(0, nu * nv - 1, f"p{ru}_{rv}")
            self.m.Add(v == self.index(ru) * nv + self.index(rv))
            self.pos[key] = v
        return self.pos[key]

    def joint(self, ru: int, rv: int) -> list[list]:
        """Booleans y[k][kv] = x[ru][k] and x[rv][kv], with both marginals (the local marginal
        polytope: its LP relaxation is tight on trees, which keeps CP-SAT's bound strong)."""
        key = (ru, rv)
        y = self.pairs.get(key)
        if y is None:
            m, xu, xv = self.m, self.x[ru], self.x[rv]
            y = [[m.NewBoolVar(f"y{ru}_{rv}_{k}_{kv}") for kv in range(len(xv))]
                 for k in range(len(xu))]  # fmt: skip
            for k in range(len(xu)):
                m.Add(sum(y[k]) == xu[k])
            for kv in range(len(xv)):
                m.Add(sum(y[k][kv] for k in range(len(xu))) == xv[kv])
            self.pairs[key] = y
        return y

    def element(self, ru: int, rv: int, tbl: list[list[int]]):  # noqa: ANN201
        """An expression equal to `tbl[choice(ru)][choice(rv)]`."""
        nu, nv = len(tbl), len(tbl[0])
        if nu * nv <= JOINT_LIMIT:
            y = self.joint(ru, rv)
            return sum(tbl[k][kv] * y[k][kv] for k in range(nu) for kv in range(nv) if tbl[k][kv])
        flat = [c for row in tbl for c in row]
        key = (ru, rv, tuple(flat))
        v = self.temp_vars.get(key)
        if v is None:
            v = self.m.NewIntVar(min(flat), max(flat), f"t{len(self.temp_vars)}")
            self.m.AddElement(self.pair(ru, rv), flat, v)
            self.temp_vars[key] = v
        return v


def _memory_terms(p: Problem, x: dict[int, list], row: dict[Term, int], ix: _Indexes) -> list:
    """One memory row (`Problem.memory_rows`) as CP-SAT terms: a Boolean per choice term, an
    element of a table per pair of tied choices."""
    terms = []
    tables: dict[tuple[int, int], list[list[int]]] = {}
    for t, c in row.items():
        if len(t) == 2:
            terms.append(c * x[t[0]][t[1]])
            continue
        ru, rv, k, kv = t
        tbl = tables.get((ru, rv))
        if tbl is None:
            tbl = tables[(ru, rv)] = [[0] * p.num_strategies[rv] for _ in range(p.num_strategies[ru])]
        tbl[k][kv] += c
    terms.extend(ix.element(ru, rv, tbl) for (ru, rv), tbl in tables.items())
    return terms


def _objective_terms(p: Problem, m, x: dict[int, list], ix: _Indexes) -> list:  # noqa: ANN001
    """Linear objective terms; edge tables become element constraints on the choice indexes."""
    coef: dict = {}
    for n, costs in enumerate(p.node_cost):
        xs = x[p.rep[n]]
        for k, c in enumerate(costs):
            if c:
                coef[xs[k]] = coef.get(xs[k], 0) + _scaled(c)
    pair_tables: dict[tuple[int, int], list[list[int]]] = {}
    for (u, v), tbl in p.edges.items():
        ru, rv = p.rep[u], p.rep[v]
        if ru == rv:
            xs = x[ru]
            for k in range(p.num_strategies[ru]):
                c = _scaled(tbl[k][k])
                if c:
                    coef[xs[k]] = coef.get(xs[k], 0) + c
            continue
        ints = [[_scaled(c) for c in row] for row in tbl]
        old = pair_tables.get((ru, rv))
        if old is None:
            pair_tables[(ru, rv)] = ints
        else:
            pair_tables[(ru, rv)] = [
                [a + b for a, b in zip(r1, r2, strict=True)]
                for r1, r2 in zip(old, ints, strict=True)
            ]
    terms = [c * var for var, c in coef.items()]
    for (ru, rv), itbl in pair_tables.items():
        # a table that depends on one side only is a node cost
        if all(row == itbl[0] for row in itbl):
            for k, ci in enumerate(itbl[0]):
                if ci:
                    terms.append(ci * x[rv][k])
            continue
        if all(len(set(row)) == 1 for row in itbl):
            for k, row in enumerate(itbl):
                if row[0]:
                    terms.append(row[0] * x[ru][k])
            continue
        terms.append(ix.element(ru, rv, itbl))
    return terms


def _solver(time_limit: float | None):  # noqa: ANN202
    from ortools.sat.python import cp_model

    s = cp_model.CpSolver()
    s.parameters.max_deterministic_time = DETERMINISTIC_TIME
    if time_limit is not None:
        s.parameters.max_time_in_seconds = time_limit
    s.parameters.num_workers = 1
    s.parameters.random_seed = 0
    s.parameters.linearization_level = 2
    return s


def _choice(p: Problem, x: dict[int, list], s) -> list[int]:  # noqa: ANN001
    out = []
    for n in range(len(p.num_strategies)):
        xs = x[p.rep[n]]
        out.append(next(k for k, b in enumerate(xs) if s.Value(b)))
    return out


def solve_exact(p: Problem, budget: int | None, time_limit: float | None) -> Solution | None:
    """CP-SAT on the exact formulation; None when it finds nothing in time (or none exists)."""
    from ortools.sat.python import cp_model

    m, x = _model(p)
    ix = _Indexes(p, m, x)
    if budget is not None:
        for row in p.memory_rows():
            m.Add(sum(_memory_terms(p, x, row, ix)) <= budget)
    for cut in p.cuts:
        m.AddBoolOr([x[p.rep[n]][k].Not() for n, k in {(p.rep[n], k) for n, k in cut}])
    m.Minimize(sum(_objective_terms(p, m, x, ix)))
    start = solve_greedy(p, budget)
    if start.feasible:  # a first solution: CP-SAT improves on it and proves the optimum
        for r, xs in x.items():
            for k, b in enumerate(xs):
                m.AddHint(b, k == start.choice[r])
    s = _solver(time_limit)
    status = s.Solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    choice = _choice(p, x, s)
    method = "cp-sat optimal" if status == cp_model.OPTIMAL else "cp-sat feasible (limit)"
    return Solution(choice, p.objective(choice), p.peak_memory(choice), method, True)


def min_peak(
    p: Problem,
    time_limit: float | None = None,
    start: list[int] | None = None,
    fewest_bytes: bool = False,
) -> Solution:
    """The least peak memory found for `p`, whatever it moves (one answer per problem: no
    budget enters the search). Its seeds are budget-independent: `start` (the cheapest
    layout without a bound, solved here where not given: it has no rows, so it is quick) and
    the greedy memory-only layout; then at most `PEAK_SOLVES` LP solves of the problem
    without rows, each choice also paying a price per byte it adds to the rows (min-max by
    multiplicative weights: the rows the answers so far came nearest their peaks with weigh
    most; each priced problem keeps the shape whose LP relaxation is integral, so a solve is
    one LP; `PEAK_STALL` solves in a row that lower no peak end it). The least peak seen is
    the answer, so it is never above a seed's; a small problem (`PEAK_EXACT_LIMIT`) lowers it
    further by budgeted solves. Solves on deterministic limits make it the same under any
    load, in seconds.

    `fewest_bytes`: only layouts moving at most the bytes of the cheapest layout without a
    bound (`start`) count, and memory is priced below a byte on each solve:
    among the layouts that move the fewest bytes, the one of least peak (a
    tie-break). Otherwise bytes break ties between layouts of one peak."""
    import numpy as np

    q, spread = quotient(p)
    reps = sorted(set(p.rep))
    rows = q.memory_rows()
    if not rows:
        return solve_greedy(p, None, memory_only=True)
    seeds = [solve_greedy(p, None, memory_only=True).choice]
    if start is None and (fewest_bytes or sum(q.num_strategies) <= EXACT_LIMIT):
        start = solve(p, None, time_limit).choice
    if start is not None:
        seeds.insert(0, start)
    cap = None
    if fewest_bytes:
        assert start is not None
        cap = p.objective(start) * (1 + 1e-9) + 1e-6
    best: tuple[tuple[bool, int, float], list[int]] | None = None
    # per row, how near the peaks of the answers so far it came (the weights follow it)
    score = np.zeros(len(rows))

    def consider(mine: list[int]) -> None:
        nonlocal best
        held = q.row_bytes(mine)
        objective = q.objective(mine)
        key = (cap is not None and objective > cap, max(held), objective)
        score[:] += np.asarray(held, dtype=float) / max(max(held), 1)
        if best is None or key < best[0]:
            best = (key, mine)

    for seed in seeds:
        consider([seed[r] for r in reps] if len(reps) < len(p.rep) else list(seed))
    if sum(q.num_strategies) <= EXACT_LIMIT:
        matrix = q.row_matrix()
        stall = 0
        for _ in range(PEAK_SOLVES):
            if stall == PEAK_STALL:
                break
            assert best is not None
            before = best[0]
            _, peak, objective = before
            w = np.exp(PEAK_RATE * (score - score.max()))
            w[w < PEAK_FLOOR] = 0.0
            w /= w.sum()
            # below a byte in all (`fewest_bytes`: bytes first), or far above the bytes
            scale = (0.5 if cap is not None else 100.0 * max(objective, 1.0)) / max(peak, 1)
            priced = _with_price(q, matrix, w * scale)
            r, recover = eliminate(priced, memory=False)
            sol = solve_milp(r, None, time_limit)
            if sol is None:
                break
            consider(recover(sol.choice))
            stall = 0 if best[0][:2] < before[:2] else stall + 1
    assert best is not None
    (_, peak, _), mine = best
    choice = spread(mine)
    if cap is None and sum(q.num_strategies) <= PEAK_EXACT_LIMIT:
        for _ in range(PEAK_DESCENTS):
            lower = solve(p, peak - 1, time_limit)
            if not lower.feasible or lower.peak is None or lower.peak >= peak:
                break
            choice, peak = lower.choice, lower.peak
    method = "least peak found" if cap is None else "least peak at the fewest bytes"
    return Solution(choice, p.objective(choice), peak, method, False)


def solve_greedy(p: Problem, budget: int | None, memory_only: bool = False) -> Solution:
    """Program-order greedy: each node takes the strategy cheapest against the choices made
    before it, memory priced at `lam` per byte; `lam` grows until the peak fits."""
    n_nodes = len(p.num_strategies)
    incoming: list[list[tuple[int, list[list[float]]]]] = [[] for _ in range(n_nodes)]
    for (u, v), tbl in p.edges.items():
        incoming[v].append((u, tbl))
    # a choice's memory: its values' bytes; where only rows are known (`quotient`), the most
    # the choice adds to one row
    node_mem = [[0.0] * p.num_strategies[n] for n in range(n_nodes)]
    for vi, n in enumerate(p.value_node):
        for k, b in enumerate(p.value_bytes[vi]):
            node_mem[n][k] += b
    if not p.value_node and (budget is not None or memory_only or p.rows_at_hand()):
        for row in p.memory_rows():
            for t, b in row.items():
                if len(t) == 2 and b > node_mem[t[0]][t[1]]:
                    node_mem[t[0]][t[1]] = b
    best: Solution | None = None
    lams = [float("inf")] if memory_only else [0.0, 1e-3, 1e-2, 0.1, 1.0, 10.0, 1e3, float("inf")]
    for lam in lams:
        choice = [-1] * n_nodes
        for n in range(n_nodes):
            r = p.rep[n]
            if choice[r] >= 0:
                choice[n] = choice[r]
                continue
            scores = []
            for k in range(p.num_strategies[n]):
                c = p.node_cost[n][k]
                for u, tbl in incoming[n]:
                    if choice[u] >= 0:
                        c += tbl[choice[u]][k]
                m = node_mem[n][k]
                scores.append((m, c) if lam == float("inf") else (c + lam * m, m))
            choice[n] = min(range(len(scores)), key=scores.__getitem__)
        if budget is None and not memory_only and not p.rows_at_hand():
            return Solution(choice, p.objective(choice), None, "greedy", True)
        peak = p.peak_memory(choice)
        sol = Solution(
            choice, p.objective(choice), peak, "greedy", budget is None or peak <= budget
        )
        if sol.feasible:
            return sol
        if best is None or peak < best.peak:  # type: ignore[operator]
            best = sol
    assert best is not None
    return best


def solve_milp(p: Problem, budget: int | None, time_limit: float | None) -> Solution | None:
    """The same exact formulation as a MILP for HiGHS (`highs_lp`: joint columns per edge with
    both marginals, memory rows over the live sets), the LP relaxation first. None if nothing
    is found within the limits."""
    prog = assemble(p)
    if budget is not None:
        add_memory_rows(prog, p, budget)
    got = solve_program(p, prog, _milp_options(time_limit), MIP_GAP)
    if got is None:
        return None
    return Solution(got.choice, p.objective(got.choice), p.peak_memory(got.choice), got.method,
                    True)  # fmt: skip


def _milp_options(time_limit: float | None) -> dict[str, Any]:
    """HiGHS's limits (scipy's `milp` options): the gap and node count always, wall-clock only
    where the user set one (the same answer under any load)."""
    out: dict[str, Any] = {"disp": False, "mip_rel_gap": MIP_GAP, "node_limit": NODE_LIMIT}
    if time_limit is not None:
        out["time_limit"] = time_limit
    return out
