"""Linear algebra and FFT: cholesky, triangular_solve, fft."""

from __future__ import annotations

from ..ir import Operation
from .attrs import attr_ints, attr_text, enum_word
from .builder import NR, PT, RuleBuilder, shape_of
from .model import OpShardingRule
from .registry import register_rule


@register_rule("stablehlo.cholesky")
def cholesky(op: Operation) -> OpShardingRule:
    """Batch dims pass through; the two matrix dims need replication."""
    shape = shape_of(op.operands[0])
    batch = len(shape) - 2
    return RuleBuilder.for_op(op).add_pointwise(shape, lambda d: PT if d < batch else NR).build()


@register_rule("stablehlo.triangular_solve")
def triangular_solve(op: Operation) -> OpShardingRule:
    """Batch dims shared; then factors j, k, l as Shardy prints them, all need-replication."""
    a, bshape = shape_of(op.operands[0]), shape_of(op.operands[1])
    rank = len(a)
    left = (attr_text(op, "left_side") or "false").startswith("true")
    trans = enum_word(attr_text(op, "transpose_a")) in ("TRANSPOSE", "ADJOINT")
    m, n = rank - 2, rank - 1  # the two matrix dims
    b = RuleBuilder.for_op(op)
    for d in range(rank - 2):
        b.add_factor(d, d, a[d])
    if left:
        b.add_factor([n if trans else m, m], None, bshape[m], NR)
        b.add_factor([None, n], n, bshape[n], NR)
        b.add_factor([m if trans else n, None], m, a[m if trans else n], NR)
    else:
        b.add_factor([None, m], m, bshape[m], NR)
        b.add_factor([m if trans else n, n], None, bshape[n], NR)
        b.add_factor([n if trans else m, None], n, a[n if trans else m], NR)
    return b.build()


@register_rule("stablehlo.fft")
def fft(op: Operation) -> OpShardingRule:
    """The FFT dims need replication (operand sizes); the last is blocked when RFFT/IRFFT change
    its size."""
    shape, out = shape_of(op.operands[0]), shape_of(op.results[0])
    first = len(shape) - len(attr_ints(op, "fft_length"))
    truncated = shape[-1] != out[-1] if shape else False
    last = len(shape) - 1
    return (
        RuleBuilder.for_op(op)
        .add_pointwise(shape, lambda d: NR if d >= first else PT, lambda d: truncated and d == last)
        .build()
    )


@register_rule("stablehlo.rng_bit_generator")
def rng_bit_generator(op: Operation) -> OpShardingRule:
    """The state is need-replication and blocked; the output dims are result-only factors."""
    state = shape_of(op.operands[0])
    out = shape_of(op.results[1]) if len(op.results) > 1 else ()
    b = RuleBuilder.for_op(op)
    for d, size in enumerate(state):
        b.add_factor(d, [d, None], size, NR, blocked=True)
    for d, size in enumerate(out):
        b.add_factor(None, [None, d], size)
    return b.build()
