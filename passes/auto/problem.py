"""The strategy graph as plain numbers: the exact problem the solver sees (no IR, no shardings).

Node costs (the collectives a strategy implies, plus resharding a node's own values and the
layouts the function's results must have), edge cost tables between a producer's and a
consumer's strategies, each value's local bytes per strategy of its node, and the memory rows
over which the per-device memory is bounded: the plan's measure of each layout (arguments +
results + the temporaries live at each point of the plan's schedule, `_plan_rows`), so that
the peak the solve bounds is the memory `shardc plan` gives the layout it chooses. Nodes with
the same structure in the same surroundings (repeated layers) are tied to one representative,
so a stack of identical layers is one set of choices.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from shardc.dialect.ir import Module, Operation, OpResult, Value, func_body
from shardc.dialect.rules.registry import usable_rule
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import TensorType, element_bytes

from ..plan import layout as plan_layout
from ..plan.liveness import liveness
from ..plan.memory import (
    POINTER,
    aligned,
    block_buffers,
    fusible_result,
    is_argument_of,
    result_bytes,
    tensor_of,
)
from ..plan.memory import value_bytes as plan_value_bytes
from ..plan.op_cost import op_steps
from ..plan.plan import collective_buffer, gather_copy
from ..plan.steps import ALL_GATHER, ALL_SLICE
from .cost import reshard_buffer, reshard_steps_of
from .graph import (
    FOLLOW_OPS,
    Node,
    StrategyGraph,
    edge_bytes,
    is_choice_tensor,
    resolve_required,
    value_bytes,
)


@dataclass
class Problem:
    """Costs in weighted bytes; memory in bytes; `rep[n]` is the node whose choice n shares."""

    num_strategies: list[int]
    node_cost: list[list[float]]
    # (u, v) -> cost table [k_u][k_v]; u != v; one table per pair (parallel edges summed)
    edges: dict[tuple[int, int], list[list[float]]]
    value_node: list[int]
    value_bytes: list[list[int]]
    # reshard temporaries: (producer, consumer, bytes[k_producer][k_consumer])
    temps: list[tuple[int, int, list[list[int]]]] = field(default_factory=list)
    rep: list[int] = field(default_factory=list)
    # layouts ruled out: each a list of (node, strategy) that may not all be chosen together
    cuts: list[list[tuple[int, int]]] = field(default_factory=list)
    # the memory bound as rows over the representatives' choices (`memory_rows`); None: made
    # by `make_rows` where asked (none without it)
    rows: list[dict[Term, int]] | None = None
    # `row_bytes`'s index of `rows`: (the rows it was made of, their matrix over the terms)
    _matrix: tuple[list, _RowMatrix] | None = field(default=None, init=False, repr=False)
    # where given: `rows` made when first asked (a solve without a budget asks only for the
    # peak of its answer)
    make_rows: Callable[[], list[dict[Term, int]]] | None = None

    def __post_init__(self) -> None:
        if not self.rep:
            self.rep = list(range(len(self.num_strategies)))

    def objective(self, choice: list[int]) -> float:
        total = sum(c[choice[n]] for n, c in enumerate(self.node_cost))
        for (u, v), table in self.edges.items():
            total += table[choice[u]][choice[v]]
        return total

    def memory_rows(self) -> list[dict[Term, int]]:
        """The memory bound as rows over the representatives' choices: `rows`, made by
        `make_rows` when first asked."""
        if self.rows is None and self.make_rows is not None:
            self.rows = self.make_rows()
        return self.rows if self.rows is not None else []

    def rows_at_hand(self) -> bool:
        """Whether the memory rows are made (or there are none to make): a solve without a
        budget gives its answer's peak only then."""
        return self.rows is not None or self.make_rows is None

    def peak_memory(self, choice: list[int]) -> int:
        """The largest row's bytes, each node taking its representative's choice."""
        return max(self.row_bytes(choice), default=0)

    def row_matrix(self) -> _RowMatrix:
        """The memory rows as a sparse matrix over their terms (made once)."""
        rows = self.memory_rows()
        if self._matrix is None or self._matrix[0] is not rows:
            self._matrix = (rows, _RowMatrix(rows))
        return self._matrix[1]

    def row_bytes(self, choice: list[int]) -> list[int]:
        """Each memory row's bytes under `choice` (the rows as a sparse matrix over their
        terms, made once: `explain` and the solve's row generation ask this of many
        layouts)."""
        if not self.memory_rows():
            return []
        return self.row_matrix().bytes(choice)


# a memory row's term: (rep, k) is "rep takes strategy k"; (ru, rv, ku, kv) "ru takes ku and
# rv takes kv" (a reshard temporary between two tied choices)
Term = tuple[int, ...]


class _RowMatrix:
    """Memory rows as a sparse matrix over their terms: a row's bytes under a choice are the
    matrix times the vector of which terms the choice takes (a term (r, k) where r takes k, a
    term (ru, rv, ku, kv) where both do)."""

    def __init__(self, rows: list[dict[Term, int]]):
        from scipy.sparse import csr_matrix

        # (per row, the terms new to `col` found by a set difference, which looks each of the
        # row's terms up in `col`, and all of them looked up by `map`: the rows hold millions
        # of entries, too many for a Python loop per entry)
        col: dict[Term, int] = {}
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        indices: list[int] = []
        data: list[int] = []
        for i, row in enumerate(rows):
            for t in sorted(set(row).difference(col)):
                col[t] = len(col)
            indices.extend(map(col.__getitem__, row))
            data.extend(row.values())
            indptr[i + 1] = len(indices)
        self.matrix = csr_matrix(
            (np.array(data, dtype=np.int64), np.array(indices, dtype=np.int64), indptr),
            shape=(len(rows), len(col)),
        )
        singles = [(j, t) for t, j in col.items() if len(t) == 2]
        pairs = [(j, t) for t, j in col.items() if len(t) == 4]
        self.single_cols = np.array([j for j, _ in singles], dtype=np.int64)
        self.single = np.array([t for _, t in singles], dtype=np.int64).reshape(-1, 2)
        self.pair_cols = np.array([j for j, _ in pairs], dtype=np.int64)
        self.pair = np.array([t for _, t in pairs], dtype=np.int64).reshape(-1, 4)
        self.width = len(col)

    def bytes(self, choice: list[int]) -> list[int]:
        """Each row's bytes under `choice` (the strategy of every node a term names)."""
        c = np.asarray(choice, dtype=np.int64)
        taken = np.zeros(self.width, dtype=np.int64)
        s, q = self.single, self.pair
        taken[self.single_cols] = c[s[:, 0]] == s[:, 1]
        taken[self.pair_cols] = (c[q[:, 0]] == q[:, 2]) & (c[q[:, 1]] == q[:, 3])
        return [int(x) for x in self.matrix @ taken]


class _Sweep:
    """A memory row (term -> bytes) kept as values and temporaries come and go, with its
    fingerprints: two random linear forms of its coefficients (rows that are equal, or whose
    steps are equal, agree on them; rows that are not, with odds under 2^-120) and one of its
    set of terms (rows over the same terms)."""

    def __init__(self, p: Problem):
        self.p = p
        self.row: dict[Term, int] = {}
        self.f1 = self.f2 = self.support = 0
        self.weights: dict[Term, tuple[int, int, int]] = {}
        self.memo: dict[tuple, list[tuple[Term, int, tuple[int, int, int]]]] = {}

    def terms(self, items: list[tuple[Term, int]]) -> list[tuple[Term, int, tuple[int, int, int]]]:
        """`items` (term, bytes) with each term's fingerprint weights, as `add` takes them."""
        out = []
        for t, b in items:
            w = self.weights.get(t)
            if w is None:
                d = hashlib.blake2b(repr(t).encode(), digest_size=24).digest()
                w = self.weights[t] = (
                    int.from_bytes(d[:8], "little"),
                    int.from_bytes(d[8:16], "little"),
                    int.from_bytes(d[16:], "little"),
                )
            out.append((t, b, w))
        return out

    def temp_terms(self, ti: int) -> list[tuple[Term, int, tuple[int, int, int]]]:
        u, v, tbl = self.p.temps[ti]
        ru, rv = self.p.rep[u], self.p.rep[v]
        key = (ru, rv, id(tbl))
        got = self.memo.get(key)
        if got is None:
            if ru == rv:
                items: list[tuple[Term, int]] = [
                    ((ru, k), tbl[k][k]) for k in range(len(tbl)) if tbl[k][k]
                ]
            else:
                items = [((ru, rv, k, kv), b) for k, trow in enumerate(tbl)
                         for kv, b in enumerate(trow) if b]  # fmt: skip
            got = self.memo[key] = self.terms(items)
        return got

    def add(self, terms: list[tuple[Term, int, tuple[int, int, int]]], sign: int) -> None:
        row = self.row
        for t, b, (w1, w2, w3) in terms:
            c = row.get(t, 0)
            if not c:
                self.support ^= w3
            c += sign * b
            if c:
                row[t] = c
            else:
                del row[t]
                self.support ^= w3
            self.f1 += sign * b * w1
            self.f2 += sign * b * w2

    def mark(self) -> tuple[int, int, int] | None:
        """The row's fingerprints (None: empty)."""
        return (self.f1, self.f2, self.support) if self.row else None


def kept_rows(marks: list[tuple[int, int, int] | None]) -> list[int]:
    """Which rows (in program order, by their fingerprints `_Sweep.mark`) bound anything:
    not empty, not a duplicate, not inside a run of equal steps. Repeated layers share one
    choice, so the live sets of layer k of a stack are one row with the layer's bytes counted
    k times (activations saved by the layers before, gradients of the layers after): the rows
    over the same terms form runs with equal steps, and a row inside a run is the mean of its
    neighbours, so the run's two ends bound it. The rows kept do not grow with the number of
    repeated layers."""
    seen: set[tuple[int, int]] = set()
    order: list[int] = []
    for i, m in enumerate(marks):
        if m is not None and m[:2] not in seen:
            seen.add(m[:2])
            order.append(i)
    groups: dict[int, list[int]] = {}
    for i in order:
        groups.setdefault(marks[i][2], []).append(i)  # type: ignore[index]
    inner: set[int] = set()
    for members in groups.values():
        # a layer makes several rows over the same terms: the runs are those of every
        # `period`-th row; one period per group (the one that finds most), so that each row
        # dropped lies between two rows kept
        best: set[int] = set()
        for period in range(1, min(len(members) // 2, MAX_PERIOD) + 1):
            found = _inner_rows(marks, members, period)
            if len(found) > len(best):
                best = found
        inner |= best
    return [i for i in order if i not in inner]


# the most rows a repeated layer makes over the same terms that `kept_rows` looks through
MAX_PERIOD = 16


def _inner_rows(
    marks: list[tuple[int, int, int] | None], members: list[int], period: int
) -> set[int]:
    """The rows strictly inside runs of equal steps of every `period`-th member."""
    out: set[int] = set()
    for start in range(period):
        seq = [marks[i] for i in members[start::period]]
        for i in range(1, len(seq) - 1):
            a, b, c = seq[i - 1], seq[i], seq[i + 1]
            if a[0] + c[0] == 2 * b[0] and a[1] + c[1] == 2 * b[1]:  # type: ignore[index]
                out.add(members[start + i * period])
    return out


def build_problem(g: StrategyGraph, module: Module, tie: bool = True) -> Problem:
    """Turn the graph of `module` (as propagated) into numbers: costs per strategy, tables per
    edge, each value's bytes, and the memory rows, the plan's measure of each layout
    (`_plan_rows`), made when first asked (`Problem.make_rows`: a solve without a budget
    never asks, and the pass reports the plan's memory of the layout it chose instead)."""
    mesh = g.mesh
    weights = g.weights
    nodes = g.nodes
    fp = [hash(tuple((tuple(s.outs), tuple(s.ins)) for s in n.strategies)) for n in nodes]
    ns = [len(n.strategies) for n in nodes]
    cost = [[s.cost for s in n.strategies] for n in nodes]
    edges: dict[tuple[int, int], list[list[float]]] = {}
    memo: dict[tuple, float] = {}

    def eb(v, src, req) -> float:  # noqa: ANN001 - IR values and shardings
        key = (v.type, src, req)
        r = memo.get(key)
        if r is None:
            r = memo[key] = edge_bytes(v, src, req, mesh, weights)
        return r

    table_memo: dict[tuple, list[list[float]]] = {}
    # nodes alike (repeated layers) pay alike for reading their own values and for results
    row_memo: dict[tuple, list[float]] = {}
    # the plan's buffers of the module as it is now (the rows, made later, read them)
    plan = _PlanBuffers(g, module)

    for vi, node, i, x, ui, j in _reads(g):
        tkey = (fp[ui], j, fp[vi], i, x.type)
        if ui == vi:
            own = row_memo.get(tkey)
            if own is None:
                own = row_memo[tkey] = [eb(x, s.outs[j], s.ins[i]) for s in node.strategies]
            cost[vi] = [a + b for a, b in zip(cost[vi], own, strict=True)]
            continue
        tbl = table_memo.get(tkey)
        if tbl is None:
            tbl = [
                [eb(x, ps.outs[j], cs.ins[i]) for cs in node.strategies]
                for ps in nodes[ui].strategies
            ]
            table_memo[tkey] = tbl
        _add_table(edges, ui, vi, tbl)
    for x, req in g.sinks:
        loc = g.where.get(id(x))
        if loc is None:
            continue
        ui, j = loc
        skey = (fp[ui], j, x.type, req)
        own = row_memo.get(skey)
        if own is None:
            own = row_memo[skey] = [eb(x, s.outs[j], req) for s in nodes[ui].strategies]
        cost[ui] = [a + b for a, b in zip(cost[ui], own, strict=True)]
    for x, _, an in g.paired_sinks:
        # a result paired with an argument leaves in the argument's layout
        loc = g.where.get(id(x))
        if loc is None:
            continue
        ui, j = loc
        outs = [s.outs[0] for s in nodes[an].strategies]
        if ui == an:
            for k, s in enumerate(nodes[ui].strategies):
                cost[ui][k] += eb(x, s.outs[j], outs[k])
            continue
        tbl = [[eb(x, ps.outs[j], o) for o in outs] for ps in nodes[ui].strategies]
        if ui < an:
            _add_table(edges, ui, an, tbl)
        else:
            _add_table(edges, an, ui, [list(col) for col in zip(*tbl, strict=True)])
    value_node: list[int] = []
    vbytes: list[list[int]] = []
    bytes_memo: dict[tuple, list[int]] = {}
    for n, node in enumerate(nodes):
        for j, v in enumerate(node.values):
            value_node.append(n)
            if not materialized(v):
                vbytes.append([0] * len(node.strategies))
                continue
            # nodes alike (repeated layers) give their values the same bytes per strategy
            bkey = (fp[n], j, v.type)
            row = bytes_memo.get(bkey)
            if row is None:
                row = bytes_memo[bkey] = [value_bytes(v, s.outs[j], mesh) for s in node.strategies]
            vbytes.append(row)
    p = Problem(ns, cost, edges, value_node, vbytes)
    if tie:
        p.rep = tie_repeated(g, p, fingerprints=fp)
    _tie_classes(g, p)
    p.make_rows = lambda: _memory_rows_of(g, p, plan, fp)
    return p


def _memory_rows_of(
    g: StrategyGraph, p: Problem, plan: _PlanBuffers, fp: list[int]
) -> list[dict[Term, int]]:
    """The memory rows of `build_problem`'s problem (`_plan_rows`), with the reshards'
    temporaries they count (`Problem.temps`): made only where a solve bounds memory."""
    mesh = g.mesh
    nodes = g.nodes
    temp_memo: dict[tuple, list[list[int]]] = {}
    temps: list[tuple[int, int, list[list[int]]]] = []
    temp_span: list[tuple[int, int]] = []  # (the plan's rows: in its points, see `_plan_rows`)
    # values only a reshard gives a buffer of their own: (node, value, first, last point)
    gathered: list[tuple[int, int, int, int]] = []
    # per producer's value: the readers that may reshard it (position, node, input)
    readers: dict[tuple[int, int], list[tuple[int, int, int]]] = {}

    def tb(v, src, req, reader) -> int:  # noqa: ANN001 - bytes of the resharded copy, 0 if none
        if not _moves(src, req):
            return 0
        r = resolve_required(src, req)
        return plan.reshard(v, src, r) + plan.gather_copy(v, src, r, reader)

    for vi, node, i, x, ui, j in _reads(g):
        producer = nodes[ui]
        reader = node.input_at[i][0].name
        tkey = (fp[ui], j, fp[vi], i, x.type, plan.gathers(x), reader)
        mt = temp_memo.get(tkey)
        if mt is None:
            mt = temp_memo[tkey] = [
                [tb(x, ps.outs[j], cs.ins[i], reader) for cs in node.strategies]
                for ps in producer.strategies
            ]
        pos = g.position.get(id(node.input_at[i][0]), 0)
        if any(any(row) for row in mt):
            if is_argument_of(x, plan.body):
                # an argument's all-gathers run at the start of the program
                # (`passes.plan.memory.is_argument_of`), its other reshards and the copy of
                # what the gathers give (`passes.plan.plan.gather_copy`) at the reader
                early = [
                    [b - plan.gather_copy(x, ps.outs[j], resolve_required(ps.outs[j], cs.ins[i]),
                                          reader)
                     if b and plan.gathers_only(x, ps.outs[j], cs.ins[i]) else 0
                     for b, cs in zip(row, node.strategies, strict=True)]
                    for row, ps in zip(mt, producer.strategies, strict=True)
                ]  # fmt: skip
                late = [[b - e for b, e in zip(r1, r2, strict=True)]
                        for r1, r2 in zip(mt, early, strict=True)]  # fmt: skip
                for part, first in ((early, 0), (late, 2 * pos - 1)):
                    if any(any(row) for row in part):
                        temps.append((ui, vi, part))
                        temp_span.append((first, 2 * pos - 1))
            else:
                temps.append((ui, vi, mt))
                temp_span.append((2 * pos - 1, 2 * pos - 1))
            readers.setdefault((ui, j), []).append((pos, vi, i))
        fused = plan.fused_producer(x)
        early_x = is_argument_of(x, plan.body)  # (what the start gathers is read there)
        if fused:
            # a reshard that only slices a value an op XLA fuses makes: the producer fuses
            # into the slice, whose buffer lives from the producer to the reader
            # (`passes.plan.memory.Buffers.sliced`)
            sl = temp_memo.get((*tkey, "sliced"))
            if sl is None:
                sl = temp_memo[(*tkey, "sliced")] = [
                    [plan.sliced(x, ps.outs[j], cs.ins[i]) for cs in node.strategies]
                    for ps in producer.strategies
                ]
            if any(any(row) for row in sl):
                temps.append((ui, vi, sl))
                temp_span.append((2 * g.live.get((ui, j), (pos, pos))[0], 2 * pos - 1))
        if plan.gathers(x):
            # a reshard that moves data makes `x` a buffer of its own, over its uses: its
            # bytes at the producer's layout, less where the reader takes that layout or
            # only slices it (a sparse table: a dense one over every pair of choices in every
            # row of the span would make the rows several times denser)
            kept = temp_memo.get((*tkey, "kept"))
            if kept is None:
                kept = temp_memo[(*tkey, "kept")] = [
                    [0 if _moves(ps.outs[j], cs.ins[i])
                     and not (fused and plan.slices_only(x, ps.outs[j], cs.ins[i]))
                     and not (fused and early_x and plan.gathers_only(x, ps.outs[j], cs.ins[i]))
                     else -aligned(value_bytes(x, ps.outs[j], mesh)) for cs in node.strategies]
                    for ps in producer.strategies
                ]  # fmt: skip
            first, last = g.live.get((ui, j), (pos, pos))
            if any(b == 0 for row in kept for b in row):  # some choice reshards it
                gathered.append((ui, j, 2 * first, 2 * last))
                if any(any(row) for row in kept):
                    temps.append((ui, vi, kept))
                    temp_span.append((2 * first, 2 * last))
    for (ui, j), reads in readers.items():
        _reused_reshards(g, plan, ui, j, reads, temps, temp_span)
    p.temps = temps
    return _plan_rows(g, p, plan, temp_span, gathered, fp)


def _reads(g: StrategyGraph):  # noqa: ANN202 - an iterator of tuples
    """Each input of a node that a node of the graph produces: (reader, its node, the input's
    index, the value, producer, the value's index among the producer's)."""
    for vi, node in enumerate(g.nodes):
        for i, x in enumerate(node.inputs):
            loc = g.where.get(id(x))
            if loc is not None:
                yield vi, node, i, x, loc[0], loc[1]


def _reused_reshards(
    g: StrategyGraph,
    plan: _PlanBuffers,
    ui: int,
    j: int,
    reads: list[tuple[int, int, int]],
    temps: list[tuple[int, int, list[list[int]]]],
    temp_span: list[tuple[int, int]],
) -> None:
    """XLA computes a reshard of a value to one layout once and later readers reuse it (the
    plan's CSE): its buffer lives from the first reader to the last. Between two readers in a
    row that reshard value j of node `ui` to the same layout, that buffer is a temporary over
    the pair of their choices, where the producer has one layout (with several, which readers
    agree depends on three choices: not modelled, each reader counts its own reshard only)."""
    producer = g.nodes[ui]
    if len(producer.strategies) != 1 or len(reads) < 2:
        return
    src = producer.strategies[0].outs[j]
    x = producer.values[j]
    reads = sorted(reads)
    for (pa, va, ia), (pb, vb, ib) in zip(reads, reads[1:], strict=False):
        if pb <= pa:
            continue
        want_a = [resolve_required(src, s.ins[ia]) for s in g.nodes[va].strategies]
        want_b = [resolve_required(src, s.ins[ib]) for s in g.nodes[vb].strategies]
        tbl = [
            [plan.reshard(x, src, a) if _same_axes(a, b) and not _same_axes(a, src) else 0
             for b in want_b]
            for a in want_a
        ]  # fmt: skip
        if any(any(row) for row in tbl):
            temps.append((va, vb, tbl))
            temp_span.append((2 * pa, 2 * pb - 2))


def _same_axes(a: TensorSharding, b: TensorSharding) -> bool:
    return [d.axes for d in a.dims] == [d.axes for d in b.dims]


def _moves(src: TensorSharding, req: TensorSharding) -> bool:
    """Whether a value laid out `src` is resharded where `req` is needed."""
    return [d.axes for d in resolve_required(src, req).dims] != [d.axes for d in src.dims]


def _tie_classes(g: StrategyGraph, p: Problem) -> None:
    """Arguments of one class (arguments.py: repeated layers' leaves, a moment and its
    parameter) share one choice: their representatives are tied to the first member's."""
    for members in g.arg_classes:
        head = p.rep[members[0]]
        for n in members[1:]:
            r = p.rep[n]
            if r == head or p.num_strategies[r] != p.num_strategies[head]:
                continue
            p.rep = [head if x == r else x for x in p.rep]


def fused(v) -> bool:  # noqa: ANN001 - an IR value
    """A value whose only reader is element-wise: XLA fuses it into that reader, so it never
    takes memory of its own (function results are always materialized)."""
    if len(v.uses) != 1:
        return False
    user = v.uses[0][0]
    return user.name in FOLLOW_OPS and user.name != "func.return"


def materialized(v) -> bool:  # noqa: ANN001 - an IR value
    """Whether XLA gives `v` a buffer: broadcasts fuse into every reader, and so does a value
    read once by an element-wise op (function results always have one)."""
    if isinstance(v, OpResult) and v.owner.name == "stablehlo.broadcast_in_dim":
        return any(user.name == "func.return" for user, _ in v.uses)
    return not fused(v)


def _add_table(edges: dict, u: int, v: int, tbl: list[list[float]]) -> None:
    if not any(any(row) for row in tbl):
        return
    key = (u, v)
    if key in edges:
        old = edges[key]
        edges[key] = [
            [a + b for a, b in zip(r1, r2, strict=True)] for r1, r2 in zip(old, tbl, strict=True)
        ]
    else:
        edges[key] = tbl


class _PlanBuffers:
    """The plan's memory of the graph's function as data (`passes.plan.memory.block_buffers`:
    its schedule, the values XLA gives a buffer, in-place reuse, regions' peaks), and the
    plan's bytes of a reshard's temporary (`cost.reshard_buffer`)."""

    def __init__(self, g: StrategyGraph, module: Module):
        self.g = g
        self.module = module
        func = module.funcs[g.func_name]
        body = func_body(func)
        assert body is not None
        self.func, self.body = func, body
        self.mesh_of = lambda s: plan_layout.mesh_of(module, s)  # noqa: E731
        self.found = block_buffers(
            body, self.mesh_of, module.funcs, liveness(module), outputs=func
        )
        ret = body.terminator
        self.returned = {id(v) for v in ret.operands} if ret is not None else set()
        self.memo: dict[tuple, int] = {}

    def gathers(self, x: Value) -> bool:
        """Whether a collective reading `x` gives it a buffer of its own (the plan's
        `Buffers.read`): a temporary that fusion would otherwise fold away."""
        owner = getattr(x, "owner", None)
        held = self.found.held.get(id(x))
        return (
            owner is not None
            and owner.name not in _NO_BUFFER_OWNERS
            # (a library reduce's input is held only where it is large enough locally: a
            # collective's read gives it its buffer, an upper bound where both do)
            and (held is None or self.found.buffers[held].min_elements > 0)
            and id(x) not in self.returned
        )

    def op_buffer(self, node: Node, k: int) -> int:
        """The plan's temporary bytes at `node`'s op under its strategy k: the buffers of the
        collectives the op itself runs (`passes.plan.op_cost.op_steps`, XLA's model of it),
        an all-reduce held only where it sums a returned value."""
        op, s = node.op, node.strategies[k]
        rule = usable_rule(op) if op is not None else None
        if op is None or rule is None or node.kind != "op":
            return 0
        key = (rule, tuple(v.type for v in (*op.operands, *op.results)), tuple(s.ins),
               tuple(s.outs[: len(op.results)]), self._returns(op))  # fmt: skip
        got = self.memo.get(key)
        if got is not None:
            return got
        ins, outs = iter(s.ins), iter(s.outs)
        tensors = []
        for v, it in [*((v, ins) for v in op.operands), *((r, outs) for r in op.results)]:
            t = tensor_of(v, next(it) if is_choice_tensor(v) else None)
            if t is None:
                self.memo[key] = 0
                return 0
            tensors.append(t)
        steps = op_steps(rule, tensors, self.g.mesh, style="xla", dot=op.name in _DOTS)
        returned = key[-1]
        total = sum(
            collective_buffer(st, self.g.mesh, returned[i]) for i, st in enumerate(steps.operands)
        )
        n = len(op.operands)
        total += sum(collective_buffer([x], self.g.mesh, returned[n + j])
                     for j, st in enumerate(steps.results) for x in st)  # fmt: skip
        self.memo[key] = got = aligned(total)
        return got

    @staticmethod
    def _returns(op: Operation) -> tuple[bool, ...]:
        """Per operand then result of `op`: whether a function returns it."""
        return tuple(any(u.name == "func.return" for u in v.users)
                     for v in (*op.operands, *op.results))  # fmt: skip

    def fused_producer(self, x: Value) -> bool:
        """Whether `x` is made by an op XLA fuses into its readers (a slice among them)."""
        return getattr(x, "owner", None) is not None and fusible_result(x, self.module.funcs)

    def slices_only(self, x: Value, src: TensorSharding, req: TensorSharding) -> bool:
        """Whether the plan reshards `x` from `src` to what `req` asks by slicing alone."""
        return self._steps_all(x, src, req, ALL_SLICE)

    def _steps_all(self, x: Value, src: TensorSharding, req: TensorSharding, kind: str) -> bool:
        """Whether the plan reshards `x` from `src` to what `req` asks, and by steps of `kind`
        alone (memoized: the rows ask this of every pair of strategies of every edge)."""
        t = x.type
        assert isinstance(t, TensorType)
        key = ("all", kind, t, src, req)
        got = self.memo.get(key)
        if got is None:
            got = False
            # (slices only where the layout moves; gathers as the steps say)
            if kind != ALL_SLICE or _moves(src, req):
                dst = resolve_required(src, req)
                nbytes = element_bytes(t.element_type)
                steps = reshard_steps_of(t.shape, nbytes, src, dst, self.g.mesh)
                got = bool(steps) and all(s.kind == kind for s in steps)
            self.memo[key] = got
        return bool(got)

    def sliced(self, x: Value, src: TensorSharding, req: TensorSharding) -> int:
        """The bytes of the slice of `x` where the plan reshards it from `src` to what `req`
        asks by slicing alone, on XLA's 64-byte boundary (0 otherwise)."""
        if not self.slices_only(x, src, req):
            return 0
        return aligned(value_bytes(x, resolve_required(src, req), self.g.mesh))

    def gathers_only(self, x: Value, src: TensorSharding, req: TensorSharding) -> bool:
        """Whether the plan reshards `x` from `src` to what `req` asks by all-gathers alone."""
        return self._steps_all(x, src, req, ALL_GATHER)

    def gather_copy(self, x: Value, src: TensorSharding, dst: TensorSharding, reader: str) -> int:
        """The plan's bytes of the copy XLA makes of `x` gathered from `src` to `dst` for an op
        named `reader` (`passes.plan.plan.gather_copy`), on XLA's 64-byte boundary."""
        t = x.type
        assert isinstance(t, TensorType)
        key = ("copy", t, src, dst, reader)
        out = self.memo.get(key)
        if out is None:
            nbytes = element_bytes(t.element_type)
            steps = reshard_steps_of(t.shape, nbytes, src, dst, self.g.mesh)
            out = aligned(gather_copy(steps, src, t.shape, nbytes, self.g.mesh, reader))
            self.memo[key] = out
        return out

    def reshard(self, x: Value, src: TensorSharding, dst: TensorSharding) -> int:
        """The plan's temporary bytes where `x`, laid out `src`, is resharded to `dst`: the
        collectives' buffer (`x`'s own, where only the collective makes it one, is a
        temporary of its own over `x`'s uses: `build_problem`)."""
        t = x.type
        assert isinstance(t, TensorType)
        returned = any(u.name == "func.return" for u in x.users)
        key = (t, src, dst, returned)
        out = self.memo.get(key)
        if out is None:
            out = reshard_buffer(t.shape, element_bytes(t.element_type), src, dst, self.g.mesh,
                                 returned)  # fmt: skip
            self.memo[key] = out
        return out


_DOTS = frozenset({"stablehlo.dot_general", "stablehlo.dot"})
# owners whose values never take a buffer of their own (the plan's constants and the ops that
# are the buffer they read)
_NO_BUFFER_OWNERS = frozenset(
    {"stablehlo.constant", "sdy.constant", "sdy.sharding_constraint", "sdy.reshard",
     "stablehlo.reshape", "stablehlo.bitcast_convert"}
)  # fmt: skip


def _plan_rows(
    g: StrategyGraph,
    p: Problem,
    plan: _PlanBuffers,
    temp_span: list[tuple[int, int]],
    gathered: list[tuple[int, int, int, int]],
    fp: list[int],
) -> list[dict[Term, int]]:
    """The plan's memory of each layout as rows over the representatives' choices: the
    arguments and results (XLA's memory_analysis counts them whole) in every row, and the
    temporaries live at each point of the plan's schedule (`_PlanBuffers`): each value's
    buffer at the layout its node chooses (aligned as the plan aligns it), what the layout
    does not change (scalars, regions' peaks) as measured now, and each reshard's temporary
    just before the op that reads it (op k of the body is point 2k; its reshards, 2k - 1),
    with the value's own buffer over its uses where only the reshard makes it one (counted
    per reshard: a value two readers reshard is counted twice)."""
    mesh = g.mesh
    sweep = _Sweep(p)
    anchor = p.rep[0]
    # nodes tied to others (repeated layers)
    tied = {n for n, r in enumerate(p.rep) if r != n} | {r for n, r in enumerate(p.rep) if r != n}
    memo: dict[tuple, list[tuple[Term, int, tuple[int, int, int]]]] = {}

    def const(c: int) -> list[tuple[Term, int, tuple[int, int, int]]]:
        if not c:
            return []
        return sweep.terms([((anchor, k), c) for k in range(p.num_strategies[anchor])])

    def on_node(n: int, j: int, v: Value, key: tuple, size) -> list:  # noqa: ANN001
        """Terms of a buffer of `v` whose bytes follow node n's strategies (`size(k, s)`)."""
        mkey = (p.rep[n], fp[n], j, v.type, key)
        got = memo.get(mkey)
        if got is None:
            items = [((p.rep[n], k), size(k, s)) for k, s in enumerate(g.nodes[n].strategies)]
            got = memo[mkey] = sweep.terms([(t, b) for t, b in items if b])
        return got

    pieces: list[tuple[int, int, list]] = []
    end = 2 * g.num_positions + 2
    # the arguments and results
    for a in plan.body.args:
        loc = g.where.get(id(a))
        if loc is None:
            pieces.append((-1, end, const(plan_value_bytes(a, plan.mesh_of))))
        else:
            n, j = loc
            pieces.append((-1, end, on_node(n, j, a, ("arg",),
                                            lambda _, s, j=j, a=a: value_bytes(a, s.outs[j], mesh))))  # fmt: skip
    ret = plan.body.terminator
    # per result: (the node whose choice its bytes follow, -1 none; its bytes per choice)
    out_bytes: dict[int, tuple[int, list[int]]] = {}
    if ret is not None:
        sinks = {id(x): req for x, req in g.sinks}
        paired = {id(x): an for x, _, an in g.paired_sinks}
        for i, v in enumerate(ret.operands):
            loc = g.where.get(id(v))
            if loc is not None and id(v) in paired:
                an = paired[id(v)]
                out_bytes[i] = (an, [value_bytes(v, s.outs[0], mesh) for s in g.nodes[an].strategies])
                pieces.append((-1, end, on_node(an, 0, v, ("paired", v.type),
                                                lambda _, s, v=v: value_bytes(v, s.outs[0], mesh))))  # fmt: skip
            elif loc is not None and id(v) in sinks:
                n, j = loc
                req = sinks[id(v)]
                out_bytes[i] = (n, [value_bytes(v, resolve_required(s.outs[j], req), mesh)
                                    for s in g.nodes[n].strategies])  # fmt: skip
                pieces.append((-1, end, on_node(n, j, v, ("result", req),
                    lambda _, s, j=j, v=v, req=req: value_bytes(v, resolve_required(s.outs[j], req), mesh))))  # fmt: skip
            else:
                out_bytes[i] = (-1, [result_bytes(plan.func, i, v, plan.mesh_of)])
                pieces.append((-1, end, const(out_bytes[i][1][0])))
        if len(ret.operands) > 1:
            pieces.append((-1, end, const(POINTER * len(ret.operands))))
    # the temporaries of the plan's schedule, less those the results' allocations take
    # (`passes.plan.memory.output_reuse`: where the temporary's bytes fit its result's)
    for i, b in enumerate(plan.found.buffers):
        v = b.value
        loc = g.where.get(id(v)) if v is not None else None
        if loc is None and v is not None and b.min_elements:
            # (a library reduce's input that is no node, a broadcast: its reader's layout)
            loc = next((g.where[id(r)] for u in v.users for r in u.results
                        if r.type == v.type and id(r) in g.where), None)  # fmt: skip
        if loc is None:
            terms = const(b.nbytes)
            raw = plan_value_bytes(v, plan.mesh_of) if v is not None else b.nbytes
            own: tuple[int, list[int], list[int]] = (-1, [b.nbytes], [raw])
        else:
            n, j = loc
            # (a library reduce's input has a buffer only where it is large enough locally:
            # `passes.plan.memory.library_only`)
            least = b.min_elements * _elem_bytes(v)
            terms = on_node(n, j, v, ("temp", least), lambda _, s, j=j, v=v, least=least: (
                aligned(_at_least(value_bytes(v, s.outs[j], mesh), least))))  # fmt: skip
            raws = [_at_least(value_bytes(v, s.outs[j], mesh), least)
                    for s in g.nodes[n].strategies]  # fmt: skip
            own = (n, [aligned(x) for x in raws], raws)
        pieces.append((2 * b.start, 2 * b.end, terms))
        r = plan.found.slot_of.get(i)
        # (not for repeated layers: which layer's result a temporary takes varies from layer
        # to layer, and the rows of tied layers must step alike: there the rows count the
        # temporary, an upper bound of the plan's figure)
        if r is not None and r in out_bytes and own[0] not in tied and out_bytes[r][0] not in tied:
            fit = _fit_terms(p, own, out_bytes[r], anchor)
            if fit:
                pieces.append((2 * b.start, 2 * b.end, sweep.terms(fit)))
    for ti, (first, last) in enumerate(temp_span):
        pieces.append((first, last, sweep.temp_terms(ti)))
    for n, j, first, last in gathered:
        v = g.nodes[n].values[j]
        pieces.append((first, last, on_node(n, j, v, ("gathered",),
                       lambda _, s, j=j, v=v: aligned(value_bytes(v, s.outs[j], mesh)))))  # fmt: skip
    # the collectives an op's strategy runs itself, at the op
    for n, node in enumerate(g.nodes):
        if node.kind != "op" or node.op is None:
            continue
        terms = on_node(n, -1, node.op.results[0], ("op",), lambda k, _, node=node: plan.op_buffer(
            node, k))  # fmt: skip
        if terms:
            pos = g.position.get(id(node.op), 0)
            pieces.append((2 * pos, 2 * pos, terms))
    # the reshards of the function's results at its return (a returned value's partial sums
    # are a temporary there)
    at = 2 * (g.num_positions - 1)
    for x, req in g.sinks:
        loc = g.where.get(id(x))
        if loc is not None:
            n, j = loc
            terms = on_node(n, j, x, ("sink", req), lambda _, s, j=j, x=x, req=req: plan.reshard(
                x, s.outs[j], resolve_required(s.outs[j], req)))  # fmt: skip
            pieces.append((at, at, terms))
    return _sweep_rows(sweep, pieces, end)


def _at_least(nbytes: int, least: int) -> int:
    """`nbytes`, or 0 where it is under `least` bytes (no buffer)."""
    return nbytes if nbytes >= least else 0


def _elem_bytes(v: Value) -> int:
    t = v.type
    return element_bytes(t.element_type) if isinstance(t, TensorType) else 0


def _fit_terms(
    p: Problem, temp: tuple[int, list[int], list[int]], result: tuple[int, list[int]], anchor: int
) -> list[tuple[Term, int]]:
    """The terms that take a temporary out of the memory rows where it fits the allocation of
    the result it may reuse: per choice of the temporary's node and the result's (node -1: a
    constant), minus its bytes as the rows count them (aligned) where its exact bytes are at
    most the result's (as XLA sizes an allocation)."""
    (tn, tb, traw), (rn, rb) = temp, result
    if tn < 0 and rn < 0:
        return [((anchor, k), -tb[0]) for k in range(p.num_strategies[anchor])] if (
            traw[0] <= rb[0]) else []  # fmt: skip
    if rn < 0:
        return [((p.rep[tn], k), -b) for k, (b, x) in enumerate(zip(tb, traw, strict=True))
                if b and x <= rb[0]]  # fmt: skip
    if tn < 0:
        return [((p.rep[rn], k), -tb[0]) for k, c in enumerate(rb) if tb[0] and traw[0] <= c]
    ta, ra = p.rep[tn], p.rep[rn]
    if ta == ra:
        return [((ta, k), -b) for k, (b, x, c) in enumerate(zip(tb, traw, rb, strict=True))
                if b and x <= c]  # fmt: skip
    return [((ta, ra, kt, kr), -b) for kt, (b, x) in enumerate(zip(tb, traw, strict=True))
            for kr, c in enumerate(rb) if b and x <= c]  # fmt: skip


def _sweep_rows(sweep: _Sweep, pieces: list[tuple[int, int, list]], end: int) -> list[dict[Term, int]]:
    """The rows of the live sets of `pieces` (first point, last point, terms) that no other
    live set contains (a point where something ends after something began since the last
    row), without those others imply (`kept_rows`). One sweep finds the rows to keep by their
    fingerprints, a second one writes those."""
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, (first, last, _) in enumerate(pieces):
        starts.setdefault(first, []).append(i)
        ends.setdefault(last, []).append(i)

    def run(keep: set[int] | None) -> list:
        sweep.row.clear()
        sweep.f1 = sweep.f2 = sweep.support = 0
        out: list = []
        n = 0
        grown = False
        for t in range(-1, end + 1):
            began, ending = starts.get(t, ()), ends.get(t, ())
            for i in began:
                sweep.add(pieces[i][2], 1)
            grown = grown or bool(began)
            if grown and ending:
                grown = False
                if keep is None:
                    out.append(sweep.mark())
                elif n in keep:
                    out.append(dict(sweep.row))
                n += 1
            for i in ending:
                sweep.add(pieces[i][2], -1)
        return out

    return run(set(kept_rows(run(None))))


def tie_repeated(
    g: StrategyGraph,
    p: Problem,
    rounds: int = 3,
    min_repeats: int = 4,
    fingerprints: list[int] | None = None,
) -> list[int]:
    """Representatives of nodes that are alike up to `rounds` hops (Weisfeiler-Lehman labels
    over op, types, strategies and neighbours): identical repeated layers share one choice.
    Only classes of at least `min_repeats` nodes are tied: layers repeat many times, and
    untied nodes can be folded away exactly (`eliminate`)."""
    nodes = g.nodes
    label: list[str] = []
    for node in nodes:
        h = hashlib.blake2b(digest_size=12)
        h.update(node.kind.encode())
        h.update(node.signature.encode())
        if fingerprints is not None:
            h.update(str(fingerprints[len(label)]).encode())
        else:
            for s in node.strategies:
                h.update(repr((s.outs, s.ins)).encode())
        label.append(h.hexdigest())
    preds: list[list[tuple[int, int]]] = [[] for _ in nodes]
    succs: list[list[tuple[int, int]]] = [[] for _ in nodes]
    for vi, node in enumerate(nodes):
        for i, x in enumerate(node.inputs):
            loc = g.where.get(id(x))
            if loc is not None:
                preds[vi].append((i, loc[0]))
                succs[loc[0]].append((i, vi))
    for _ in range(rounds):
        new = []
        for n in range(len(nodes)):
            h = hashlib.blake2b(digest_size=12)
            h.update(label[n].encode())
            h.update(repr(sorted((i, label[u]) for i, u in preds[n])).encode())
            h.update(repr(sorted((i, label[v]) for i, v in succs[n])).encode())
            new.append(h.hexdigest())
        label = new
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for n in range(len(nodes)):
        first.setdefault(label[n], n)
        count[label[n]] = count.get(label[n], 0) + 1
    rep = []
    for n in range(len(nodes)):
        r = first[label[n]]
        ok = count[label[n]] >= min_repeats and p.num_strategies[r] == p.num_strategies[n]
        rep.append(r if ok else n)
    return rep


def eliminate(
    p: Problem, memory: bool = True
) -> tuple[Problem, Callable[[list[int]], list[int]]]:
    """Fold away nodes whose choice touches no memory (any, without `memory`: no budget) and at
    most two neighbours (min-sum variable elimination: exact). Returns the smaller problem,
    where each folded node has one dummy strategy, and the function that recovers their
    choices from a solution of it."""
    n_nodes = len(p.num_strategies)
    tied = {r for n, r in enumerate(p.rep) if r != n}
    busy = set(tied) | {n for n, r in enumerate(p.rep) if r != n}
    busy.update(n for cut in p.cuts for n, _ in cut)
    if memory:
        for mrow in p.memory_rows():
            for term in mrow:
                busy.update(term[: len(term) // 2])
    adj: list[dict[int, list[list[float]]]] = [{} for _ in range(n_nodes)]
    for (u, v), tbl in p.edges.items():
        _merge(adj[u], v, tbl)
        _merge(adj[v], u, [list(col) for col in zip(*tbl, strict=True)])
    cost = [list(c) for c in p.node_cost]
    steps: list[tuple] = []
    queue = [n for n in range(n_nodes) if n not in busy and len(adj[n]) <= 2]
    done: set[int] = set()
    while queue:
        n = queue.pop()
        if n in done or n in busy or len(adj[n]) > 2:
            continue
        done.add(n)
        ns = range(p.num_strategies[n])
        nbrs = list(adj[n])
        for u in nbrs:
            del adj[u][n]
        if not nbrs:
            steps.append((n, (), min(ns, key=lambda k: cost[n][k])))
        elif len(nbrs) == 1:
            u = nbrs[0]
            t = adj[n][u]  # [k_n][k_u]
            best = []
            for ku in range(p.num_strategies[u]):
                k = min(ns, key=lambda k: cost[n][k] + t[k][ku])  # noqa: B023
                best.append(k)
                cost[u][ku] += cost[n][k] + t[k][ku]
            steps.append((n, (u,), best))
        else:
            u, w = nbrs
            tu, tw = adj[n][u], adj[n][w]
            new = []
            best2 = []
            for ku in range(p.num_strategies[u]):
                row, brow = [], []
                for kw in range(p.num_strategies[w]):
                    k = min(ns, key=lambda k: tu[k][ku] + cost[n][k] + tw[k][kw])  # noqa: B023
                    row.append(tu[k][ku] + cost[n][k] + tw[k][kw])
                    brow.append(k)
                new.append(row)
                best2.append(brow)
            _merge(adj[u], w, new)
            _merge(adj[w], u, [list(col) for col in zip(*new, strict=True)])
            steps.append((n, (u, w), best2))
        adj[n] = {}
        queue.extend(x for x in nbrs if x not in busy and x not in done and len(adj[x]) <= 2)
    if not done:
        return p, lambda c: c
    edges: dict[tuple[int, int], list[list[float]]] = {}
    for u in range(n_nodes):
        for v, tbl in adj[u].items():
            if u < v:
                edges[(u, v)] = tbl
    q = Problem(
        [1 if n in done else p.num_strategies[n] for n in range(n_nodes)],
        [[0.0] if n in done else cost[n] for n in range(n_nodes)],
        edges,
        p.value_node,
        [[0] if p.value_node[vi] in done else b for vi, b in enumerate(p.value_bytes)],
        p.temps,
        list(p.rep),
        p.cuts,
        # without a budget, memory is not asked of the smaller problem
        p.memory_rows() if memory else [],
    )

    def recover(choice: list[int]) -> list[int]:
        out = list(choice)
        for n, nbrs, best in reversed(steps):
            if not nbrs:
                out[n] = best
            elif len(nbrs) == 1:
                out[n] = best[out[nbrs[0]]]
            else:
                out[n] = best[out[nbrs[0]]][out[nbrs[1]]]
        return out

    return q, recover


def quotient(p: Problem) -> tuple[Problem, Callable[[list[int]], list[int]]]:
    """The problem over the representatives alone: a tied node's costs and edges added to its
    representative's (an edge within one class adds its diagonal), the memory rows renumbered.
    Repeated layers give it one layer's nodes, whatever the depth. Returns it and the function
    that spreads its choice over every node."""
    reps = sorted(set(p.rep))
    at = {r: i for i, r in enumerate(reps)}
    if len(reps) == len(p.rep):
        return p, lambda c: c
    cost = [[0.0] * p.num_strategies[r] for r in reps]
    for n, c in enumerate(p.node_cost):
        row = cost[at[p.rep[n]]]
        for k, x in enumerate(c):
            row[k] += x
    # tied edges share their table: add each table once, times how often it occurs
    counts: dict[tuple[int, int, int], int] = {}
    tables: dict[int, list[list[float]]] = {}
    for (u, v), tbl in p.edges.items():
        key = (at[p.rep[u]], at[p.rep[v]], id(tbl))
        counts[key] = counts.get(key, 0) + 1
        tables[id(tbl)] = tbl
    edges: dict[tuple[int, int], list[list[float]]] = {}
    for (iu, iv, t), times in counts.items():
        tbl = tables[t]
        if iu == iv:
            for k in range(len(tbl)):
                cost[iu][k] += times * tbl[k][k]
            continue
        scaled = [[times * x for x in r] for r in tbl]
        if iu > iv:
            iu, iv, scaled = iv, iu, [list(col) for col in zip(*scaled, strict=True)]
        _add_table(edges, iu, iv, scaled)

    def rows() -> list[dict[Term, int]]:
        # (each term renamed once: the rows repeat their terms, millions of entries in all)
        name: dict[Term, Term] = {}
        out = []
        for row in p.memory_rows():
            for t in set(row).difference(name):
                name[t] = (at[t[0]], t[1]) if len(t) == 2 else (at[t[0]], at[t[1]], t[2], t[3])
            out.append(dict(zip(map(name.__getitem__, row), row.values(), strict=True)))
        return out

    cuts = [[(at[p.rep[n]], k) for n, k in cut] for cut in p.cuts]
    q = Problem([p.num_strategies[r] for r in reps], cost, edges, [], [], [], [], cuts,
                make_rows=rows)  # fmt: skip

    def spread(choice: list[int]) -> list[int]:
        return [choice[at[r]] for r in p.rep]

    return q, spread


def _merge(d: dict[int, list[list[float]]], key: int, tbl: list[list[float]]) -> None:
    old = d.get(key)
    if old is None:
        d[key] = [list(r) for r in tbl]
    else:
        d[key] = [
            [a + b for a, b in zip(r1, r2, strict=True)] for r1, r2 in zip(old, tbl, strict=True)
        ]
