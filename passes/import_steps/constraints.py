"""`apply-sharding-constraints`: a fully closed constraint shards its unsharded input
(reference/propagation.md §7.2), as Shardy's import does.

Not when the input has another use that asks for something else: a different constraint, or a
manual computation (whose in_sharding decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import Module, OpResult
from shardc.dialect.op_views import SHARDING_CONSTRAINT, ShardingConstraint

from ..context import PassContext


@dataclass(frozen=True)
class ApplyShardingConstraints:
    """The closed-constraint application pass; no options."""

    name: ClassVar[str] = "apply-sharding-constraints"
    changes_ir: ClassVar[bool] = True

    def run(self, module: Module, ctx: PassContext) -> None:
        apply_closed_constraints(module)


def apply_closed_constraints(module: Module) -> None:
    """Copy each fully closed constraint's sharding onto its input when nothing disagrees."""
    for op in module.walk():
        if op.name != SHARDING_CONSTRAINT:
            continue
        s = ShardingConstraint(op).sharding
        v = op.operands[0]
        if v.sharding is not None or not all(d.is_closed for d in s.dims):
            continue
        if isinstance(v, OpResult) and v.owner.name in ShardingConstraint.OP_NAMES:
            continue  # a constraint's result has the constraint's sharding already
        clash = False
        for user, _ in v.uses:
            if user is op:
                continue
            if user.name == SHARDING_CONSTRAINT and ShardingConstraint(user).sharding != s:
                clash = True
            elif user.name == "sdy.manual_computation":
                clash = True
        if not clash:
            v.sharding = s
