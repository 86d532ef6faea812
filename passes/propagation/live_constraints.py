"""`apply-sharding-constraints` on the module XLA propagates: constraints it deletes decide nothing.

XLA's dead-code pass removes a sharding constraint nothing reads (a `Sharding` custom call
without effects) before its own Shardy runs (docs/xla_boundary.md §3), so such a constraint
never shards its input there. With `PropagationOptions.xla_dead_constraints` propagation lets
it decide no layout (`dead_ops(constraints=True)`); this step keeps it from deciding one
before propagation starts, by copying only the live constraints' shardings onto their inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardc.dialect.ir import Module
from shardc.dialect.op_views import MANUAL_COMPUTATION, SHARDING_CONSTRAINT

from ..context import OpList, PassContext
from ..import_steps.constraints import ApplyShardingConstraints, apply_closed_constraints
from .unit_builder import dead_ops


@dataclass(frozen=True)
class ApplyLiveShardingConstraints(ApplyShardingConstraints):
    """The closed-constraint application step, less the constraints XLA deletes as dead."""

    def run(self, module: Module, ctx: PassContext) -> None:
        if not (ctx.has_op(module, SHARDING_CONSTRAINT) or ctx.has_op(module, MANUAL_COMPUTATION)):
            return
        ops = ctx.analysis(OpList, module)
        dead = dead_ops(module, ops, xla=True, constraints=True)
        apply_closed_constraints(module, [op for op in ops if id(op) not in dead] if dead else ops)
