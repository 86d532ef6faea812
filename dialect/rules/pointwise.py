"""Element-wise ops and their relatives: one factor per dim, shared by all non-scalar tensors."""

from __future__ import annotations

from ..ir import Operation
from .attrs import attr_int
from .builder import NR, RuleBuilder, pointwise_rule, shape_of
from .cache import shape_keyed
from .model import OpShardingRule
from .registry import register_rule

# ops whose rule is one pass-through factor per dim shared by every non-scalar tensor
POINTWISE_OPS = tuple(
    f"stablehlo.{n}"
    for n in """abs add and atan2 cbrt ceil count_leading_zeros collective_broadcast
    collective_permute compare complex convert cosine cross-replica-sum divide exponential
    exponential_minus_one floor imag is_finite log log_plus_one logistic maximum minimum multiply
    negate not or popcnt power real reduce_precision remainder round_nearest_afz
    round_nearest_even rsqrt shift_left shift_right_arithmetic shift_right_logical sign sine
    sqrt subtract tan tanh xor all_reduce""".split()
)

# The element-wise ops (the one definition): the pointwise ones, select, clamp, and map (which
# has no rule in Shardy either: docs/op_rules.md §3.9). Propagation treats them as
# pass-through ops.
ELEMENTWISE_OPS: frozenset[str] = frozenset(
    (*POINTWISE_OPS, "stablehlo.select", "stablehlo.clamp", "stablehlo.map")
)


@register_rule(*POINTWISE_OPS, "stablehlo.select")
@shape_keyed()
def elementwise(op: Operation) -> OpShardingRule:
    """`([i, j], [i, j])->([i, j])`; scalar operands (select's pred) get `[]`."""
    return pointwise_rule(op)


@register_rule("stablehlo.clamp")
@shape_keyed()
def clamp(op: Operation) -> OpShardingRule:
    """Element-wise over the operand (operand 1); scalar min/max get `[]`."""
    return pointwise_rule(op, shape_of(op.operands[1]))


@register_rule("stablehlo.bitcast_convert")
@shape_keyed()
def bitcast_convert(op: Operation) -> OpShardingRule:
    """Element-wise; the extra minor dim of the narrower element type is need-replication."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    b = RuleBuilder.for_op(op)
    b.add_pointwise(in_shape if len(in_shape) < len(out_shape) else out_shape)
    if len(in_shape) < len(out_shape):
        b.add_factor(None, len(out_shape) - 1, out_shape[-1], NR)
    elif len(in_shape) > len(out_shape):
        b.add_factor(len(in_shape) - 1, None, in_shape[-1], NR)
    return b.build()


@register_rule("stablehlo.batch_norm_inference")
def batch_norm_inference(op: Operation) -> OpShardingRule:
    """Element-wise; scale/offset/mean/variance map to the feature dim."""
    shape = shape_of(op.operands[0])
    feature = attr_int(op, "feature_index")
    b = RuleBuilder.for_op(op)
    n = len(op.operands)
    for d, size in enumerate(shape):
        b.add_factor([d] + [0 if d == feature else None] * (n - 1), d, size)
    return b.build()
