"""Reductions and windowed ops: reduce, reduce_window, select_and_scatter, sort."""

from __future__ import annotations

from ..ir import Operation
from .attrs import attr_int, attr_ints, attr_text, dense_pairs
from .builder import NR, PT, P, R, RuleBuilder, shape_of
from .cache import shape_keyed
from .model import OpShardingRule
from .registry import register_rule


@register_rule("stablehlo.reduce")
@shape_keyed("dimensions")
def reduce(op: Operation) -> OpShardingRule:
    """Reduced dims are reduction factors of the inputs; the rest pass through to the results."""
    n = len(op.results)
    shape = shape_of(op.operands[0])
    reduced = set(attr_ints(op, "dimensions"))
    b = RuleBuilder.for_op(op)
    out = 0
    for d, size in enumerate(shape):
        if d in reduced:
            b.add_factor([d] * n + [None] * n, None, size, R)
        else:
            b.add_factor([d] * n + [None] * n, out, size)
            out += 1
    return b.build()


def _window_is_trivial(op: Operation, rank: int) -> list[bool]:
    window = attr_ints(op, "window_dimensions") or (1,) * rank
    strides = attr_ints(op, "window_strides") or (1,) * rank
    base_dil = attr_ints(op, "base_dilations") or (1,) * rank
    win_dil = attr_ints(op, "window_dilations") or (1,) * rank
    padding = dense_pairs(attr_text(op, "padding"), rank)
    return [
        window[d] == 1
        and strides[d] == 1
        and base_dil[d] == 1
        and win_dil[d] == 1
        and padding[d] == (0, 0)
        for d in range(rank)
    ]


@register_rule("stablehlo.reduce_window")
def reduce_window(op: Operation) -> OpShardingRule:
    """A dim passes through iff its window is trivial; else a permutation factor of the result
    size."""
    return _reduce_window(op, blocked=False)


@register_rule("stablehlo.reduce_window", conservative=True)
def reduce_window_conservative(op: Operation) -> OpShardingRule:
    """Conservative propagation: the permutation factors are blocked."""
    return _reduce_window(op, blocked=True)


def _reduce_window(op: Operation, blocked: bool) -> OpShardingRule:
    n = len(op.results)
    out_shape = shape_of(op.results[0])
    trivial = _window_is_trivial(op, len(out_shape))
    b = RuleBuilder.for_op(op)
    for d, size in enumerate(out_shape):
        b.add_factor([d] * n + [None] * n, d, size, PT if trivial[d] else P, blocked and not trivial[d])
    return b.build()


@register_rule("stablehlo.select_and_scatter")
def select_and_scatter(op: Operation) -> OpShardingRule:
    """Trivial window dims pass through; otherwise the source dim gets its own NR factor and the
    operand/result dim a permutation factor."""
    return _select_and_scatter(op, blocked=False)


@register_rule("stablehlo.select_and_scatter", conservative=True)
def select_and_scatter_conservative(op: Operation) -> OpShardingRule:
    """Conservative propagation: the factors of non-trivial window dims are blocked."""
    return _select_and_scatter(op, blocked=True)


def _select_and_scatter(op: Operation, blocked: bool) -> OpShardingRule:
    shape, source = shape_of(op.operands[0]), shape_of(op.operands[1])
    trivial = _window_is_trivial(op, len(shape))
    b = RuleBuilder.for_op(op)
    for d, size in enumerate(shape):
        if trivial[d]:
            b.add_factor([d, d, None], d, size)
        else:
            b.add_factor([None, d, None], None, source[d], NR, blocked)
            b.add_factor([d, None, None], d, size, P, blocked)
    return b.build()


@register_rule("stablehlo.sort")
def sort(op: Operation) -> OpShardingRule:
    """The sort dim needs replication; it is also blocked when every other dim has size 1."""
    shape = shape_of(op.operands[0])
    dim = attr_int(op, "dimension", -1) % max(len(shape), 1)
    lone = all(s == 1 for d, s in enumerate(shape) if d != dim)
    return (
        RuleBuilder.for_op(op)
        .add_pointwise(shape, lambda d: NR if d == dim else PT, lambda d: lone and d == dim)
        .build()
    )
