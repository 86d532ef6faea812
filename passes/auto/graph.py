"""The strategy graph of automatic sharding, built from a propagated function (Alpa's nodes).

A node chooses one strategy; a strategy fixes the layout of the values the node defines and the
layouts it needs of the values it reads. Nodes are: a func argument (its candidate layouts), an
op with a sharding rule (every assignment of mesh axes to its shardable factors that keeps what
propagation decided on its results), and an op shardc does not choose for (no rule, regions with
their own data flow, non-tensor values: one strategy, as propagation left it). Element-wise ops
whose operand of the same shape has the same layout *follow* that operand's node (XLA's
auto-sharding does the same): they add values to it but no choice. Edges carry the resharding
bytes between a producer's layout and what a consumer's strategy needs (cost.py).

Dims that propagation decided (closed, or given axes) stay as they are; auto only gives axes to
open dims that nothing reached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

from shardc.dialect.data_flow import CALL, DATA_FLOW_EDGE
from shardc.dialect.ir import Block, Module, Operation, OpResult, Value, callee_name, func_body
from shardc.dialect.layout_math import axes_size, sharded_local_bytes
from shardc.dialect.op_views import (
    MANUAL_COMPUTATION,
    SHARDING_CONSTRAINT,
    Func,
    ManualComputation,
    ShardingConstraint,
    constrained_sharding,
)
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.rules.registry import usable_rule
from shardc.dialect.shardings import (
    AxisRef,
    DimSharding,
    Mesh,
    TensorSharding,
)
from shardc.dialect.types import TensorType, element_bytes

from ..plan.liveness import Liveness, liveness
from ..plan.memory import xla_schedule
from ..plan.op_cost import op_steps
from ..plan.plan import tensor_of
from ..propagation.policies import ELEMENTWISE_OPS
from .arguments import Arguments, free_arguments
from .cost import AxisWeights, collective_weight, reshard_bytes

# ops with regions whose bodies are scalar computations (their rule covers them)
SCALAR_BODY_OPS = frozenset(
    "stablehlo." + n
    for n in ("reduce", "reduce_window", "scatter", "sort", "select_and_scatter", "map")
)
FOLLOW_OPS = ELEMENTWISE_OPS - {SHARDING_CONSTRAINT, "sdy.propagation_barrier",
                                DATA_FLOW_EDGE, "stablehlo.all_reduce",
                                "stablehlo.collective_permute", "stablehlo.collective_broadcast",
                                "stablehlo.cross-replica-sum"}  # fmt: skip
MAX_STRATEGIES = 512


@dataclass
class Strategy:
    """One choice of a node: the layouts of its values (`outs`), the layouts it reads (`ins`,
    one per input slot; an open empty dim means "whatever the producer has"), and the weighted
    and raw bytes of the collectives the choice itself implies (partial results reduced)."""

    outs: list[TensorSharding]
    ins: list[TensorSharding]
    cost: float = 0.0
    raw_bytes: int = 0
    factor_axes: tuple[tuple[AxisRef, ...], ...] | None = None


@dataclass
class Node:
    """A choice point: `values` (defined here, one layout each per strategy) and `inputs`."""

    kind: str  # "arg", "op", "fixed"
    op: Operation | None
    values: list[Value]
    inputs: list[Value] = field(default_factory=list)
    # per input: the op that reads it and the operand index there
    input_at: list[tuple[Operation, int]] = field(default_factory=list)
    strategies: list[Strategy] = field(default_factory=list)
    followers: list[Operation] = field(default_factory=list)
    # per value: (dims auto may fill), i.e. open and empty after propagation
    free_dims: list[tuple[int, ...]] = field(default_factory=list)
    signature: str = ""


def is_tensor(v: Value) -> bool:
    t = v.type
    return isinstance(t, TensorType) and all(d >= 0 for d in t.shape)


def is_choice_tensor(v: Value) -> bool:
    """A value auto reasons about: a static tensor of rank >= 1."""
    return is_tensor(v) and v.type.rank > 0  # type: ignore[union-attr]


def current_sharding(v: Value) -> TensorSharding | None:
    """A value's sharding after propagation (constraints and manual results keep it on the op:
    `op_views.constrained_sharding` with manual results)."""
    return constrained_sharding(v, manual_results=True)


def set_sharding(v: Value, s: TensorSharding) -> None:
    """Write a value's sharding where `current_sharding` reads it."""
    if isinstance(v, OpResult) and v.owner.name == "sdy.sharding_constraint":
        ShardingConstraint(v.owner).sharding = s
        return
    v.sharding = s


def decided(d: DimSharding) -> bool:
    return d.is_closed or bool(d.axes)


def free_dims_of(s: TensorSharding | None, rank: int) -> tuple[int, ...]:
    if s is None:
        return tuple(range(rank))
    return tuple(i for i in range(rank) if i >= len(s.dims) or not decided(s.dims[i]))


def as_fixed(s: TensorSharding | None, rank: int, mesh_ref: str) -> TensorSharding:
    """The layout a value has if auto leaves it: open empty dims stay open (don't care)."""
    if s is None:
        return TensorSharding.open(mesh_ref, rank)
    return TensorSharding(s.mesh, tuple(DimSharding(d.axes, decided(d)) for d in s.dims))


def closed_layout(s: TensorSharding | None, rank: int, mesh_ref: str) -> TensorSharding:
    """`s` with every dim closed (open dims keep the axes they have, or none)."""
    if s is None:
        return TensorSharding.replicated_of(mesh_ref, rank)
    return TensorSharding(s.mesh, tuple(DimSharding(d.axes, True) for d in s.dims))


def resolve_required(src: TensorSharding, req: TensorSharding) -> TensorSharding:
    """`req` with its don't-care dims (open, empty) taking `src`'s axes where still unused."""
    if all(decided(d) for d in req.dims):
        return req
    used = {a for d in req.dims for a in d.axes}
    dims = []
    for i, d in enumerate(req.dims):
        if decided(d) or i >= len(src.dims):
            dims.append(d)
            continue
        axes = []
        for a in src.dims[i].axes:
            if a in used:
                break
            axes.append(a)
        dims.append(DimSharding(tuple(axes)))
    return TensorSharding(req.mesh, tuple(dims))


def edge_bytes(
    v: Value, src: TensorSharding, req: TensorSharding, mesh: Mesh, weights: AxisWeights | None
) -> float:
    t = v.type
    assert isinstance(t, TensorType)
    return reshard_bytes(
        t.shape, element_bytes(t.element_type), src, resolve_required(src, req), mesh, weights
    )


def value_bytes(v: Value, s: TensorSharding | None, mesh: Mesh) -> int:
    t = v.type
    if not isinstance(t, TensorType):
        return 0
    return sharded_local_bytes(t.shape, element_bytes(t.element_type), s, mesh)


# ---------------------------------------------------------------------------------------------
# candidate layouts


def arg_candidates(
    shape: tuple[int, ...], cur: TensorSharding | None, mesh: Mesh, mesh_ref: str
) -> list[TensorSharding]:
    """Every layout that keeps `cur`'s decided dims and puts unused mesh axes (mesh order,
    dividing evenly) on its free dims."""
    rank = len(shape)
    base = as_fixed(cur, rank, mesh_ref)
    free = free_dims_of(cur, rank)
    used = {a.name for d in base.dims for a in d.axes}
    if cur is not None:
        used |= {a.name for a in cur.replicated}
    axes = [a for a in mesh.axes if a.size > 1 and a.name not in used]
    out: list[TensorSharding] = []
    for choice in product((None, *free), repeat=len(axes)):
        per_dim: dict[int, list[AxisRef]] = {}
        ok = True
        for ax, d in zip(axes, choice, strict=True):
            if d is None:
                continue
            lst = per_dim.setdefault(d, [])
            lst.append(AxisRef(ax.name))
            if shape[d] % axes_size(lst, mesh):
                ok = False
                break
        if not ok:
            continue
        dims = tuple(
            DimSharding(tuple(per_dim.get(i, ())), True) if i in free else base.dims[i]
            for i in range(rank)
        )
        out.append(TensorSharding(mesh_ref, dims))
        if len(out) >= MAX_STRATEGIES:
            break
    return out


def _dims_from_factors(
    dim_factors: tuple[tuple[int, ...], ...],
    fa: tuple[tuple[AxisRef, ...], ...],
    sizes: tuple[int, ...],
    mesh: Mesh,
    mesh_ref: str,
) -> TensorSharding | None:
    """The layout a factor assignment gives a tensor; None where a dim made of several factors
    would need a minor factor sharded under a major one that is not fully sharded."""
    dims = []
    for flist in dim_factors:
        axes: list[AxisRef] = []
        incomplete = False
        for f in flist:
            if fa[f]:
                if incomplete:
                    return None
                axes.extend(fa[f])
            if axes_size(fa[f], mesh) < sizes[f]:
                incomplete = True
        dims.append(DimSharding(tuple(axes)))
    return TensorSharding(mesh_ref, tuple(dims))


def _fits(derived: TensorSharding, cur: TensorSharding | None) -> bool:
    """`derived` keeps every decided dim of `cur` and uses none of its replicated axes."""
    if cur is None:
        return True
    banned = {a.name for a in cur.replicated}
    for i, d in enumerate(derived.dims):
        c = cur.dims[i] if i < len(cur.dims) else None
        if c is not None and decided(c):
            if d.axes != c.axes:
                return False
        elif any(a.name in banned for a in d.axes):
            return False
    return True


def op_strategies(
    op: Operation,
    rule: OpShardingRule,
    mesh: Mesh,
    mesh_ref: str,
    weights: AxisWeights | None,
    curs: list[TensorSharding | None] | None = None,
) -> list[Strategy]:
    """Every assignment of mesh axes (each at most once, mesh order within a factor, dividing
    the factor's size) to the op's pass-through and reduction factors that keeps its results'
    decided dims; a sharded reduction factor costs an all-reduce of every result."""
    sizes = rule.factor_sizes
    eligible = [
        f
        for f in range(rule.num_factors)
        if rule.kinds[f] in (FactorKind.PASS_THROUGH, FactorKind.REDUCTION)
        and f not in rule.blocked
        and sizes[f] > 1
    ]
    axes = [a for a in mesh.axes if a.size > 1]
    if curs is None:
        curs = [current_sharding(r) for r in op.results]
    out: list[Strategy] = []
    seen: set[tuple] = set()
    for choice in product((None, *eligible), repeat=len(axes)):
        fa_l: list[list[AxisRef]] = [[] for _ in sizes]
        ok = True
        for ax, f in zip(axes, choice, strict=True):
            if f is None:
                continue
            fa_l[f].append(AxisRef(ax.name))
            if sizes[f] % axes_size(fa_l[f], mesh):
                ok = False
                break
        if not ok:
            continue
        fa = tuple(tuple(x) for x in fa_l)
        res = [_dims_from_factors(d, fa, sizes, mesh, mesh_ref) for d in rule.result_dims]
        ins = [_dims_from_factors(d, fa, sizes, mesh, mesh_ref) for d in rule.operand_dims]
        if any(s is None for s in res) or any(s is None for s in ins):
            continue
        if not all(_fits(s, c) for s, c in zip(res, curs, strict=True)):  # type: ignore[arg-type]
            continue
        key = (tuple(res), tuple(ins))
        if key in seen:
            continue
        seen.add(key)
        cost, raw = op_collectives(op, rule, ins, res, mesh, weights)  # type: ignore[arg-type]
        out.append(Strategy(list(res), list(ins), cost, raw, fa))  # type: ignore[arg-type]
        if len(out) >= MAX_STRATEGIES:
            break
    return out


def op_collectives(
    op: Operation,
    rule: OpShardingRule,
    operands: list[TensorSharding],
    results: list[TensorSharding],
    mesh: Mesh,
    weights: AxisWeights | None,
) -> tuple[float, int]:
    """The weighted and raw bytes of the collectives the plan predicts for `op` computed with
    its operands and results in these layouts (`passes.plan.op_cost.op_steps`, XLA's
    partitioner model): the reductions of partial results, and whatever XLA's own choice of
    the computed layout adds. The same function the plan costs the op with, so that auto
    minimizes what `shardc plan` reports."""
    tensors = []
    for v, s in zip([*op.operands, *op.results], [*operands, *results], strict=True):
        t = tensor_of(v, s)
        if t is None:
            return 0.0, 0
        tensors.append(t)
    steps = op_steps(rule, tensors, mesh, style="xla")
    weighted = 0.0
    raw = 0
    for step in (s for group in (*steps.operands, *steps.results) for s in group):
        raw += step.bytes
        weighted += collective_weight(step.axes, weights) * step.bytes
    return weighted, raw


# ---------------------------------------------------------------------------------------------
# the graph


@dataclass
class StrategyGraph:
    """Nodes in program order, where each value is defined, and the function's live ranges."""

    mesh: Mesh
    mesh_ref: str
    nodes: list[Node] = field(default_factory=list)
    where: dict[int, tuple[int, int]] = field(default_factory=dict)  # id(value) -> (node, out)
    # per (node, out): [first position, last position]; args and outputs span everything
    live: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    num_positions: int = 0
    func_name: str = ""
    sinks: list[tuple[Value, TensorSharding]] = field(default_factory=list)
    # result index -> the node of the argument it is paired with (a training loop's state: one
    # layout in and out), and classes of argument nodes that share one choice
    paired_sinks: list[tuple[Value, int, int]] = field(default_factory=list)  # value, result, node
    arg_classes: list[list[int]] = field(default_factory=list)
    weights: AxisWeights | None = None
    position: dict[int, int] = field(default_factory=dict)  # id(top-level op) -> index


def _top_level(op: Operation, body: Block) -> Operation:
    while op.parent is not body and op.parent is not None:
        parent = op.parent_op
        if parent is None:
            break
        op = parent
    return op


@dataclass
class Kept:
    """What auto must keep: the layout of each value it may not change (None: free), and of
    each function's results. `snapshot` records the user's annotations before propagation;
    `propagated` keeps everything propagation decided as well."""

    values: dict[int, TensorSharding | None] = field(default_factory=dict)
    results: dict[str, list[TensorSharding | None]] = field(default_factory=dict)
    everything_propagated: bool = False

    def of(self, v: Value) -> TensorSharding | None:
        if self.everything_propagated:
            return current_sharding(v)
        return self.values.get(id(v))

    @staticmethod
    def snapshot(module: Module) -> Kept:
        """The annotations as the user wrote them: func arguments and results, constraints."""

        kept = Kept()
        for name, func in module.funcs.items():
            body = func_body(func)
            if body is None:
                continue
            for a in body.args:
                kept.values[id(a)] = a.sharding
            n = Func(func).num_results
            kept.results[name] = [Func(func).result_sharding(i) for i in range(n)]
            for op in func.walk():
                if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
                    kept.values[id(op.results[0])] = current_sharding(op.results[0])
        return kept

    def has_priorities(self) -> bool:
        """Whether an annotation carries an explicit priority (`{"x"}p1`)."""
        shardings = [*self.values.values(), *(r for rs in self.results.values() for r in rs)]
        return any(d.priority is not None for sh in shardings if sh is not None for d in sh.dims)

    @staticmethod
    def propagated(module: Module) -> Kept:
        """Everything propagation decided stays; only open empty dims are auto's."""

        kept = Kept(everything_propagated=True)
        for name, func in module.funcs.items():
            n = Func(func).num_results
            kept.results[name] = [Func(func).result_sharding(i) for i in range(n)]
        return kept


class GraphBuilder:
    """Builds the strategy graph of one function body (top-level ops only)."""

    def __init__(self, func: Operation, name: str, mesh: Mesh, mesh_ref: str,
                 weights: AxisWeights | None, kept: Kept):  # fmt: skip
        self.kept = kept
        self.funcs: dict[str, Operation] = {}
        self.live: Liveness | None = None  # (what runs: XLA's schedule leaves the rest out)
        self.strategy_memo: dict[tuple, list[Strategy]] = {}
        self.pointwise: dict[str, bool] = {}
        self.func = func
        self.body = func_body(func)
        self.mesh = mesh
        self.mesh_ref = mesh_ref
        self.weights = weights
        self.g = StrategyGraph(mesh, mesh_ref, func_name=name, weights=weights)

    def add_node(self, node: Node) -> int:
        idx = len(self.g.nodes)
        self.g.nodes.append(node)
        for j, v in enumerate(node.values):
            self.g.where[id(v)] = (idx, j)
        return idx

    def build(
        self, func_results: list[TensorSharding | None], args: Arguments | None = None
    ) -> StrategyGraph:
        body = self.body
        assert body is not None
        arg_node: dict[int, int] = {}
        for ai, a in enumerate(body.args):
            if not is_choice_tensor(a):
                continue
            arg_node[ai] = len(self.g.nodes)
            cur = self.kept.of(a)
            cands = arg_candidates(a.type.shape, cur, self.mesh, self.mesh_ref)  # type: ignore[union-attr]
            node = Node("arg", None, [a], [], [], [Strategy([c], []) for c in cands])
            node.free_dims = [free_dims_of(cur, a.type.rank)]  # type: ignore[union-attr]
            node.signature = f"arg {a.type}"
            self.add_node(node)
        # (the plan's memory counts positions in XLA's schedule of the body: the rows too)
        order = xla_schedule(body, self.funcs, self.live)
        position = {id(op): i for i, op in enumerate(order)}
        paired = {j: i for i, j in args.pairs.items()} if args is not None else {}
        if args is not None:
            for c in args.classes:
                members = [arg_node[i] for i in c.args if i in arg_node]
                if len(members) > 1:
                    self.g.arg_classes.append(members)
        for op in body.ops:
            if op.name == "func.return":
                for j, v in enumerate(op.operands):
                    if not is_choice_tensor(v):
                        continue
                    s = func_results[j] if j < len(func_results) else None
                    i = paired.get(j)
                    if s is None and i is not None and i in arg_node:
                        self.g.paired_sinks.append((v, j, arg_node[i]))
                        continue
                    self.g.sinks.append((v, as_fixed(s, v.type.rank, self.mesh_ref)))  # type: ignore[union-attr]
                continue
            if self.try_follow(op):
                continue
            self.add_op(op)
        self.g.num_positions = len(body.ops)
        self.g.position = position
        self._live_ranges(body, position)
        return self.g

    def try_follow(self, op: Operation) -> bool:
        """Join an element-wise op to the node of its latest-made same-shape operand."""
        if op.regions or not op.results:
            return False
        if op.name not in FOLLOW_OPS and not (op.name == CALL and self.pointwise_callee(op)):
            return False
        if not all(is_choice_tensor(r) for r in op.results):
            return False
        shape = op.results[0].type.shape  # type: ignore[union-attr]
        if any(r.type.shape != shape for r in op.results):  # type: ignore[union-attr]
            return False
        lead: Value | None = None
        for v in op.operands:
            if not is_tensor(v):
                return False
            if v.type.rank == 0:  # type: ignore[union-attr]
                continue
            if v.type.shape != shape:  # type: ignore[union-attr]
                return False
            # the operand made last leads: a residual add then joins its layer's branch, not the
            # residual stream of the first layer (which would tie every layer to one node)
            if id(v) in self.g.where and (
                lead is None or self.g.where[id(v)][0] > self.g.where[id(lead)][0]
            ):
                lead = v
        if lead is None:
            return False
        lead_cur = self.kept.of(lead)
        for r in op.results:
            if self.kept.of(r) != lead_cur:
                return False
        n, j = self.g.where[id(lead)]
        node = self.g.nodes[n]
        for r in op.results:
            for s in node.strategies:
                s.outs.append(s.outs[j])
            node.values.append(r)
            node.free_dims.append(node.free_dims[j])
            self.g.where[id(r)] = (n, len(node.values) - 1)
        for oi, v in enumerate(op.operands):
            if v is lead or v.type.rank == 0:  # type: ignore[union-attr]
                continue
            node.inputs.append(v)
            node.input_at.append((op, oi))
            for s in node.strategies:
                s.ins.append(s.outs[j])
        node.followers.append(op)
        return True

    def pointwise_callee(self, call: Operation) -> bool:
        """A call whose callee only does element-wise work (JAX's custom_jvp wrappers of relu,
        gelu, ...): it follows its operand as an element-wise op would."""
        name = callee_name(call)
        known = self.pointwise.get(name)
        if known is None:
            func = self.funcs.get(name)
            body = func_body(func) if func is not None else None
            allowed = FOLLOW_OPS | {"stablehlo.constant", "stablehlo.broadcast_in_dim",
                                    "func.return"}  # fmt: skip
            known = body is not None and all(o.name in allowed and not o.regions for o in body.ops)
            self.pointwise[name] = known
        return known

    def add_op(self, op: Operation) -> None:
        tensors = [v for v in (*op.operands, *op.results) if is_tensor(v)]
        rule = None
        if (
            len(tensors) == len(op.operands) + len(op.results)
            and op.results
            and (not op.regions or op.name in SCALAR_BODY_OPS)
        ):
            rule = usable_rule(op)  # (an unusable rule makes the op fixed)
        strategies: list[Strategy] = []
        if rule is not None:
            curs = [self.kept.of(r) for r in op.results]
            # ops alike (same rule, result types and kept layouts) have the same strategies:
            # repeated layers enumerate them once
            key = (rule, tuple(v.type for v in (*op.operands, *op.results)), tuple(curs))
            cached = self.strategy_memo.get(key)
            if cached is None:
                cached = op_strategies(op, rule, self.mesh, self.mesh_ref, self.weights, curs)
                self.strategy_memo[key] = cached
            strategies = [
                Strategy(list(s.outs), list(s.ins), s.cost, s.raw_bytes, s.factor_axes)
                for s in cached
            ]
        values = [r for r in op.results if is_choice_tensor(r)]
        inputs = [v for v in op.operands if is_choice_tensor(v)]
        input_at = [(op, i) for i, v in enumerate(op.operands) if is_choice_tensor(v)]
        if strategies:
            keep_out = [i for i, r in enumerate(op.results) if is_choice_tensor(r)]
            keep_in = [i for i, v in enumerate(op.operands) if is_choice_tensor(v)]
            for s in strategies:
                s.outs = [s.outs[i] for i in keep_out]
                s.ins = [s.ins[i] for i in keep_in]
            node = Node("op", op, values, inputs, input_at, strategies)
            node.signature = f"{op.name} {rule}"
        else:
            # what a fixed op produces is its propagated layout, open dims replicated: the
            # pass pins it (`apply_solution`), so the plan and XLA see the same layout
            outs = [closed_layout(current_sharding(r), r.type.rank, self.mesh_ref) for r in values]  # type: ignore[union-attr]
            ins = [
                self._fixed_in(op, i, v) for i, v in enumerate(op.operands) if is_choice_tensor(v)
            ]
            node = Node("fixed", op, values, inputs, input_at, [Strategy(outs, ins)])
            node.signature = f"fixed {op.name}"
        node.free_dims = [free_dims_of(self.kept.of(r), r.type.rank) for r in values]  # type: ignore[union-attr]
        node.signature += " " + " ".join(str(v.type) for v in (*inputs, *values))
        self.add_node(node)

    def _fixed_in(self, op: Operation, i: int, v: Value) -> TensorSharding:
        if op.name == MANUAL_COMPUTATION:
            ins = ManualComputation(op).in_shardings
            if i < len(ins):
                return as_fixed(ins[i], v.type.rank, self.mesh_ref)  # type: ignore[union-attr]
        return as_fixed(current_sharding(v), v.type.rank, self.mesh_ref)  # type: ignore[union-attr]

    def _live_ranges(self, body: Block, position: dict[int, int]) -> None:
        end = len(body.ops)
        returned = set()
        ret = body.terminator
        if ret is not None:
            returned = {id(v) for v in ret.operands}
        for n, node in enumerate(self.g.nodes):
            for j, v in enumerate(node.values):
                if isinstance(v, OpResult):
                    first = position.get(id(_top_level(v.owner, body)), 0)
                else:
                    first = -1
                last = first
                for user, _ in v.uses:
                    top = _top_level(user, body)
                    last = max(last, position.get(id(top), end))
                if first < 0 or id(v) in returned:
                    # arguments and results hold their buffers for the whole call (XLA's
                    # memory_analysis counts them apart from the temporaries' peak)
                    first, last = -1, end
                self.g.live[(n, j)] = (first, last)


def build_graph(
    module: Module,
    name: str,
    mesh: Mesh,
    mesh_ref: str,
    weights: AxisWeights | None,
    kept: Kept | None = None,
) -> StrategyGraph:
    """The strategy graph of function `name` of `module` after propagation; with `kept` (the
    user's annotations), the arguments without one are classed (arguments.py): a state leaf
    returned gets one layout in and out, repeated layers one choice."""
    func = module.funcs[name]
    args = None
    if kept is not None and not kept.everything_propagated:
        args = free_arguments(module, name, lambda a: kept.of(a) is None)  # type: ignore[union-attr]
    kept = kept or Kept.propagated(module)
    results = kept.results.get(name, [])
    builder = GraphBuilder(func, name, mesh, mesh_ref, weights, kept)
    builder.funcs = module.funcs
    builder.live = liveness(module)
    return builder.build(results, args)
