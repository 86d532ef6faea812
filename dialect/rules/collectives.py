"""Collectives (as they appear inside manual regions). all_reduce, collective_permute,
collective_broadcast and cross-replica-sum are element-wise (see pointwise.py)."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Operation
from .attrs import attr_int
from .builder import NR, RuleBuilder, shape_of
from .model import OpShardingRule
from .registry import register_rule


def _with_special_dims(op: Operation, special: Sequence[int]) -> OpShardingRule:
    """Other dims pass through first; then, per special dim, an operand-only and a result-only
    need-replication factor (operand i <-> result i for variadic ops)."""
    shape, out = shape_of(op.operands[0]), shape_of(op.results[0])
    b = RuleBuilder.for_op(op)
    for d, size in enumerate(shape):
        if d not in special:
            b.add_factor(d, d, size)
    for d in special:
        b.add_factor(d, None, shape[d], NR)
        b.add_factor(None, d, out[d], NR)
    return b.build()


@register_rule("stablehlo.all_gather")
def all_gather(op: Operation) -> OpShardingRule:
    return _with_special_dims(op, [attr_int(op, "all_gather_dim")])


@register_rule("stablehlo.reduce_scatter")
def reduce_scatter(op: Operation) -> OpShardingRule:
    return _with_special_dims(op, [attr_int(op, "scatter_dimension")])


@register_rule("stablehlo.all_to_all")
def all_to_all(op: Operation) -> OpShardingRule:
    split, concat = attr_int(op, "split_dimension"), attr_int(op, "concat_dimension")
    return _with_special_dims(op, [split] if split == concat else [split, concat])
