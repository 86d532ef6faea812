"""`insert-call-result-reshards`: a call result has its callee's result sharding.

After propagation a call result and the value its callee returns may differ in what an edge
cannot carry (unreduced axes, a conflict the result kept). As Shardy's pipeline does after
outlining, each such call result takes the callee's result sharding, and a closed
`sdy.sharding_constraint` after it reshards it to what its readers were given (they read the
constraint). A callee without result shardings counts as fully closed and replicated where its
call result has a sharding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.data_flow import CALL
from shardc.dialect.ir import Module, Operation, callee_name, func_body
from shardc.dialect.op_views import Func, ShardingConstraint
from shardc.dialect.shardings import DimSharding, TensorSharding

from ..context import NONE, SAME_OPS, OpList, PassContext


@dataclass(frozen=True)
class InsertCallResultReshards:
    """The call-result reshard pass; no options."""

    name: ClassVar[str] = "insert-call-result-reshards"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        if not ctx.has_op(module, CALL) or not insert_call_result_reshards(
            module, ctx.analysis(OpList, module)
        ):
            ctx.preserve(*SAME_OPS)


def insert_call_result_reshards(module: Module, ops: list[Operation] | None = None) -> int:
    """Give each call result its callee's result sharding, with a constraint to its own where
    they differ; returns the constraints added (`ops`: `list(module.walk())`, when known)."""
    funcs = module.funcs
    added = 0
    calls = [op for op in (module.walk() if ops is None else ops) if op.name == CALL]
    for call in calls:
        callee = funcs.get(callee_name(call))
        if callee is None or func_body(callee) is None or call.parent is None:
            continue
        view = Func(callee)
        at = -1  # where the next constraint goes (found when one is needed)
        for i, r in enumerate(call.results):
            want, have = view.result_sharding(i), r.sharding
            if want is None:
                if have is None:
                    continue
                want = _closed_replicated_like(have)
            if equivalent(want, have):
                continue
            r.sharding = want
            # a call that takes the value as the callee's result has it reads it as it is (a
            # reshard and one back would cancel, as Shardy's export folds them)
            moved = [(u, k) for u, k in r.uses if not _takes(u, k, want, funcs)]
            if not moved:
                continue
            c = ShardingConstraint.create(r, have or _closed_replicated_like(want), call.loc).op
            for u, k in moved:
                u.set_operand(k, c.results[0])
            if at < 0:
                at = call.parent.ops.index(call) + 1
            call.parent.insert(at, c)
            at += 1
            added += 1
    return added


def _takes(user: Operation, index: int, s: TensorSharding, funcs: dict[str, Operation]) -> bool:
    """Whether `user` is a call whose callee's argument `index` has sharding `s`."""
    if user.name != CALL:
        return False
    callee = funcs.get(callee_name(user))
    body = func_body(callee) if callee is not None else None
    return body is not None and index < len(body.args) and equivalent(body.args[index].sharding, s)


def equivalent(a: TensorSharding | None, b: TensorSharding | None) -> bool:
    """The same layout: both without axes and unreduced axes, or the same mesh, unreduced
    axes and dim axes (open or closed, priorities and replicated axes aside)."""
    if _replicated(a) or _replicated(b):
        return _replicated(a) and _replicated(b)
    assert a is not None and b is not None
    return (
        a.mesh == b.mesh
        and a.unreduced == b.unreduced
        and len(a.dims) == len(b.dims)
        and all(x.axes == y.axes for x, y in zip(a.dims, b.dims, strict=True))
    )


def _replicated(s: TensorSharding | None) -> bool:
    return s is None or (not s.unreduced and all(not d.axes for d in s.dims))


def _closed_replicated_like(s: TensorSharding) -> TensorSharding:
    return TensorSharding(s.mesh, tuple(DimSharding((), True) for _ in s.dims))
