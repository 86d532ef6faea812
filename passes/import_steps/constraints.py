"""`apply-sharding-constraints`: a fully closed constraint shards its unsharded input
(docs/propagation.md §7.2), as Shardy's import does.

A manual computation's in_shardings are constraints on its operands too (Shardy applies them the
same way): a fully closed in_sharding becomes its operand's sharding, so propagation takes it as
is instead of merging upstream axes into the operand.

Not when the input has another use that asks for something else: a different constraint, or a
manual computation whose in_sharding for it differs. Not on a data-flow edge target either (a
`while`, `case`, `optimization_barrier` or `func.call` result; jaxlib 0.10.2 has inlined calls as
named computations by then): there Shardy moves the constraint right after the target (for a
manual computation's in_sharding it makes one) and sends every other use of the target through
it, so the target itself stays open. shardc keeps the IR's uses: propagation reads the target
through the constraint instead (`redirects_uses`, `redirects_manual_operand`, read by
passes/propagation/unit_builder.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.data_flow import is_result_owner
from shardc.dialect.ir import Module, Operation, OpResult, Value
from shardc.dialect.op_views import (
    MANUAL_COMPUTATION,
    SHARDING_CONSTRAINT,
    ManualComputation,
    ShardingConstraint,
)
from shardc.dialect.shardings import TensorSharding

from ..context import SAME_OPS, OpList, PassContext


@dataclass(frozen=True)
class ApplyShardingConstraints:
    """The closed-constraint application pass; no options."""

    name: ClassVar[str] = "apply-sharding-constraints"
    preserves: ClassVar[frozenset[type]] = SAME_OPS

    def run(self, module: Module, ctx: PassContext) -> None:
        if ctx.has_op(module, SHARDING_CONSTRAINT) or ctx.has_op(module, MANUAL_COMPUTATION):
            apply_closed_constraints(module, ctx.analysis(OpList, module))


def apply_closed_constraints(module: Module, ops: list[Operation] | None = None) -> None:
    """Copy each fully closed constraint's (or manual computation in_sharding's) sharding onto
    its input when nothing disagrees (`ops`: `list(module.walk())`, when the caller has it)."""
    for op in module.walk() if ops is None else ops:
        if op.name == SHARDING_CONSTRAINT:
            v = op.operands[0]
            if isinstance(v, OpResult) and v.owner.name in ShardingConstraint.OP_NAMES:
                continue  # a constraint's result has the constraint's sharding already
            _apply(v, ShardingConstraint(op).sharding)
        elif op.name == MANUAL_COMPUTATION:
            for v, s in zip(op.operands, ManualComputation(op).in_shardings, strict=False):
                _apply(v, s)


def redirects_uses(op: Operation, before_propagation: bool = True) -> bool:
    """`op` is a closed constraint that Shardy applies to a data-flow edge target by sending the
    target's other uses through the constraint. (`before_propagation=False`: the target may
    have a sharding by now, as after propagation; the export asks so.)"""
    if op.name != SHARDING_CONSTRAINT or ShardingConstraint(op).per_use:
        return False
    v = op.operands[0]
    if not is_result_owner(v):
        return False
    s = ShardingConstraint(op).sharding
    if not before_propagation:
        return all(d.is_closed for d in s.dims) and not _asks_otherwise(v, s)
    return _applies(v, s)


def redirects_manual_operand(
    op: Operation, index: int, before_propagation: bool = True
) -> TensorSharding | None:
    """The closed in_sharding of manual computation `op`'s operand `index` when that operand is a
    data-flow edge target: Shardy puts a constraint to it after the target and sends every use of
    the target (the manual computation's too) through that constraint. (`before_propagation`: as
    in `redirects_uses`.)"""
    if op.name != MANUAL_COMPUTATION or index >= len(op.operands):
        return None
    v = op.operands[index]
    ins = ManualComputation(op).in_shardings
    if index >= len(ins) or not is_result_owner(v):
        return None
    s = ins[index]
    if not before_propagation:
        return s if all(d.is_closed for d in s.dims) and not _asks_otherwise(v, s) else None
    return s if _applies(v, s) else None


def _applies(v: Value, s: TensorSharding) -> bool:
    if v.sharding is not None or not all(d.is_closed for d in s.dims):
        return False
    return not _asks_otherwise(v, s)


def _apply(v: Value, s: TensorSharding) -> None:
    if _applies(v, s) and not is_result_owner(v):
        v.sharding = s


def _asks_otherwise(v: Value, s: TensorSharding) -> bool:
    """Another constraint, or a manual computation, wants `v` in a sharding other than `s`."""
    for user, index in v.uses:
        if user.name == SHARDING_CONSTRAINT and ShardingConstraint(user).sharding != s:
            return True
        if user.name == MANUAL_COMPUTATION:
            ins = ManualComputation(user).in_shardings
            if index >= len(ins) or ins[index] != s:
                return True
    return False
