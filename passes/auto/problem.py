"""The strategy graph as plain numbers: the exact problem the solver sees (no IR, no shardings).

Node costs (the collectives a strategy implies, plus resharding a node's own values and the
layouts the function's results must have), edge cost tables between a producer's and a
consumer's strategies, each value's local bytes per strategy of its node, and the live sets
(values live at one program point, arguments and outputs at every point) over which the
per-device memory is bounded. Nodes with the same structure in the same surroundings (repeated
layers) are tied to one representative, so a stack of identical layers is one set of choices.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from shardc.dialect.ir import OpResult

from .graph import FOLLOW_OPS, StrategyGraph, edge_bytes, resolve_required, value_bytes


@dataclass
class Problem:
    """Costs in weighted bytes; memory in bytes; `rep[n]` is the node whose choice n shares."""

    num_strategies: list[int]
    node_cost: list[list[float]]
    # (u, v) -> cost table [k_u][k_v]; u != v; one table per pair (parallel edges summed)
    edges: dict[tuple[int, int], list[list[float]]]
    value_node: list[int]
    value_bytes: list[list[int]]
    # per live set: the values live there and the reshard temporaries made there
    live_sets: list[tuple[list[int], list[int]]]
    # reshard temporaries: (producer, consumer, bytes[k_producer][k_consumer])
    temps: list[tuple[int, int, list[list[int]]]] = field(default_factory=list)
    rep: list[int] = field(default_factory=list)
    # layouts ruled out: each a list of (node, strategy) that may not all be chosen together
    cuts: list[list[tuple[int, int]]] = field(default_factory=list)
    # the memory bound as rows over the representatives' choices (`memory_rows`); None: made
    # from `live_sets` where asked
    rows: list[dict[Term, int]] | None = None
    # where given: `rows` made when first asked (a solve without a budget never asks), and the
    # peak of one choice measured without them
    make_rows: Callable[[], list[dict[Term, int]]] | None = None
    peak_of: Callable[[list[int]], int] | None = None

    def __post_init__(self) -> None:
        if not self.rep:
            self.rep = list(range(len(self.num_strategies)))

    def objective(self, choice: list[int]) -> float:
        total = sum(c[choice[n]] for n, c in enumerate(self.node_cost))
        for (u, v), table in self.edges.items():
            total += table[choice[u]][choice[v]]
        return total

    def memory_rows(self) -> list[dict[Term, int]]:
        """The memory bound as rows over the representatives' choices: `rows`, else made from
        the live sets (`memory_rows`)."""
        if self.rows is None and self.make_rows is not None:
            self.rows = self.make_rows()
        return self.rows if self.rows is not None else memory_rows(self)

    def peak_memory(self, choice: list[int]) -> int:
        """The largest live set's bytes, each node taking its representative's choice."""
        if self.rows is None and self.peak_of is not None:
            return self.peak_of([choice[r] for r in self.rep])
        best = 0
        for row in self.memory_rows():
            total = 0
            for t, b in row.items():
                if len(t) == 2:
                    hit = choice[t[0]] == t[1]
                else:
                    hit = choice[t[0]] == t[2] and choice[t[1]] == t[3]
                if hit:
                    total += b
            best = max(best, total)
        return best


# a memory row's term: (rep, k) is "rep takes strategy k"; (ru, rv, ku, kv) "ru takes ku and
# rv takes kv" (a reshard temporary between two tied choices)
Term = tuple[int, ...]


def memory_rows(p: Problem) -> list[dict[Term, int]]:
    """Each live set's bytes as coefficients on the representatives' choices, without the rows
    that others imply (`kept_rows`)."""
    sweep = _Sweep(p)
    rows: list[dict[Term, int]] = []
    marks: list[tuple[int, int, int] | None] = []
    for values, temps in p.live_sets:
        sweep.row.clear()
        sweep.f1 = sweep.f2 = sweep.support = 0
        for vi in values:
            sweep.add(sweep.value_terms(vi), 1)
        for ti in temps:
            sweep.add(sweep.temp_terms(ti), 1)
        rows.append(dict(sweep.row))
        marks.append(sweep.mark())
    return [rows[i] for i in kept_rows(marks)]


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

    def _terms(self, items: list[tuple[Term, int]]) -> list[tuple[Term, int, tuple[int, int, int]]]:
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

    def value_terms(self, vi: int) -> list[tuple[Term, int, tuple[int, int, int]]]:
        p = self.p
        r, nbytes = p.rep[p.value_node[vi]], p.value_bytes[vi]
        key = (r, id(nbytes))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._terms([((r, k), b) for k, b in enumerate(nbytes) if b])
        return got

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
            got = self.memo[key] = self._terms(items)
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


def build_problem(g: StrategyGraph, tie: bool = True) -> Problem:
    """Turn the graph into numbers: costs per strategy, tables per edge, bytes and live sets."""
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
    temp_memo: dict[tuple, list[list[int]]] = {}
    temps: list[tuple[int, int, list[list[int]]]] = []
    temp_pos: list[int] = []

    def tb(v, src, req) -> int:  # noqa: ANN001 - bytes of the resharded copy, 0 if none
        r = resolve_required(src, req)
        if [d.axes for d in r.dims] == [d.axes for d in src.dims]:
            return 0
        return value_bytes(v, r, mesh)

    for vi, node in enumerate(nodes):
        for i, x in enumerate(node.inputs):
            loc = g.where.get(id(x))
            if loc is None:
                continue
            ui, j = loc
            producer = nodes[ui]
            tkey = (fp[ui], j, fp[vi], i, x.type)
            mt = temp_memo.get(tkey)
            if mt is None:
                mt = temp_memo[tkey] = [
                    [tb(x, ps.outs[j], cs.ins[i]) for cs in node.strategies]
                    for ps in producer.strategies
                ]
            if any(any(row) for row in mt):
                temps.append((ui, vi, mt))
                temp_pos.append(g.position.get(id(node.input_at[i][0]), 0))
            if ui == vi:
                own = row_memo.get(tkey)
                if own is None:
                    own = row_memo[tkey] = [eb(x, s.outs[j], s.ins[i]) for s in node.strategies]
                cost[vi] = [a + b for a, b in zip(cost[vi], own, strict=True)]
                continue
            key = (fp[ui], j, fp[vi], i, x.type)
            tbl = table_memo.get(key)
            if tbl is None:
                tbl = [
                    [eb(x, ps.outs[j], cs.ins[i]) for cs in node.strategies]
                    for ps in producer.strategies
                ]
                table_memo[key] = tbl
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
    index: dict[tuple[int, int], int] = {}
    bytes_memo: dict[tuple, list[int]] = {}
    for n, node in enumerate(nodes):
        for j, v in enumerate(node.values):
            index[(n, j)] = len(value_node)
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
    p = Problem(ns, cost, edges, value_node, vbytes, [], temps)
    if tie:
        p.rep = tie_repeated(g, p, fingerprints=fp)
    _tie_classes(g, p)
    p.make_rows = lambda: _live_rows(g, index, temp_pos, p)
    p.peak_of = lambda choice: _live_peak(g, index, temp_pos, p, choice)
    return p


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


def _live_rows(
    g: StrategyGraph, index: dict[tuple[int, int], int], temp_pos: list[int], p: Problem
) -> list[dict[Term, int]]:
    """The bytes live at each program point (values, each live over one interval of points,
    and the reshard temporaries made there) as rows over the representatives' choices
    (`kept_rows`). Only points whose live set no other contains give a row: a point where
    a temporary is made, or where something ends after something started since the last row
    (else a row before or after holds it all). One sweep finds the rows to keep by their
    fingerprints, a second one writes those."""
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    at: dict[int, list[int]] = {}
    for key, (first, last) in g.live.items():
        vi = index[key]
        starts.setdefault(first, []).append(vi)
        ends.setdefault(last, []).append(vi)
    for ti, t in enumerate(temp_pos):
        at.setdefault(t, []).append(ti)
    sweep = _Sweep(p)

    def run(keep: set[int] | None) -> list:
        sweep.row.clear()
        sweep.f1 = sweep.f2 = sweep.support = 0
        out: list = []
        n = 0
        grown = False
        for t in range(-1, g.num_positions + 1):
            began, made, ending = starts.get(t, ()), at.get(t, ()), ends.get(t, ())
            for vi in began:
                sweep.add(sweep.value_terms(vi), 1)
            grown = grown or bool(began)
            for ti in made:
                sweep.add(sweep.temp_terms(ti), 1)
            if made or (grown and ending):
                grown = False
                if keep is None:
                    out.append(sweep.mark())
                elif n in keep:
                    out.append(dict(sweep.row))
                n += 1
            for ti in made:
                sweep.add(sweep.temp_terms(ti), -1)
            for vi in ending:
                sweep.add(sweep.value_terms(vi), -1)
        return out

    return run(set(kept_rows(run(None))))


def _live_peak(
    g: StrategyGraph,
    index: dict[tuple[int, int], int],
    temp_pos: list[int],
    p: Problem,
    choice: list[int],
) -> int:
    """The largest bytes live at one program point under `choice` (one strategy per node):
    what the rows of `_live_rows` give for it, the rows a point holds at most, without making
    them."""
    delta: dict[int, int] = {}
    made: dict[int, int] = {}
    for key, (first, last) in g.live.items():
        vi = index[key]
        b = p.value_bytes[vi][choice[p.value_node[vi]]]
        if b:
            delta[first] = delta.get(first, 0) + b
            delta[last + 1] = delta.get(last + 1, 0) - b
    for (u, v, tbl), t in zip(p.temps, temp_pos, strict=True):
        b = tbl[choice[u]][choice[v]]
        if b:
            made[t] = made.get(t, 0) + b
    best = live = 0
    for t in sorted(delta.keys() | made.keys()):
        live += delta.get(t, 0)
        best = max(best, live + made.get(t, 0))
    return best


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
        p.live_sets,
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
        return [
            {(at[t[0]], t[1]) if len(t) == 2 else (at[t[0]], at[t[1]], t[2], t[3]): b
             for t, b in row.items()}
            for row in p.memory_rows()
        ]  # fmt: skip

    cuts = [[(at[p.rep[n]], k) for n, k in cut] for cut in p.cuts]
    q = Problem([p.num_strategies[r] for r in reps], cost, edges, [], [], [], [], [], cuts,
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
