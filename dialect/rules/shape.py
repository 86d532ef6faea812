"""Shape ops: broadcast_in_dim, reshape (compound factors), transpose, concatenate, slice,
dynamic_slice, dynamic_update_slice, pad, reverse."""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd

from ..ir import Operation, OpResult
from .attrs import attr_int, attr_ints
from .builder import NR, PT, P, RuleBuilder, shape_of
from .cache import shape_keyed
from .model import OpShardingRule
from .registry import register_rule

_CONSTANT_OPS = frozenset({"stablehlo.constant", "sdy.constant"})


def _defined_by(value: object, names: frozenset[str] | str) -> bool:
    if not isinstance(value, OpResult):
        return False
    return value.owner.name in names if isinstance(names, frozenset) else value.owner.name == names


@register_rule("stablehlo.broadcast_in_dim")
@shape_keyed("broadcast_dimensions")
def broadcast_in_dim(op: Operation) -> OpShardingRule:
    """Factors in result-dim order; an expanded size-1 operand dim gets its own size-1 factor."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    out_to_in = {o: i for i, o in enumerate(attr_ints(op, "broadcast_dimensions"))}
    b = RuleBuilder.for_op(op)
    for out_dim, out_size in enumerate(out_shape):
        in_dim = out_to_in.get(out_dim)
        if in_dim is not None and in_shape[in_dim] == 1 and out_size != 1:
            b.add_factor(in_dim, None, 1)
            in_dim = None
        b.add_factor(in_dim, out_dim, out_size)
    return b.build()


@register_rule("stablehlo.transpose")
@shape_keyed("permutation")
def transpose(op: Operation) -> OpShardingRule:
    """One factor per result dim, in result-dim order."""
    out_shape = shape_of(op.results[0])
    b = RuleBuilder.for_op(op)
    for out_dim, in_dim in enumerate(attr_ints(op, "permutation")):
        b.add_factor(in_dim, out_dim, out_shape[out_dim])
    return b.build()


def reshape_factors(
    in_shape: Sequence[int], out_shape: Sequence[int]
) -> list[tuple[int | None, int | None, int]]:
    """Shardy's reshape factorization: (input dim | None, output dim | None, size), in order."""
    out: list[tuple[int | None, int | None, int]] = []
    in_rank, out_rank = len(in_shape), len(out_shape)
    in_d = out_d = 0
    prod_in = prod_out = fac_in = fac_out = 1
    while in_d < in_rank or out_d < out_rank:
        if in_d < in_rank and in_shape[in_d] == 1:
            out.append((in_d, None, 1))
            in_d += 1
            continue
        if out_d < out_rank and out_shape[out_d] == 1:
            out.append((None, out_d, 1))
            out_d += 1
            continue
        if in_d < in_rank and prod_in == fac_in:
            prod_in *= in_shape[in_d]
        if out_d < out_rank and prod_out == fac_out:
            prod_out *= out_shape[out_d]
        n_in, n_out = prod_in // fac_in, prod_out // fac_out
        g = gcd(n_in, n_out)

        def pick(n: int, small: int, large: int, g: int = g) -> int:
            if large % small == 0 and n % (large // small) == 0:
                return large // small
            return n // g if n > g else n

        if fac_in == fac_out:
            if g > 1:
                out.append((in_d, out_d, g))
                fac_in *= g
                fac_out *= g
            else:
                out.append((in_d, None, n_in))
                fac_in *= n_in
                out.append((None, out_d, n_out))
                fac_out *= n_out
        elif fac_in < fac_out:
            f = pick(n_in, fac_in, fac_out)
            out.append((in_d, None, f))
            fac_in *= f
        else:
            f = pick(n_out, fac_out, fac_in)
            out.append((None, out_d, f))
            fac_out *= f
        if in_d < in_rank and prod_in == fac_in:
            in_d += 1
        if out_d < out_rank and prod_out == fac_out:
            out_d += 1
    return out


@register_rule("stablehlo.reshape")
@shape_keyed()
def reshape(op: Operation) -> OpShardingRule | None:
    """Compound factors from Shardy's walk over both shapes; no rule for 0-element tensors."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    if 0 in in_shape or 0 in out_shape or -1 in in_shape or -1 in out_shape:
        return None
    b = RuleBuilder.for_op(op)
    for in_dim, out_dim, size in reshape_factors(in_shape, out_shape):
        b.add_factor(in_dim, out_dim, size)
    return b.build()


@register_rule("stablehlo.concatenate")
def concatenate(op: Operation) -> OpShardingRule:
    """Element-wise over the result; the concat dim is need-replication, or permutation when the
    operands are slices (every one a slice, or all of one tensor, some of them sliced: the data
    only moves between devices)."""
    concat_dim = attr_int(op, "dimension")
    kind = P if _concat_of_slices(op.operands) else NR
    return (
        RuleBuilder.for_op(op)
        .add_pointwise(shape_of(op.results[0]), lambda d: kind if d == concat_dim else PT)
        .build()
    )


@register_rule("stablehlo.concatenate", conservative=True)
def concatenate_conservative(op: Operation) -> OpShardingRule:
    """Conservative propagation: no factor along the concat dim (each tensor's dim gets a size-1
    factor of its own); the other dims pass through."""
    concat_dim = attr_int(op, "dimension")
    shape = shape_of(op.results[0])
    b = RuleBuilder.for_op(op)
    for d, size in enumerate(shape):
        if d != concat_dim:
            b.add_factor(d, d, size)
    return b.build()


def _concat_of_slices(operands: Sequence[object]) -> bool:
    """Every operand is a slice, or every operand is one tensor or a slice of it, one at least
    a slice (Shardy's two patterns for a permutation concat dim)."""
    if all(_defined_by(v, "stablehlo.slice") for v in operands):
        return True
    first = _before_slice(operands[0])
    return all(_before_slice(v) is first for v in operands) and any(
        _defined_by(v, "stablehlo.slice") for v in operands
    )


def _before_slice(value: object) -> object:
    """The operand of the slice that defines `value`, else `value`."""
    if isinstance(value, OpResult) and value.owner.name == "stablehlo.slice":
        return value.owner.operands[0]
    return value


def _dimwise(op: Operation, changed: Sequence[bool], kind=P, blocked: bool = False):  # type: ignore[no-untyped-def]
    """Operand 0 <-> result 0 per dim, sized by the operand; changed dims get `kind`."""
    shape = shape_of(op.operands[0])
    b = RuleBuilder.for_op(op)
    n = len(op.operands)
    for d, size in enumerate(shape):
        b.add_factor(
            [d] + [None] * (n - 1), d, size, kind if changed[d] else PT, blocked and changed[d]
        )
    return b.build()


@register_rule("stablehlo.slice")
@shape_keyed()
def slice_(op: Operation) -> OpShardingRule:
    """Sliced dims: one permutation factor of the operand size."""
    return _dimwise(op, _mismatched(op))


@register_rule("stablehlo.slice", conservative=True)
@shape_keyed()
def slice_conservative(op: Operation) -> OpShardingRule:
    """Conservative propagation: the sliced dims' permutation factors are blocked."""
    return _dimwise(op, _mismatched(op), blocked=True)


@register_rule("stablehlo.pad")
def pad(op: Operation) -> OpShardingRule:
    """Dims whose size the padding changes: one permutation factor of the operand size. A dim
    padded to its own size (low -1, high 1: a shift) passes through, as in Shardy's registry,
    which types only mismatched dims."""
    return _dimwise(op, _mismatched(op))


@register_rule("stablehlo.pad", conservative=True)
def pad_conservative(op: Operation) -> OpShardingRule:
    """Conservative propagation: the padded dims' permutation factors are blocked."""
    return _dimwise(op, _mismatched(op), blocked=True)


def _mismatched(op: Operation) -> list[bool]:
    """Per dim, whether operand 0 and result 0 differ in size."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    return [i != o for i, o in zip(in_shape, out_shape, strict=True)]


@register_rule("stablehlo.reverse")
def reverse(op: Operation) -> OpShardingRule:
    """Reversed dims are permutation factors."""
    dims = set(attr_ints(op, "dimensions"))
    return _dimwise(op, [d in dims for d in range(len(shape_of(op.operands[0])))])


@register_rule("stablehlo.dynamic_slice")
@shape_keyed()
def dynamic_slice(op: Operation) -> OpShardingRule:
    """Sliced dims: need-replication and blocked; the rest pass through."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    return _dimwise(
        op, [i != o for i, o in zip(in_shape, out_shape, strict=True)], NR, blocked=True
    )


# (operand shapes, result shapes, all start indices constant) -> the rule: it depends on those
# only, but reads the indices' defining ops, so it is not `shape_keyed` (a scanned model has a
# dynamic_update_slice per stacked array in every call-site copy of its helpers)
_DUS_RULES: dict[tuple, OpShardingRule] = {}


@register_rule("stablehlo.dynamic_update_slice")
def dynamic_update_slice(op: Operation) -> OpShardingRule:
    """Operand/result dims pass through; an update dim of another size gets its own factor, NR
    unless every start index is a constant."""
    constant_indices = all(_defined_by(v, _CONSTANT_OPS) for v in op.operands[2:])
    key = (
        tuple([shape_of(v) for v in op.operands]),
        tuple([shape_of(v) for v in op.results]),
        constant_indices,
    )
    rule = _DUS_RULES.get(key)
    if rule is None:
        if len(_DUS_RULES) >= 4096:
            _DUS_RULES.clear()
        rule = _DUS_RULES[key] = _dynamic_update_slice(op, constant_indices)
    return rule


def _dynamic_update_slice(op: Operation, constant_indices: bool) -> OpShardingRule:
    in_shape, upd_shape = shape_of(op.operands[0]), shape_of(op.operands[1])
    n_idx = len(op.operands) - 2
    b = RuleBuilder.for_op(op)
    for d, size in enumerate(in_shape):
        if upd_shape[d] == size:
            b.add_factor([d, d] + [None] * n_idx, d, size)
        else:
            b.add_factor([d, None] + [None] * n_idx, d, size)
            b.add_factor(
                [None, d] + [None] * n_idx, None, upd_shape[d], PT if constant_indices else NR
            )
    return b.build()
