"""Data-flow edges: where a value's layout crosses a region or call boundary, in one place.

Shardy gives the ops with regions or callees one interface (`ShardableDataFlowOpInterface`)
so that every pass sees the same edges: an edge has an *owner* (the value whose sharding the
edge holds: an op result, or a region's block argument), *sources* (the values whose layouts
flow into it) and *targets* (the values that share the owner's layout). shardc keeps the
input's ops rather than adding `sdy.data_flow_edge` ops, so this module answers the same
questions from the ops themselves, and every walker asks it instead of keeping a list of op
names of its own:

| op | edge owners | sources of owner i | targets of owner i |
| --- | --- | --- | --- |
| `stablehlo.while` | results | operand i, the body's returned value i | result i, body and cond argument i |
| `stablehlo.case`, `stablehlo.if` | results | every branch's returned value i | result i |
| `stablehlo.optimization_barrier` | results | operand i | result i |
| `sdy.manual_computation`, `sdy.named_computation` | body arguments | operand i | body argument i |
|  | results | the body's returned value i | result i |
| `func.call` | callee arguments | operand i (of this call) | the callee's argument i |
|  | results | the callee's returned value i | result i |

Shardy has no `stablehlo.if` (JAX emits `case`) and so no edge on it: `SHARDY_EDGE_OPS` leaves
it out, while the walkers that follow what runs (plan, liveness, variance) treat it as a branch.

Also here: which funcs are entries (`entry_funcs`, Shardy's main func: `shardy_main_func`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from .ir import Block, BlockArgument, Module, Operation, OpResult, Value, callee_name, func_body
from .op_views import MANUAL_COMPUTATION, NAMED_COMPUTATION, Func

WHILE = "stablehlo.while"
CASE = "stablehlo.case"
IF = "stablehlo.if"
OPTIMIZATION_BARRIER = "stablehlo.optimization_barrier"
CALL = "func.call"
# Shardy's own edge ops, as an input already in its imported form carries them
DATA_FLOW_EDGE = "sdy.data_flow_edge"
FUNC_DATA_FLOW_EDGE = "sdy.func_data_flow_edge"


class FlowKind(Enum):
    """How an op's values cross its boundary (see the table above)."""

    LOOP = "loop"  # stablehlo.while
    BRANCH = "branch"  # stablehlo.case, stablehlo.if
    BARRIER = "barrier"  # stablehlo.optimization_barrier
    REGION = "region"  # sdy.manual_computation, sdy.named_computation: a body called once
    CALL = "call"  # func.call


KIND_OF: Mapping[str, FlowKind] = {
    WHILE: FlowKind.LOOP,
    CASE: FlowKind.BRANCH,
    IF: FlowKind.BRANCH,
    OPTIMIZATION_BARRIER: FlowKind.BARRIER,
    MANUAL_COMPUTATION: FlowKind.REGION,
    NAMED_COMPUTATION: FlowKind.REGION,
    CALL: FlowKind.CALL,
}

# every op with region or call boundaries
FLOW_OPS = frozenset(KIND_OF)
# the ones the walkers after propagation follow (plan, liveness, export, sharding groups): a
# named computation (the form Shardy's import gives a call; JAX hands shardc calls) is walked
# there as an op with a body; propagation crosses its edges as Shardy does
WALKED_FLOW_OPS = FLOW_OPS - {NAMED_COMPUTATION}
# the ops Shardy puts data-flow edges on (a call is inlined as a named computation first)
SHARDY_EDGE_OPS = FLOW_OPS - {IF}
# ops whose results are edge owners fed by their regions' returned values (a loop, a branch)
REGION_RESULT_OPS = frozenset(n for n, k in KIND_OF.items() if k in (FlowKind.LOOP, FlowKind.BRANCH))
# of those, the ones Shardy puts edges on: its edge ops stand after the op, its regions included
# (the order a propagation sweep meets them), and keep the op until after propagation
SHARDY_REGION_RESULT_OPS = REGION_RESULT_OPS & SHARDY_EDGE_OPS
# ops whose results Shardy's edges own when it applies constraints (`sdy.data_flow_edge` ops
# are in place by then; a call is a named computation): constraints on them redirect uses
RESULT_OWNER_OPS = frozenset({WHILE, CASE, OPTIMIZATION_BARRIER, CALL})
BRANCH_OPS = frozenset(n for n, k in KIND_OF.items() if k is FlowKind.BRANCH)
# ops whose regions are data flow of the program: a constraint or pin may stand inside them
# (a manual computation's body is local code; a reduction's body a scalar combiner)
CONTROL_FLOW_OPS = frozenset({WHILE, *BRANCH_OPS})


def flow_kind(op: Operation) -> FlowKind | None:
    """How `op`'s values cross its boundary, None for an op without data-flow edges."""
    return KIND_OF.get(op.name)


def is_result_owner(v: Value) -> bool:
    """`v` is a result of a while, case, optimization_barrier or call: a data-flow edge owns
    it when Shardy applies constraints."""
    return isinstance(v, OpResult) and v.owner.name in RESULT_OWNER_OPS


def returned(block: Block | None, index: int) -> Value | None:
    """Value `index` of `block`'s terminator (None without one)."""
    ret = block.terminator if block is not None else None
    return ret.operands[index] if ret is not None and index < len(ret.operands) else None


def callee(call: Operation, funcs: Mapping[str, Operation]) -> Operation | None:
    """The func `call` calls, None when the module has none of that name."""
    return funcs.get(callee_name(call))


def operand_source(op: Operation, index: int) -> Value | None:
    """The source of the edge on `op`'s result `index` that is `op`'s own operand (a while's
    init value, an optimization barrier's operand), None for other ops."""
    if KIND_OF.get(op.name) in (FlowKind.LOOP, FlowKind.BARRIER) and index < len(op.operands):
        return op.operands[index]
    return None


def returned_sources(
    op: Operation, index: int, funcs: Mapping[str, Operation] | None = None
) -> list[Value]:
    """The sources of the edge on `op`'s result `index` that a region or callee returns (a
    while's body, every branch, a computation's body, a call's callee: `funcs`, the module's)."""
    kind = KIND_OF.get(op.name)
    if kind is FlowKind.LOOP:
        body = op.regions[1].entry if len(op.regions) > 1 and op.regions[1].blocks else None
        v = returned(body, index)
        return [] if v is None else [v]
    if kind is FlowKind.BRANCH:
        found = (returned(r.entry, index) for r in op.regions if r.blocks)
        return [v for v in found if v is not None]
    if kind is FlowKind.REGION:
        v = returned(op.regions[0].entry, index) if op.regions and op.regions[0].blocks else None
        return [] if v is None else [v]
    if kind is FlowKind.CALL and funcs is not None:
        f = callee(op, funcs)
        v = returned(func_body(f), index) if f is not None else None
        return [] if v is None else [v]
    return []


def result_sources(
    op: Operation, index: int, funcs: Mapping[str, Operation] | None = None
) -> list[Value]:
    """Every source of the edge on `op`'s result `index` (the table above; a call needs the
    module's `funcs`): its own operand first, then what its regions return. Empty for an op
    without data-flow edges."""
    own = operand_source(op, index)
    rest = returned_sources(op, index, funcs)
    return rest if own is None else [own, *rest]


def region_arg_sources(op: Operation) -> list[tuple[BlockArgument, Value]]:
    """(body argument, its source operand) of a manual or named computation's body: the edges
    its block arguments own."""
    if KIND_OF.get(op.name) is not FlowKind.REGION or not op.regions:
        return []
    args = op.regions[0].entry.args
    return list(zip(args, op.operands, strict=False))


def edge_targets(owner: Value) -> list[Value]:
    """The values that share the layout of edge owner `owner`: a while result with its body's
    and condition's argument, else the owner alone."""
    if isinstance(owner, OpResult) and owner.owner.name == WHILE:
        op, i = owner.owner, owner.index
        args = [r.entry.args[i] for r in op.regions if r.blocks and i < len(r.entry.args)]
        return [owner, *args]
    return [owner]


def edge_owner(target: Value) -> Value:
    """The owner of the edge `target` belongs to (Shardy's `getEdgeOwnerFromTarget`): a while
    region's argument belongs to the while's result; any other value owns itself."""
    if isinstance(target, BlockArgument):
        region = target.block.parent
        op = region.parent if region is not None else None
        if op is not None and op.name == WHILE and target.index < len(op.results):
            return op.results[target.index]
    return target


def called_funcs(module: Module) -> set[str]:
    """The names of the funcs some `func.call` of `module` calls."""
    return {callee_name(op) for op in module.ops_named(CALL)}


def entry_funcs(module: Module, called: set[str] | None = None) -> dict[str, Operation]:
    """The funcs a caller of the module runs: public and not called (`Func.is_entry`), by name
    in module order (`called`: `called_funcs(module)`, when the caller has it)."""
    if called is None:
        called = called_funcs(module)
    return {n: f for n, f in module.funcs.items() if Func(f).is_entry(called)}


def shardy_main_func(funcs: Mapping[str, Operation]) -> str | None:
    """The func Shardy treats as the entry: `@main`, or the only func."""
    if "main" in funcs:
        return "main"
    return next(iter(funcs)) if len(funcs) == 1 else None

