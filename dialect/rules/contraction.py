"""Contractions: dot_general, dot, convolution."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Operation
from .attrs import attr_int, attr_text, conv_dims, struct_fields
from .builder import PT, P, R, RuleBuilder, shape_of
from .cache import shape_keyed
from .model import OpShardingRule
from .registry import register_rule


def _dot_rule(
    op: Operation,
    lhs_batch: Sequence[int],
    rhs_batch: Sequence[int],
    lhs_contract: Sequence[int],
    rhs_contract: Sequence[int],
) -> OpShardingRule:
    """Factors: batch (lhs order), lhs free, rhs free, contracting (reduction)."""
    lhs, rhs = shape_of(op.operands[0]), shape_of(op.operands[1])
    b = RuleBuilder.for_op(op)
    out = 0
    for lb, rb in zip(lhs_batch, rhs_batch, strict=True):
        b.add_factor([lb, rb], out, lhs[lb])
        out += 1
    taken_l, taken_r = set(lhs_batch) | set(lhs_contract), set(rhs_batch) | set(rhs_contract)
    for d, size in enumerate(lhs):
        if d not in taken_l:
            b.add_factor([d, None], out, size)
            out += 1
    for d, size in enumerate(rhs):
        if d not in taken_r:
            b.add_factor([None, d], out, size)
            out += 1
    for lc, rc in zip(lhs_contract, rhs_contract, strict=True):
        b.add_factor([lc, rc], None, lhs[lc], R)
    return b.build()


@register_rule("stablehlo.dot_general")
@shape_keyed("dot_dimension_numbers")
def dot_general(op: Operation) -> OpShardingRule:
    f = struct_fields(attr_text(op, "dot_dimension_numbers"))
    return _dot_rule(
        op,
        f.get("lhs_batching_dimensions", ()),
        f.get("rhs_batching_dimensions", ()),
        f.get("lhs_contracting_dimensions", ()),
        f.get("rhs_contracting_dimensions", ()),
    )


@register_rule("stablehlo.dot")
@shape_keyed()
def dot(op: Operation) -> OpShardingRule:
    lhs_rank = len(shape_of(op.operands[0]))
    return _dot_rule(op, (), (), (lhs_rank - 1,), (0,))


@register_rule("stablehlo.convolution")
def convolution(op: Operation) -> OpShardingRule:
    """Shardy's convolution factors: batch groups, batch, per spatial dim windows (P) and window
    size (R) larger first, feature groups, input feature (R), output feature."""
    return _convolution(op, spatial=True)


@register_rule("stablehlo.convolution", conservative=True)
def convolution_conservative(op: Operation) -> OpShardingRule:
    """Conservative propagation: no spatial factors (each spatial dim gets a size-1 factor)."""
    return _convolution(op, spatial=False)


def _convolution(op: Operation, spatial: bool) -> OpShardingRule:
    dn = conv_dims(attr_text(op, "dimension_numbers") or "")
    lhs, rhs, out = shape_of(op.operands[0]), shape_of(op.operands[1]), shape_of(op.results[0])
    batch_groups = attr_int(op, "batch_group_count", 1)
    feature_groups = attr_int(op, "feature_group_count", 1)
    b = RuleBuilder.for_op(op)
    if batch_groups > 1:
        b.add_factor([dn.input_batch, dn.kernel_output_feature], dn.output_feature, batch_groups)
    b.add_factor([dn.input_batch, None], dn.output_batch, out[dn.output_batch])
    spatial_dims = zip(dn.input_spatial, dn.kernel_spatial, dn.output_spatial, strict=True)
    for ld, kd, od in spatial_dims if spatial else ():
        remaining = lhs[ld]
        num_windows, window_size = out[od], rhs[kd]
        windows_first = num_windows >= window_size
        for is_windows in (windows_first, not windows_first):
            size = num_windows if is_windows else window_size
            clipped = min(remaining, size)
            if clipped > 1:
                if is_windows:
                    b.add_factor([ld, None], od, clipped, P)
                else:
                    b.add_factor([ld, kd], None, clipped, R)
            remaining //= max(size, 1)
    if feature_groups > 1:
        b.add_factor(
            [dn.input_feature, dn.kernel_output_feature], dn.output_feature, feature_groups
        )
    b.add_factor([dn.input_feature, dn.kernel_input_feature], None, rhs[dn.kernel_input_feature], R)
    out_features = out[dn.output_feature] // (batch_groups * feature_groups)
    if out_features > 1:
        b.add_factor([None, dn.kernel_output_feature], dn.output_feature, out_features, PT)
    return b.build()
