"""The strategy problem as a linear program for HiGHS (through scipy's `milp`), assembled with
numpy.

One column per (node, strategy) with a one-hot row per node; an edge whose costs depend on both
of its nodes' choices gets joint columns over classes of strategies with equal costs, tied to
the nodes' columns by marginal rows (the local marginal polytope: its relaxation is integral on
trees, and often on these graphs); memory rows where a budget bounds them. The program is
assembled from numpy blocks per edge rather than Python dicts per entry (seconds per solve on a
4-layer Adam step's priced problems, 175,000 columns). Each priced problem of a budgeted solve
(`solve._priced`) is solved from scratch: re-solving one model from the previous price's basis
(only the costs change; HiGHS's own Python binding can, scipy cannot) was measured no faster
there, since a warm start skips HiGHS's presolve, which shrinks these programs most.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .problem import Problem, Term


class _Assembly:
    """Columns (cost and bounds) and rows (entries and bounds) of a linear program, gathered as
    numpy blocks and joined once."""

    def __init__(self) -> None:
        self.cost: list[np.ndarray] = []
        self.col_lo: list[np.ndarray] = []
        self.col_hi: list[np.ndarray] = []
        self.ncol = 0
        self.entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.row_lo: list[np.ndarray] = []
        self.row_hi: list[np.ndarray] = []
        self.nrow = 0

    def cols(self, cost: np.ndarray, lo: float = 0.0, hi: float = 1.0) -> int:
        """Add columns of `cost` within [lo, hi]; the index of the first."""
        base = self.ncol
        n = len(cost)
        self.cost.append(np.asarray(cost, dtype=np.float64))
        self.col_lo.append(np.full(n, lo))
        self.col_hi.append(np.full(n, hi))
        self.ncol += n
        return base

    def rows(
        self, count: int, r: np.ndarray, c: np.ndarray, v: np.ndarray | float, lo: Any, hi: Any
    ) -> int:
        """Add `count` rows whose entries are (r: row among them, c: column, v); the index of
        the first."""
        base = self.nrow
        r = np.asarray(r, dtype=np.int64)
        vals = np.broadcast_to(np.asarray(v, dtype=np.float64), r.shape)
        self.entries.append((r + base, np.asarray(c, dtype=np.int64), vals))
        self.row_lo.append(np.broadcast_to(np.asarray(lo, dtype=np.float64), (count,)))
        self.row_hi.append(np.broadcast_to(np.asarray(hi, dtype=np.float64), (count,)))
        self.nrow += count
        return base

    def costs(self) -> np.ndarray:
        return np.concatenate(self.cost) if self.cost else np.zeros(0)

    def csc(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The matrix column-wise: (start per column, row, value), duplicates summed."""
        r = np.concatenate([e[0] for e in self.entries])
        c = np.concatenate([e[1] for e in self.entries])
        v = np.concatenate([e[2] for e in self.entries])
        keep = v != 0
        r, c, v = r[keep], c[keep], v[keep]
        order = np.lexsort((r, c))
        r, c, v = r[order], c[order], v[order]
        if len(r):
            new = np.ones(len(r), dtype=bool)
            new[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
            v = np.bincount(np.cumsum(new) - 1, weights=v)
            r, c = r[new], c[new]
        start = np.searchsorted(c, np.arange(self.ncol + 1)).astype(np.int32)
        return start, r.astype(np.int32), v

    def matrix(self) -> Any:
        """The constraint matrix (scipy's CSC), with its row bounds and the column bounds."""
        from scipy.optimize import Bounds, LinearConstraint
        from scipy.sparse import csc_matrix

        start, r, v = self.csc()
        a = csc_matrix((v, r, start), shape=(self.nrow, self.ncol))
        lo = np.concatenate(self.row_lo) if self.row_lo else np.zeros(0)
        hi = np.concatenate(self.row_hi) if self.row_hi else np.zeros(0)
        bounds = Bounds(np.concatenate(self.col_lo), np.concatenate(self.col_hi))
        return LinearConstraint(a, lo, hi), bounds


@dataclasses.dataclass
class _Program:
    """A strategy problem's linear program and where each representative's columns start
    (`xoff`, consecutive from 0 to `nx`)."""

    lp: _Assembly
    xoff: dict[int, int]
    nx: int


def _classes(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The class of each row of `a` (equal rows, numbered in order of first appearance) and
    each class's first row."""
    _, first, inv = np.unique(a, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[np.asarray(inv).ravel()], first[order]


def assemble(p: Problem) -> _Program:
    """`p`'s objective, one-hot rows, joint columns and marginal rows, and the rows ruling out
    `p.cuts`."""
    lp = _Assembly()
    reps = sorted(set(p.rep))
    ns = {r: p.num_strategies[r] for r in reps}
    xoff: dict[int, int] = {}
    nx = 0
    for r in reps:
        xoff[r] = nx
        nx += ns[r]
    c = np.zeros(nx)
    for n, costs in enumerate(p.node_cost):
        o = xoff[p.rep[n]]
        c[o : o + len(costs)] += costs
    combined: dict[tuple[int, int], np.ndarray] = {}
    for (u, v), table in p.edges.items():
        ru, rv = p.rep[u], p.rep[v]
        tbl = np.asarray(table, dtype=np.float64)
        if ru == rv:
            c[xoff[ru] : xoff[ru] + ns[ru]] += np.diagonal(tbl)
            continue
        if (tbl == tbl[0]).all():  # depends on v's choice only
            c[xoff[rv] : xoff[rv] + ns[rv]] += tbl[0]
            continue
        if (tbl == tbl[:, :1]).all():  # on u's only
            c[xoff[ru] : xoff[ru] + ns[ru]] += tbl[:, 0]
            continue
        key = (ru, rv)
        if ru > rv:
            key, tbl = (rv, ru), tbl.T
        old = combined.get(key)
        combined[key] = tbl if old is None else old + tbl
    lp.cols(c)
    counts = np.array([ns[r] for r in reps], dtype=np.int64)
    lp.rows(len(reps), np.repeat(np.arange(len(reps)), counts), np.arange(nx), 1.0, 1.0, 1.0)
    for (ru, rv), tbl in combined.items():
        # joint columns over classes of strategies with equal rows (columns) of costs: exact
        # (integral choices put 1 on one class pair) and far fewer than one per strategy pair
        rinv, rfirst = _classes(tbl)
        cinv, cfirst = _classes(tbl.T)
        nr, nc = len(rfirst), len(cfirst)
        base = lp.cols(tbl[np.ix_(rfirst, cfirst)].ravel())
        joint = base + np.arange(nr * nc)
        nu, nv = tbl.shape
        at = np.concatenate([np.repeat(np.arange(nr), nc), rinv])
        col = np.concatenate([joint, xoff[ru] + np.arange(nu)])
        val = np.concatenate([np.ones(nr * nc), -np.ones(nu)])
        lp.rows(nr, at, col, val, 0.0, 0.0)
        at = np.concatenate([np.tile(np.arange(nc), nr), cinv])
        col = np.concatenate([joint, xoff[rv] + np.arange(nv)])
        val = np.concatenate([np.ones(nr * nc), -np.ones(nv)])
        lp.rows(nc, at, col, val, 0.0, 0.0)
    for cut in p.cuts:
        picks = sorted({xoff[p.rep[n]] + k for n, k in cut})
        lp.rows(1, np.zeros(len(picks)), np.array(picks), 1.0, -np.inf, len(picks) - 1)
    return _Program(lp, xoff, nx)


def add_memory_rows(prog: _Program, p: Problem, budget: int) -> None:
    """Each live set's bytes at most `budget`, as a column: the one before plus what came and
    went between them (consecutive live sets share most of their terms, the arguments and
    results all of them), so the matrix holds the changes, not every live set whole. A term
    over two nodes takes the joint column of their pair of strategies (one per pair, made
    here)."""
    lp, xoff = prog.lp, prog.xoff
    joint: dict[tuple[int, int], int] = {}

    def pair(ru: int, rv: int) -> int:
        got = joint.get((ru, rv))
        if got is None:
            nu, nv = p.num_strategies[ru], p.num_strategies[rv]
            got = joint[(ru, rv)] = lp.cols(np.zeros(nu * nv))
            cells = got + np.arange(nu * nv)
            lp.rows(nu, np.concatenate([np.repeat(np.arange(nu), nv), np.arange(nu)]),
                    np.concatenate([cells, xoff[ru] + np.arange(nu)]),
                    np.concatenate([np.ones(nu * nv), -np.ones(nu)]), 0.0, 0.0)  # fmt: skip
            lp.rows(nv, np.concatenate([np.tile(np.arange(nv), nu), np.arange(nv)]),
                    np.concatenate([cells, xoff[rv] + np.arange(nv)]),
                    np.concatenate([np.ones(nu * nv), -np.ones(nv)]), 0.0, 0.0)  # fmt: skip
        return got

    before: dict[Term, int] = {}
    last = -1
    for mrow in p.memory_rows():
        cols: list[int] = []
        vals: list[float] = []
        for t, b in _changes(before, mrow):
            if len(t) == 2:
                cols.append(xoff[t[0]] + t[1])
            else:
                ru, rv, k, kv = t
                cols.append(pair(ru, rv) + k * p.num_strategies[rv] + kv)
            vals.append(-b)
        live = lp.cols(np.zeros(1), -np.inf, budget)
        cols.append(live)
        vals.append(1.0)
        if last >= 0:
            cols.append(last)
            vals.append(-1.0)
        lp.rows(1, np.zeros(len(cols)), np.array(cols), np.array(vals), 0.0, 0.0)
        before, last = mrow, live


def _changes(before: dict[Term, int], after: dict[Term, int]) -> list[tuple[Term, int]]:
    """The terms whose bytes differ from one memory row to the next, with the difference."""
    out = [(t, b - before.get(t, 0)) for t, b in after.items() if b != before.get(t, 0)]
    out.extend((t, -b) for t, b in before.items() if t not in after)
    return out


@dataclasses.dataclass
class Answer:
    """A solve's choice per node of the problem it was given, and how HiGHS ended."""

    choice: list[int]
    method: str


def _integral(x: np.ndarray) -> bool:
    """Whether every choice column of an answer is 0 or 1 (within HiGHS's tolerance)."""
    return bool(np.all(np.minimum(np.abs(x), np.abs(1 - x)) <= 1e-6))


def _choice(p: Problem, prog: _Program, x: np.ndarray) -> list[int]:
    out = []
    for n in range(len(p.num_strategies)):
        off = prog.xoff[p.rep[n]]
        out.append(int(np.argmax(x[off : off + p.num_strategies[p.rep[n]]])))
    return out


def solve_program(
    p: Problem, prog: _Program, options: dict[str, Any], gap: float
) -> Answer | None:
    """The LP relaxation first (often integral on these graphs, and then its answer is the
    MILP's optimum, proven, at a fraction of the MILP's time), the MILP where it is not, within
    `options`' deterministic limits (scipy's `milp` options). None where no layout is feasible
    or none was found."""
    from scipy.optimize import milp

    constraints, bounds = prog.lp.matrix()
    cost = prog.lp.costs()
    integrality = np.zeros(prog.lp.ncol)
    res = milp(cost, constraints=constraints, integrality=integrality, bounds=bounds,
               options=options)  # fmt: skip
    if res.status == 2:  # the relaxation is infeasible, so is every layout
        return None
    if res.status == 0 and res.x is not None and _integral(res.x[: prog.nx]):
        return Answer(_choice(p, prog, res.x), "highs optimal")
    integrality[: prog.nx] = 1
    res = milp(cost, constraints=constraints, integrality=integrality, bounds=bounds,
               options=options)  # fmt: skip
    if res.x is None:  # nothing found within the limits
        return None
    if res.status != 0:
        method = "highs feasible (node limit)"
    elif (getattr(res, "mip_gap", 0) or 0) > 1e-9:
        method = f"highs within {gap:.0%} of optimal"
    else:
        method = "highs optimal"
    return Answer(_choice(p, prog, res.x), method)
