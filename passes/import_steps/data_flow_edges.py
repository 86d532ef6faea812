"""Data-flow edges written in the input, and the shared callees of `dedup_functions_fully`.

A module already in Shardy's imported form carries its data-flow edges as ops:

* `sdy.data_flow_edge %v sharding=S`: `%v` (a while, case or optimization_barrier result, a
  manual computation's result or body argument) and its edge are one value to propagation.
  `absorb-data-flow-edges` writes S where shardc keeps `%v`'s sharding (the op, the manual
  computation's in/out shardings) and removes the edge: shardc builds every such edge itself.
* `sdy.func_data_flow_edge %x`: a callee shared by all its call sites (Shardy's
  `dedup-functions-fully=true`). On a func argument, the edge's sources are that operand of every
  call of the func; on a call result, the callee's returned value. These stay ops through
  propagation (passes/propagation/unit_builder.py makes each an edge), and
  `sink-func-data-flow-edges` writes their shardings onto the func arguments and call results
  and removes them afterwards, as Shardy's sink pass does.

`add-func-data-flow-edges` (with `PropagationOptions.dedup_functions_fully`) puts a module in
that form, as Shardy's pass does: an edge after every argument of every func but the main one
and after every call result, and the funcs in pre-order of the call graph (callers first: the
order Shardy's worklist meets them). Call sites are then not split (`split-call-sites`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.data_flow import CALL, DATA_FLOW_EDGE, FUNC_DATA_FLOW_EDGE, shardy_main_func
from shardc.dialect.ir import (
    BlockArgument,
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    func_body,
)
from shardc.dialect.op_views import Func
from shardc.dialect.sharding_syntax import parse_tensor_sharding
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import TensorType

from ..context import NONE, SAME_OPS, PassContext
from ..propagation.call_sites import call_graph_post_order
from .sharding_groups import set_held_sharding


@dataclass(frozen=True)
class AbsorbDataFlowEdges:
    """`sdy.data_flow_edge` ops of the input: their shardings go onto their owners."""

    name: ClassVar[str] = "absorb-data-flow-edges"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        if not ctx.has_op(module, DATA_FLOW_EDGE):
            ctx.preserve(*SAME_OPS)
            return
        for op in list(module.ops_named(DATA_FLOW_EDGE)):
            absorb_edge(op)


def absorb_edge(op: Operation) -> None:
    """Write `op`'s sharding (if any) where its owner's is kept, then read the owner directly."""
    owner = op.operands[0]
    raw = op.properties.get("sharding")
    if raw is not None:
        s = raw if isinstance(raw, TensorSharding) else parse_tensor_sharding(str(raw))
        set_held_sharding(owner, s)
    op.results[0].replace_all_uses_with(owner)
    op.erase()


@dataclass(frozen=True)
class AddFuncDataFlowEdges:
    """`dedup_functions_fully`: func data-flow edges on callee arguments and call results."""

    name: ClassVar[str] = "add-func-data-flow-edges"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        if not ctx.has_op(module, CALL) or ctx.has_op(module, FUNC_DATA_FLOW_EDGE):
            ctx.preserve(*SAME_OPS)
            return
        add_func_data_flow_edges(module)


def add_func_data_flow_edges(module: Module) -> None:
    """Edges after the arguments of every func but main and after every call result (a
    sharding already there moves onto the edge); funcs in call-graph pre-order."""
    funcs = module.funcs
    main = shardy_main_func(funcs)
    for name, func in funcs.items():
        body = func_body(func)
        if name == main or body is None:
            continue
        for arg in reversed(body.args):  # (each at the start: the first argument's comes first)
            _edge_after(arg, body, 0, func.loc)
    for op in list(module.walk()):
        if op.name == CALL and op.parent is not None:
            block = op.parent
            at = block.ops.index(op) + 1
            for r in reversed(op.results):
                _edge_after(r, block, at, op.loc)
    order = pre_order_funcs(module)
    body_ops = module.body.ops
    rest = [op for op in body_ops if op.name != "func.func"]
    body_ops[:] = rest + [funcs[n] for n in order]


def _edge_after(v: Value, block: object, index: int, loc: str | None) -> None:
    if not isinstance(v.type, TensorType) or -1 in v.type.shape:
        return  # (tokens, dynamic shapes: no edge, as in Shardy)
    edge = Operation(FUNC_DATA_FLOW_EDGE, [v], [v.type], loc=loc)
    v.replace_all_uses_with(edge.results[0])
    edge.set_operand(0, v)
    edge.results[0].sharding, v.sharding = v.sharding, None
    block.insert(index, edge)  # type: ignore[attr-defined]


def pre_order_funcs(module: Module) -> list[str]:
    """Func names in reverse post-order of the call graph (callers before callees), from the
    funcs in module order."""
    calls = {
        name: [callee_name(op) for op in func.walk() if op.name == CALL]
        for name, func in module.funcs.items()
    }
    return call_graph_post_order(calls)[::-1]


@dataclass(frozen=True)
class SinkFuncDataFlowEdges:
    """After propagation: func data-flow edges' shardings onto func arguments and call
    results; the edges go."""

    name: ClassVar[str] = "sink-func-data-flow-edges"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        if not ctx.has_op(module, FUNC_DATA_FLOW_EDGE):
            ctx.preserve(*SAME_OPS)
            return
        sink_func_data_flow_edges(module)


def sink_func_data_flow_edges(module: Module) -> None:
    """Write each func data-flow edge's sharding onto what it stands for and remove it."""
    for op in list(module.ops_named(FUNC_DATA_FLOW_EDGE)):
        v = op.operands[0]
        s = op.results[0].sharding
        if s is not None:
            if isinstance(v, BlockArgument) and v.block.parent is not None:
                func = v.block.parent.parent
                if func is not None and func.name == "func.func":
                    Func(func).set_arg_sharding(v.index, s)
            elif isinstance(v, OpResult):
                v.sharding = s
        op.results[0].replace_all_uses_with(v)
        op.erase()
