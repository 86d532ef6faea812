"""Explicit constraints where a value's unreduced axes change at a call or a function return.

Shardy (from jaxlib 0.11 on) verifies that a `func.call`'s operand has the unreduced axes of its
callee's argument, that the call's results have those of the callee's results, and that a
`func.return` operand has those of its function's result, unless the value comes straight from
an explicit reshard (`sdy.sharding_constraint` or `sdy.reshard`): only such an op may all-reduce
unreduced axes or start new ones. shardc's propagation gives a callee one layout for all its call
sites, as Shardy does, so a call site may pass a reduced value to an argument that is unreduced
(Shardy's own explicit reshards then put a `replicated_to_unreduced` there) or the other way
round. The export writes that change as a constraint of the operand to the callee argument's
layout, which every jaxlib reads the same way: older ones derive the same collectives from it as
from the implicit change.
"""

from __future__ import annotations

from shardc.dialect.data_flow import CALL
from shardc.dialect.ir import Block, Module, Operation, Value, callee_name, func_body
from shardc.dialect.op_views import Func, ShardingConstraint
from shardc.dialect.shardings import AxisRef, TensorSharding


def bless_unreduced_changes(module: Module) -> int:
    """Insert a constraint before each call operand and each function return operand whose
    unreduced axes differ from those the callee's argument or the function's result has (and
    that no explicit reshard made). Returns how many constraints it inserted."""
    made = 0
    funcs = module.funcs  # (a dict built per access: once here)
    for call in list(module.ops_named(CALL)):
        callee = funcs.get(callee_name(call))
        body = func_body(callee) if callee is not None else None
        if body is None:
            continue
        for i, (v, arg) in enumerate(zip(list(call.operands), body.args, strict=False)):
            want = arg.sharding
            if want is not None and _changes(v, want):
                _constrain_operand(call, i, want)
                made += 1
    for func in funcs.values():
        body = func_body(func)
        ret = body.terminator if body is not None else None
        if ret is None:
            continue
        for i, want in enumerate(Func(func).result_shardings):
            if i < len(ret.operands) and want is not None and _changes(ret.operands[i], want):
                _constrain_operand(ret, i, want)
                made += 1
    return made


def _unreduced(s: TensorSharding | None) -> frozenset[AxisRef]:
    return frozenset(s.unreduced) if s is not None else frozenset()


def _changes(v: Value, want: TensorSharding) -> bool:
    """Whether passing `v` where `want` is expected changes its unreduced axes implicitly."""
    owner = getattr(v, "owner", None)
    if isinstance(owner, Operation) and owner.name in ShardingConstraint.OP_NAMES:
        return False
    return _unreduced(v.sharding) != _unreduced(want)


def _constrain_operand(user: Operation, index: int, want: TensorSharding) -> None:
    block = user.parent
    assert isinstance(block, Block), "an op with operands lives in a block"
    v = user.operands[index]
    c = ShardingConstraint.create(v, want, user.loc).op
    block.insert(block.ops.index(user), c)
    user.set_operand(index, c.results[0])
