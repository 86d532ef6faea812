"""`split-call-sites`: every call site of a function gets its own copy of the callee.

Shardy inlines each `func.call` as a named computation, so two call sites propagate independently
(docs/propagation.md §7.6); `propagation/call_sites.py` clones the callee per call site and the
export merges or keeps the copies. A call result without a sharding starts from its callee's result
sharding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.data_flow import CALL, FUNC_DATA_FLOW_EDGE
from shardc.dialect.ir import Module, Operation, callee_name
from shardc.dialect.op_views import Func

from ..context import NONE, SAME_OPS, OpList, PassContext
from ..propagation.call_sites import split_call_sites


@dataclass(frozen=True)
class SplitCallSites:
    """The call-site cloning pass; no options."""

    name: ClassVar[str] = "split-call-sites"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        # (callees already shared through func data-flow edges stay shared: Shardy's
        # dedup-functions-fully form)
        if not ctx.has_op(module, CALL) or ctx.has_op(module, FUNC_DATA_FLOW_EDGE):
            ctx.preserve(*SAME_OPS)
            return
        calls: list[Operation] = []
        if split_call_sites(module, ctx.analysis(OpList, module), calls):
            seed_call_results(module, calls)
        else:  # (every callee has one call site: no op was added)
            seed_call_results(module, ctx.analysis(OpList, module))
            ctx.preserve(*SAME_OPS)


def seed_call_results(module: Module, ops: list[Operation] | None = None) -> None:
    """Each call result without a sharding takes its callee's result sharding (`ops`:
    `list(module.walk())` or every call of the module, when the caller has it)."""
    funcs = module.funcs
    for op in module.walk() if ops is None else ops:
        if op.name != CALL:
            continue
        callee = funcs.get(callee_name(op))
        if callee is None or not callee.regions or not callee.regions[0].blocks:
            continue
        view = Func(callee)
        for i, r in enumerate(op.results):
            if r.sharding is None:
                r.sharding = view.result_sharding(i)
