"""The rule validator: check every rule on real numbers (after PyTorch DTensor's validator).

For each factor that can be split in two, split every tensor along the dims holding that factor
(a compound dim is split on its sub-dim), run the op on each shard with numpy, reassemble
(concatenate pass-through factors, sum reduction factors) and compare with the unsharded result.
Need-replication and permutation factors need communication by definition and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from shardc.dialect.ir import AttrDict, Operation, Value
from shardc.dialect.rules import FactorKind, OpShardingRule, rule_for
from shardc.dialect.types import TensorType

Fn = Callable[[list[np.ndarray], list[tuple[int, ...]]], list[np.ndarray]]


def make_op(name, operand_shapes, result_shapes, props=None):  # type: ignore[no-untyped-def]
    operands = [Value(TensorType(tuple(s), "f32")) for s in operand_shapes]
    return Operation(
        name,
        operands,
        [TensorType(tuple(s), "f32") for s in result_shapes],
        properties=AttrDict(items=dict(props or {})),
    )


def _split_view(shape, mapping, sizes, factor):  # type: ignore[no-untyped-def]
    """(shape with the dims holding `factor` expanded into their factors, axis of `factor`)."""
    out: list[int] = []
    axis = None
    for d, factors in enumerate(mapping):
        if factor not in factors:
            out.append(shape[d])
            continue
        fs = [sizes[f] for f in factors]
        assert int(np.prod(fs)) == shape[d], (
            f"factors {fs} of dim {d} do not multiply to {shape[d]}"
        )
        axis = len(out) + factors.index(factor)
        out.extend(fs)
    return out, axis


def _shard(arr, mapping, sizes, factor, piece):  # type: ignore[no-untyped-def]
    """Piece `piece` of 2 of `arr` along `factor` (the whole array if it lacks the factor)."""
    ex_shape, axis = _split_view(arr.shape, mapping, sizes, factor)
    if axis is None:
        return arr
    half = sizes[factor] // 2
    part = np.take(arr.reshape(ex_shape), range(piece * half, (piece + 1) * half), axis=axis)
    shape = [s // 2 if factor in mapping[d] else s for d, s in enumerate(arr.shape)]
    return part.reshape(shape)


def _holds(maps, factor) -> bool:  # type: ignore[no-untyped-def]
    return any(factor in dim for m in maps for dim in m)


def check_rule(op: Operation, fn: Fn, seed: int = 0) -> list[int]:
    """Validate `rule_for(op)` with `fn`; returns the factors it checked."""
    rule = rule_for(op)
    assert rule is not None
    rng = np.random.default_rng(seed)
    operands = [rng.standard_normal(v.type.shape) for v in op.operands]
    result_shapes = [r.type.shape for r in op.results]
    full = fn(operands, result_shapes)
    checked = []
    for f, size in enumerate(rule.factor_sizes):
        kind = rule.kinds[f]
        if size % 2 or kind in (FactorKind.NEED_REPLICATION, FactorKind.PERMUTATION):
            continue
        if kind is FactorKind.PASS_THROUGH and not (
            _holds(rule.operand_dims, f) and _holds(rule.result_dims, f)
        ):
            continue  # e.g. a reshape factor of one side only: sharding it needs a reshard
        outs = []
        for piece in (0, 1):
            shards = [
                _shard(x, m, rule.factor_sizes, f, piece)
                for x, m in zip(operands, rule.operand_dims, strict=True)
            ]
            shard_shapes = [
                tuple(s // 2 if f in m[d] else s for d, s in enumerate(shape))
                for shape, m in zip(result_shapes, rule.result_dims, strict=True)
            ]
            outs.append(fn(shards, shard_shapes))
        for r, (expected, m) in enumerate(zip(full, rule.result_dims, strict=True)):
            if kind is FactorKind.REDUCTION:
                got = outs[0][r] + outs[1][r]
            else:
                ex_shape, axis = _split_view(expected.shape, m, rule.factor_sizes, f)
                if axis is None:  # a result without the factor: every shard computes it whole
                    np.testing.assert_allclose(outs[0][r], outs[1][r], rtol=1e-6)
                    got = outs[0][r]
                else:
                    ex_shape[axis] //= 2
                    parts = [o[r].reshape(ex_shape) for o in outs]
                    got = np.concatenate(parts, axis=axis).reshape(expected.shape)
            np.testing.assert_allclose(
                got, expected, rtol=1e-6, atol=1e-9, err_msg=f"{op.name} factor {f} result {r}"
            )
        checked.append(f)
    return checked


def _broadcast(dims: Sequence[int]) -> Fn:
    def fn(xs, shapes):  # type: ignore[no-untyped-def]
        (x,) = xs
        shape = [1] * len(shapes[0])
        for i, d in enumerate(dims):
            shape[d] = x.shape[i]
        return [np.broadcast_to(x.reshape(shape), shapes[0]).copy()]

    return fn


DOT_NUMS = (
    "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
    "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>"
)

CASES = [
    ("add", make_op("stablehlo.add", [(8, 4), (8, 4)], [(8, 4)]), lambda xs, s: [xs[0] + xs[1]]),
    (
        "select_scalar_pred",
        make_op("stablehlo.maximum", [(8, 4), (8, 4)], [(8, 4)]),
        lambda xs, s: [np.maximum(xs[0], xs[1])],
    ),
    (
        "clamp",
        make_op("stablehlo.clamp", [(), (8, 16), ()], [(8, 16)]),
        lambda xs, s: [np.clip(xs[1], min(xs[0], xs[2]), max(xs[0], xs[2]))],
    ),
    (
        "dot_general",
        make_op(
            "stablehlo.dot_general",
            [(4, 8, 16), (4, 16, 32)],
            [(4, 8, 32)],
            {"dot_dimension_numbers": DOT_NUMS},
        ),
        lambda xs, s: [np.einsum("bij,bjk->bik", xs[0], xs[1])],
    ),
    (
        "dot_matvec",
        make_op("stablehlo.dot", [(8, 16), (16,)], [(8,)]),
        lambda xs, s: [xs[0] @ xs[1]],
    ),
    (
        "transpose",
        make_op(
            "stablehlo.transpose", [(2, 4, 8)], [(8, 2, 4)], {"permutation": "array<i64: 2, 0, 1>"}
        ),
        lambda xs, s: [np.transpose(xs[0], (2, 0, 1))],
    ),
    (
        "reshape_merge",
        make_op("stablehlo.reshape", [(2, 4, 32)], [(8, 32)]),
        lambda xs, s: [xs[0].reshape(s[0])],
    ),
    (
        "reshape_mixed",
        make_op("stablehlo.reshape", [(8, 4)], [(2, 16)]),
        lambda xs, s: [xs[0].reshape(s[0])],
    ),
    (
        "reshape_6x4_4x6",
        make_op("stablehlo.reshape", [(6, 4)], [(4, 6)]),
        lambda xs, s: [xs[0].reshape(s[0])],
    ),
    (
        "reshape_12x10_8x15",
        make_op("stablehlo.reshape", [(12, 10)], [(8, 15)]),
        lambda xs, s: [xs[0].reshape(s[0])],
    ),
    (
        "reshape_unit_dims",
        make_op("stablehlo.reshape", [(8, 4)], [(1, 8, 1, 4)]),
        lambda xs, s: [xs[0].reshape(s[0])],
    ),
    (
        "broadcast_in_dim",
        make_op(
            "stablehlo.broadcast_in_dim",
            [(8, 1)],
            [(2, 8, 4)],
            {"broadcast_dimensions": "array<i64: 1, 2>"},
        ),
        _broadcast((1, 2)),
    ),
    (
        "reduce_sum",
        make_op("stablehlo.reduce", [(8, 16, 4), ()], [(8, 4)], {"dimensions": "array<i64: 1>"}),
        lambda xs, s: [xs[0].sum(axis=1)],
    ),
    (
        "concatenate",
        make_op("stablehlo.concatenate", [(8, 4), (8, 12)], [(8, 16)], {"dimension": "1 : i64"}),
        lambda xs, s: [np.concatenate(xs, axis=1)],
    ),
    (
        "slice",
        make_op(
            "stablehlo.slice",
            [(8, 16)],
            [(4, 16)],
            {
                "start_indices": "array<i64: 2, 0>",
                "limit_indices": "array<i64: 6, 16>",
                "strides": "array<i64: 1, 1>",
            },
        ),
        lambda xs, s: [xs[0][2:6, :]],
    ),
    (
        "cholesky_batch",
        make_op("stablehlo.cholesky", [(4, 3, 3)], [(4, 3, 3)]),
        lambda xs, s: [np.linalg.cholesky(xs[0] @ np.swapaxes(xs[0], -1, -2) + 3 * np.eye(3))],
    ),
    (
        "sort_rows",
        make_op("stablehlo.sort", [(8, 16)], [(8, 16)], {"dimension": "1 : i64"}),
        lambda xs, s: [np.sort(xs[0], axis=1)],
    ),
    (
        "dot_general_matmul",
        make_op(
            "stablehlo.dot_general",
            [(4, 8), (8, 16)],
            [(4, 16)],
            {
                "dot_dimension_numbers": "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>"
            },
        ),
        lambda xs, s: [xs[0] @ xs[1]],
    ),
]


@pytest.mark.parametrize(("name", "op", "fn"), CASES, ids=[c[0] for c in CASES])
def test_rule_on_real_numbers(name: str, op: Operation, fn: Fn) -> None:
    checked = check_rule(op, fn)
    assert checked, f"{name}: no factor could be checked"


def test_validator_catches_a_wrong_rule() -> None:
    """A rule that claims a transpose keeps dims in place must fail the validator."""
    from shardc.dialect.rules import RuleBuilder, register_rule, unregister_rule

    name = "test.fake_transpose"

    @register_rule(name)
    def wrong(op: Operation) -> OpShardingRule:
        return RuleBuilder.for_op(op).add_pointwise((4, 4)).build()

    try:
        op = make_op(name, [(4, 4)], [(4, 4)])
        with pytest.raises(AssertionError):
            check_rule(op, lambda xs, s: [xs[0].T])
    finally:
        unregister_rule(name)
