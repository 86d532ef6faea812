"""Propagation policies as data: the op-priority schedule and the user-priority rounds.

The op-priority schedule is a tuple of direction functions, one per level (docs/propagation.md
§6.1); level p uses the union of the functions of levels 0..p. User priorities are an outer loop
of rounds p0, p1, ... (docs/propagation.md §6.2), built by `user_priority_rounds`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from shardc.dialect.data_flow import DATA_FLOW_EDGE
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.rules.pointwise import ELEMENTWISE_OPS as ELEMENTWISE_RULE_OPS

from .factor_propagation import Direction, Directions

# element-wise for propagation: the rule registry's element-wise ops plus the sdy identities
ELEMENTWISE_OPS: frozenset[str] = ELEMENTWISE_RULE_OPS | frozenset(
    {"sdy.sharding_constraint", "sdy.propagation_barrier", DATA_FLOW_EDGE}
)

SHAPE_PASS_THROUGH_OPS = frozenset({"stablehlo.reshape", "stablehlo.transpose"})
FORWARD_PASS_THROUGH_OPS = frozenset({"stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"})
HOST_TRANSFER_TARGETS = frozenset({"MoveToHost", "MoveToDevice"})


class UnitLike(Protocol):
    """What a direction function may look at (the driver's propagation unit)."""

    kind: str  # "op", "edge", "barrier", "func_result"
    op_name: str
    call_target: str | None
    multi_use: bool
    rule: OpShardingRule


def is_pass_through_op(u: UnitLike) -> bool:
    return (
        u.kind == "edge"
        or u.op_name in ELEMENTWISE_OPS
        or u.op_name in SHAPE_PASS_THROUGH_OPS
        or (u.op_name == "stablehlo.custom_call" and u.call_target in HOST_TRANSFER_TARGETS)
    )


def pass_through_single_use(u: UnitLike, f: int) -> Direction:
    """Level 0: pass-through ops whose non-scalar operands have one use each."""
    if u.multi_use:
        return Directions.NONE
    if is_pass_through_op(u):
        return Directions.BOTH
    if u.op_name in FORWARD_PASS_THROUGH_OPS:
        return Directions.FORWARD
    return Directions.NONE


def pass_through_any_use(u: UnitLike, f: int) -> Direction:
    """Level 1: the same ops, whatever the use count."""
    if is_pass_through_op(u):
        return Directions.BOTH
    if u.op_name in FORWARD_PASS_THROUGH_OPS:
        return Directions.FORWARD
    return Directions.NONE


_NON_PASS_THROUGH = (FactorKind.REDUCTION, FactorKind.NEED_REPLICATION, FactorKind.PERMUTATION)


def pass_through_factors(u: UnitLike, f: int) -> Direction:
    """Level 2: pass-through factors of any op; broadcasts only backward."""
    if u.op_name == "stablehlo.broadcast_in_dim":
        return Directions.BACKWARD
    if u.rule.kinds[f] in _NON_PASS_THROUGH:
        return Directions.NONE
    return Directions.BOTH


def all_but_broadcast_forward(u: UnitLike, f: int) -> Direction:
    """Level 3: every factor, but broadcasts still only backward."""
    if u.op_name == "stablehlo.broadcast_in_dim":
        return Directions.BACKWARD
    return Directions.BOTH


def everything(u: UnitLike, f: int) -> Direction:
    """Level 4: everything, both ways."""
    return Directions.BOTH


DirectionFunction = Callable[[UnitLike, int], Direction]

OP_PRIORITY_SCHEDULE: tuple[DirectionFunction, ...] = (
    pass_through_single_use,
    pass_through_any_use,
    pass_through_factors,
    all_but_broadcast_forward,
    everything,
)

NO_OP_PRIORITY_SCHEDULE: tuple[DirectionFunction, ...] = (everything,)


def direction_at(
    schedule: tuple[DirectionFunction, ...], level: int, u: UnitLike, f: int
) -> Direction:
    """Union of the schedule's functions up to `level` (blocked factors are NONE)."""
    if f in u.rule.blocked:
        return Directions.NONE
    d = Directions.NONE
    for fn in schedule[: level + 1]:
        d |= fn(u, f)
        if d == Directions.BOTH:
            break
    return d


def user_priority_rounds(priorities: set[int]) -> list[int]:
    """Round 0 first, then every distinct priority > 0 in increasing order (gaps allowed)."""
    return [0, *sorted(p for p in priorities if p > 0)]
