"""The auto-sharding pass: after propagation, give mesh axes to the dims nothing decided.

It builds the strategy graph of each public function (graph.py), turns it into the exact problem
(problem.py), solves it within the memory budget (solve.py), writes the chosen layouts on the
values (closed, so nothing moves them), and runs propagation once more so that what the graph
does not model (region bodies, ops without rules) follows the new layout. User annotations,
closed dims and what propagation decided are never changed: only open empty dims get axes.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shardc.dialect.data_flow import CALL, entry_funcs
from shardc.dialect.errors import ShardcError, not_one_of
from shardc.dialect.ir import (
    Module,
    Operation,
    Value,
    callee_name,
    func_body,
)
from shardc.dialect.op_views import (
    MANUAL_COMPUTATION,
    RESHARD,
    SHARDING_CONSTRAINT,
    Func,
    ShardingConstraint,
)
from shardc.dialect.shardings import DimSharding, Mesh, TensorSharding
from shardc.dialect.types import TensorType
from shardc.dialect.value_names import value_names

from .cost import AxisWeights, format_bytes, parse_axis_costs, parse_size
from .graph import (
    Kept,
    StrategyGraph,
    build_graph,
    current_sharding,
    decided,
    resolve_required,
    set_sharding,
)
from .problem import Problem, build_problem
from .solve import SOLVERS, UNTIED_LIMIT, Solution, min_peak, solve, solve_greedy

# fixed ops whose results keep what propagation wrote (their layout lives on the op itself)
PINLESS = frozenset({MANUAL_COMPUTATION, SHARDING_CONSTRAINT, RESHARD})


class BudgetUnmet(ShardcError):
    """No layout meets the memory budget by auto's own live-set estimate."""


@dataclass
class Decision:
    """One dim auto gave axes to: value name, dim, the axes."""

    value: str
    dim: int
    axes: str


@dataclass
class FunctionResult:
    """What auto did for one function: the solve and its decisions."""

    func: str
    method: str
    objective: float
    # the solve's peak memory of its answer; without a budget the plan's memory of the layout
    # chosen (`checked.py`: the rows are not made for it)
    peak: int | None
    budget: int | None
    nodes: int
    tied_nodes: int
    strategies: int
    seconds: float
    decisions: list[Decision] = field(default_factory=list)
    reshards: int = 0
    explanation: list[str] = field(default_factory=list)
    # the (node, strategy) chosen for each argument: what a later solve may rule out
    arg_choice: tuple[tuple[int, int], ...] = ()
    # what the exact solver was given: choices and memory rows (`Solution`)
    variables: int = 0
    memory_rows: int = 0
    # the choice per node of the graph, and each node's number of strategies (what a later
    # solve of the same function checks before it starts from this answer: `start`)
    choice: tuple[int, ...] = ()
    shape: tuple[int, ...] = ()
    # what makes `explanation`, where not made yet (`AutoReport.explain`): a solve whose
    # layout is not kept (checked.py's rounds) is never explained, and an explanation weighs
    # three alternatives per node, each against the budget
    explain_later: Callable[[], list[str]] | None = field(default=None, repr=False, compare=False)


@dataclass
class AutoReport:
    """The pass's report: one entry per function solved, and notes."""

    functions: list[FunctionResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # the plan's figures of the layout chosen (`checked.planned`): what XLA is predicted to run
    planned_bytes: int | None = None
    planned_memory: int | None = None
    # no solve within the budget fitted by the plan, and auto took the smallest layout it
    # found (one per program, whatever the budget), which needs `smallest_memory` by the plan
    fell_back_to_smallest: bool = False
    smallest_memory: int | None = None
    # seconds of every solve that led to this layout (the plan's re-solves, shardc.jit's
    # re-plans for XLA's figures), not only of the one that chose it
    solve_seconds: float = 0.0

    def explain(self) -> None:
        """Make each function's explanation where not made yet (`explain_later`), letting go
        of what it reads (the solve's graph and problem)."""
        for f in self.functions:
            if f.explain_later is not None:
                f.explanation, f.explain_later = f.explain_later(), None

    def lines(self) -> list[str]:
        """A summary line per function, the notes, the plan's figures, then the explanations."""
        self.explain()
        out = []
        for f in self.functions:
            budget = "no budget" if f.budget is None else f"budget {format_bytes(f.budget)}"
            peak = "not made" if f.peak is None else format_bytes(f.peak)
            out.append(
                f"auto @{f.func}: {f.method} in {f.seconds:.2f}s over {f.nodes} nodes "
                f"({f.tied_nodes} tied to repeated ones, {f.strategies} strategies; the solver "
                f"saw {f.variables} choices, {f.memory_rows} memory rows); planned "
                f"collectives {format_bytes(f.objective)}, peak memory estimate "
                f"{peak} per device ({budget}); {len(f.decisions)} dims decided, "
                f"{f.reshards} reshards made explicit"
            )
        out.extend(self.notes)
        if self.planned_bytes is not None and self.planned_memory is not None:
            out.append(
                f"auto: by the plan, the layout chosen moves {format_bytes(self.planned_bytes)} "
                f"and needs {format_bytes(self.planned_memory)} per device"
            )
        for f in self.functions:
            out.extend(f.explanation)
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class AutoShardingPass:
    """Options: `memory_budget` (bytes or "64MiB"; None/"" for none), `axis_cost`
    ("data=4,model=1"), `time_limit` (wall-clock seconds for the exact solve; None: only the
    solvers' deterministic limits), `solver` ("highs" or
    "cp-sat"), `headroom` (the share of the budget kept free: the memory bounded is the
    plan's measure, a model of XLA's `memory_analysis`), `explain`, `tie_layers`, `smallest`
    (choose the layout of least memory, whatever it moves: the smallest layout found, one per
    program), `least_peak_at_fewest` (no budget: among the layouts that move the
    fewest bytes, the one of least memory)."""

    memory_budget: int | str | None = None
    axis_cost: str = ""
    time_limit: float | None = None
    solver: str = "highs"
    headroom: float = 0.0
    explain: bool = True
    tie_layers: bool = True
    smallest: bool = False
    least_peak_at_fewest: bool = False
    # per function: argument layouts ruled out (lists of (node, strategy)), see `checked.py`
    exclude: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()
    # a budget over big problems by a price on memory (`solve._priced`); False: the rows' MILP
    price_memory: bool = True
    # per function: (the choice per node, the strategies per node) of a solve of the same
    # function without a budget (`checked.py` solves that first): the budgeted solve starts
    # from it rather than solving it again, where the graph is the same
    start: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...] = ()
    # where given: the answers of the solves no budget enters (the cheapest layout, the
    # smallest, the least memory at the fewest bytes), by function, kind, problem shape and
    # `start`, kept across runs of the pass on one program (`checked.remembered`: shardc.jit's
    # XLA check plans a program for more than one budget) and taken rather than solved again
    memo: dict[tuple[Any, ...], Solution] | None = field(default=None, compare=False, repr=False)

    def run(self, module: Module, kept: Kept | None = None) -> AutoReport:
        return auto_shard(module, self, kept)


def _mesh(module: Module) -> tuple[str, Mesh] | None:
    found = [(n, m) for n, m in module.meshes.items() if m.axes]
    names = {m for _, m in found}
    if len(names) != 1:
        return None
    return found[0]


def auto_shard(module: Module, opts: AutoShardingPass, kept: Kept | None = None) -> AutoReport:
    """Run the pass on a propagated module (in place); raises `ShardcError` for a budget that no
    layout meets, naming the smallest one found. `kept`: what must stay (`Kept.snapshot` of the
    module before propagation: the user's annotations; default: all propagation decided)."""
    kept = kept or Kept.propagated(module)
    report = AutoReport()
    found = _mesh(module)
    if found is None:
        report.notes.append("auto: the module has no single mesh with axes; nothing to choose")
        return report
    mesh_ref, mesh = found
    weights: AxisWeights | None = parse_axis_costs(opts.axis_cost, mesh.axis_names) or None
    budget = None
    if opts.memory_budget not in (None, "", 0):
        budget = parse_size(opts.memory_budget)  # type: ignore[arg-type]
    names = value_names(module) if opts.explain else {}
    for fname in entry_funcs(module):
        t0 = time.perf_counter()
        g = build_graph(module, fname, mesh, mesh_ref, weights, kept)
        if not g.nodes:
            continue
        p = build_problem(g, module, tie=opts.tie_layers)
        p.cuts = [list(c) for f, c in opts.exclude if f == fname]
        if opts.solver not in SOLVERS:
            raise not_one_of(
                "auto solver", opts.solver, SOLVERS, hint="use highs (the default) or cp-sat"
            )
        target = None if budget is None else int(budget * (1 - opts.headroom))
        first = next((list(c) for f, c, shape in opts.start
                      if f == fname and shape == tuple(p.num_strategies)), None)  # fmt: skip
        least = opts.smallest or opts.least_peak_at_fewest
        # the solves no budget enters, remembered per program (`memo`)
        kind = ("smallest" if opts.smallest else "fewest" if opts.least_peak_at_fewest
                else "cheapest" if budget is None else None)  # fmt: skip
        key = (fname, kind, tuple(p.num_strategies), tuple(first or ()))
        known = opts.memo.get(key) if opts.memo is not None and kind and not p.cuts else None
        if known is not None:
            sol = known
        elif opts.smallest:
            # the least memory, then (greedily: an exact solve at the least memory is the
            # hardest of all) fewer bytes at that memory
            sol = min_peak(p, opts.time_limit, start=first)
            cheaper = solve_greedy(p, sol.peak)
            if cheaper.feasible and cheaper.objective < sol.objective:
                sol = dataclasses.replace(cheaper, method="smallest layout, greedy")
        elif opts.least_peak_at_fewest:
            sol = min_peak(p, opts.time_limit, start=first, fewest_bytes=True)
        else:
            sol = solve(p, target, opts.time_limit, solver=opts.solver, price=opts.price_memory,
                        first=first)  # fmt: skip
        if opts.memo is not None and kind and not p.cuts:
            opts.memo[key] = sol
        # (untied, a problem too big for the rows' MILP is bigger still: not tried)
        small = sol.variables <= UNTIED_LIMIT
        if not sol.feasible and opts.tie_layers and not least and small:
            p = build_problem(g, module, tie=False)
            p.cuts = [list(c) for f, c in opts.exclude if f == fname]
            sol = solve(p, target, opts.time_limit, solver=opts.solver, price=opts.price_memory)
        if not sol.feasible and not least:
            # (the least memory the solve reached, for this budget: `checked.py` finds the
            # smallest layout, one per program, for the error it raises)
            peak = sol.peak if sol.peak is not None else p.peak_memory(sol.choice)
            need = -(-peak * 100 // int(round((1 - opts.headroom) * 100)))
            raise BudgetUnmet(
                f"memory budget {format_bytes(budget or 0)} ({budget} bytes) cannot be met for "
                f"@{fname} on mesh {mesh.body()}: the least per-device estimate this solve "
                f"reached is {format_bytes(peak)} ({peak} bytes), which needs a budget of "
                f"{format_bytes(need)} ({need} bytes) with the planner's "
                f"{opts.headroom:.0%} headroom",
                hint=f"give --memory-budget {need} or more, or a mesh with more devices",
            )
        decisions = apply_solution(g, sol.choice, names, kept)
        align_pointwise_callees(module, g)
        reshards = insert_reshards(g, sol.choice)
        paired = {j: g.nodes[an].values[0] for _, j, an in g.paired_sinks}
        _set_func_results(module.funcs[fname], kept.results.get(fname, []), paired)
        res = FunctionResult(
            fname, sol.method, sol.objective, sol.peak, budget, len(g.nodes),
            sum(1 for n, r in enumerate(p.rep) if r != n), sum(p.num_strategies),
            time.perf_counter() - t0, decisions, reshards,
        )  # fmt: skip
        res.arg_choice = tuple((n, sol.choice[n]) for n, node in enumerate(g.nodes)
                               if node.kind == "arg")  # fmt: skip
        res.variables, res.memory_rows = sol.variables, sol.rows
        res.choice, res.shape = tuple(sol.choice), tuple(p.num_strategies)
        if opts.explain:
            res.explain_later = functools.partial(explain, g, p, sol, names, budget)
        report.functions.append(res)
    return report


def apply_solution(
    g: StrategyGraph, choice: list[int], names: dict[int, str], kept: Kept
) -> list[Decision]:
    """Write the chosen layouts on the values; every dim closed so that nothing moves them."""
    out: list[Decision] = []
    for n, node in enumerate(g.nodes):
        if node.kind == "fixed":
            if node.op is not None and not node.op.regions and node.op.name not in PINLESS:
                for v, layout in zip(node.values, node.strategies[0].outs, strict=True):
                    set_sharding(v, layout)
            continue
        s = node.strategies[choice[n]]
        for j, v in enumerate(node.values):
            new = s.outs[j]
            cur = kept.of(v)
            dims = []
            for i, d in enumerate(new.dims):
                c = cur.dims[i] if cur is not None and i < len(cur.dims) else None
                if c is not None and decided(c):
                    dims.append(DimSharding(c.axes, True))
                else:
                    dims.append(DimSharding(d.axes, True))
                    if d.axes:
                        axes = ", ".join(f'"{a}"' if a.sub is None else str(a) for a in d.axes)
                        out.append(Decision(names.get(id(v), "?"), i, "{" + axes + "}"))
            mesh = cur.mesh if cur is not None else g.mesh_ref
            rep = cur.replicated if cur is not None else ()
            unr = cur.unreduced if cur is not None else ()
            set_sharding(v, TensorSharding(mesh, tuple(dims), rep, unr))
    return out


def align_pointwise_callees(module: Module, g: StrategyGraph) -> None:
    """A call of an element-wise callee (JAX's relu, gelu, ...) follows its operand in the graph
    and is laid out at the call site only; its callee's body keeps what the first propagation
    gave it, and a layout that differs there costs a reshard at each call boundary that the
    solve never saw (a relu's callee with the batch on "data" under a replicated call: an
    all-gather of its result per call). So the callee's arguments, body values of the call's
    shape and results take the call's layout, where every call of that callee is followed and
    has the same."""
    seen: dict[str, set[tuple[tuple[int, ...], TensorSharding]]] = {}
    for node in g.nodes:
        for op in node.followers:
            if op.name == CALL:
                r = op.results[0]
                s = r.sharding
                layout = (tuple(r.type.shape), s) if s is not None else None  # type: ignore[union-attr]
                seen.setdefault(callee_name(op), set()).add(layout)  # type: ignore[arg-type]
    if not seen:
        return
    calls: dict[str, int] = {}
    for op in module.walk():
        if op.name == CALL and callee_name(op) in seen:
            calls[callee_name(op)] = calls.get(callee_name(op), 0) + 1
    followed = {name: sum(1 for n in g.nodes for op in n.followers
                          if op.name == CALL and callee_name(op) == name) for name in seen}  # fmt: skip
    for name, layouts in seen.items():
        func = module.funcs.get(name)
        body = func_body(func) if func is not None else None
        if body is None or len(layouts) != 1 or None in layouts or calls[name] != followed[name]:
            continue
        ((shape, layout),) = layouts
        for v in (*body.args, *(r for o in body.ops for r in o.results)):
            if isinstance(v.type, TensorType) and tuple(v.type.shape) == shape:
                set_sharding(v, layout)
        for i in range(Func(func).num_results):  # type: ignore[arg-type]
            Func(func).set_result_sharding(i, layout)  # type: ignore[arg-type]


def insert_reshards(g: StrategyGraph, choice: list[int]) -> int:
    """Make each reshard the plan relies on explicit: a closed `sdy.sharding_constraint` right
    before each op that reads the value in the new layout (one per reader: a shared one would
    keep the resharded copy alive between readers, which the memory plan does not count), so
    that XLA runs the plan's collectives rather than re-deriving its own. Returns how many."""
    needs: list[tuple[int, Operation, int, Value, TensorSharding]] = []
    for n, node in enumerate(g.nodes):
        if node.kind != "op":
            continue
        s = node.strategies[choice[n]]
        for i, x in enumerate(node.inputs):
            loc = g.where.get(id(x))
            if loc is None:
                continue
            u, j = loc
            src = g.nodes[u].strategies[choice[u]].outs[j]
            req = resolve_required(src, s.ins[i])
            if [d.axes for d in req.dims] == [d.axes for d in src.dims]:
                continue
            op, idx = node.input_at[i]
            needs.append((g.position.get(id(op), 0), op, idx, x, req))
    needs.sort(key=lambda t: t[0])
    made: dict[tuple[int, TensorSharding, int], Value] = {}
    for _, op, idx, x, req in needs:
        closed = TensorSharding(req.mesh, tuple(DimSharding(d.axes, True) for d in req.dims))
        key = (id(x), closed, id(op))
        c = made.get(key)
        if c is None:
            block = op.parent
            assert block is not None
            cop = ShardingConstraint.create(x, closed, op.loc, per_use=True).op
            block.insert(block.ops.index(op), cop)
            c = made[key] = cop.results[0]
        op.set_operand(idx, c)
    return len(made)


def _set_func_results(
    func: Operation, kept: list[TensorSharding | None], paired: dict[int, Value]
) -> None:
    """Dims of the function's results that no annotation decided take the returned values'
    new layouts; a result paired with an argument (`paired`: result index -> the argument)
    takes the argument's, so that a loop feeding it back calls the same program."""
    body = func_body(func)
    ret = body.terminator if body is not None else None
    if ret is None:
        return
    for i in range(Func(func).num_results):
        if i >= len(ret.operands):
            break
        cur = kept[i] if i < len(kept) else Func(func).result_sharding(i)
        got = current_sharding(ret.operands[i])
        if cur is None and i in paired and paired[i].sharding is not None:
            Func(func).set_result_sharding(i, paired[i].sharding)  # type: ignore[arg-type]
            continue
        if got is None:
            continue
        if cur is None:
            Func(func).set_result_sharding(i, got)
            continue
        used = {a for d in cur.dims for a in d.axes}
        dims = []
        for j, d in enumerate(cur.dims):
            if decided(d) or j >= len(got.dims):
                dims.append(d)
            else:
                axes = tuple(a for a in got.dims[j].axes if a not in used)
                dims.append(DimSharding(axes, True))
        Func(func).set_result_sharding(i, cur.with_dims(tuple(dims)))


# ---------------------------------------------------------------------------------------------
# explain


def _layout(s: TensorSharding) -> str:
    return "[" + ", ".join(str(DimSharding(d.axes)) for d in s.dims) + "]"


def explain(
    g: StrategyGraph, p: Problem, sol: Solution, names: dict[int, str], budget: int | None
) -> list[str]:
    """One line per node that decided dims: its choice, its bytes and memory, and the cheapest
    alternatives with the bytes and memory each would have cost instead."""
    incoming: dict[int, list[tuple[int, list[list[float]]]]] = {}
    outgoing: dict[int, list[tuple[int, list[list[float]]]]] = {}
    for (u, v), tbl in p.edges.items():
        incoming.setdefault(v, []).append((u, tbl))
        outgoing.setdefault(u, []).append((v, tbl))
    node_values: dict[int, list[int]] = {}
    for vi, n in enumerate(p.value_node):
        node_values.setdefault(n, []).append(vi)
    small = len(g.nodes) <= 400
    lines = []
    choice = sol.choice
    for n, node in enumerate(g.nodes):
        if node.kind == "fixed" or len(node.strategies) < 2:
            continue
        k0 = choice[n]
        chosen = node.strategies[k0]
        dims = []
        for j, v in enumerate(node.values):
            for i in node.free_dims[j]:
                if chosen.outs[j].dims[i].axes:
                    dims.append(f"{names.get(id(v), '?')} dim {i} <- {chosen.outs[j].dims[i]}")
        if not dims:
            continue

        def local_cost(k: int, n: int = n) -> float:
            c = p.node_cost[n][k]
            for u, tbl in incoming.get(n, ()):
                c += tbl[choice[u]][k]
            for v, tbl in outgoing.get(n, ()):
                c += tbl[k][choice[v]]
            return c

        def mem(k: int, n: int = n) -> int:
            return sum(p.value_bytes[vi][k] for vi in node_values.get(n, ()))

        base = local_cost(k0)
        alts = sorted((k for k in range(len(node.strategies)) if k != k0), key=local_cost)[:3]
        what = names.get(id(node.values[0]), "?") if node.values else "?"
        head = f"%{what.lstrip('%')}" if node.kind == "arg" else f"{what} = {node.op.name}"  # type: ignore[union-attr]
        alt_text = []
        for k in alts:
            s = node.strategies[k]
            text = (
                f"{_layout(s.outs[0])}: {format_bytes(local_cost(k))} moved here "
                f"({'+' if local_cost(k) >= base else ''}{format_bytes(local_cost(k) - base)}), "
                f"{format_bytes(mem(k))} held"
            )
            if small and budget is not None:
                # the node's class (repeated layers) takes the alternative together
                trial = [k if p.rep[m] == p.rep[n] else c for m, c in enumerate(choice)]
                peak = p.peak_memory(trial)
                if peak > budget:
                    text += f", peak {format_bytes(peak)} over budget"
            alt_text.append(text)
        lines.append(
            f"auto: {head}: {'; '.join(dims)}; chose {_layout(chosen.outs[0])}: "
            f"{format_bytes(base)} moved here, {format_bytes(mem(k0))} held; weighed "
            + (" | ".join(alt_text) or "nothing else")
        )
    return lines
