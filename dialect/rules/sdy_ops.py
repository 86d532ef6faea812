"""Rules of sdy ops. Only `sdy.sharding_constraint` has a registered (element-wise) rule; data-flow
edges, function results and `sdy.propagation_barrier` get identity rules built on the fly by the
propagation driver (`builder.identity_rule`); `sdy.reshard` and `sdy.sharding_group` have none.
"""

from __future__ import annotations

from ..ir import Operation
from .builder import pointwise_rule
from .cache import shape_keyed
from .model import OpShardingRule
from .registry import register_rule


@register_rule("sdy.sharding_constraint")
@shape_keyed()
def sharding_constraint(op: Operation) -> OpShardingRule:
    return pointwise_rule(op)
