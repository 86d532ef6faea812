"""Op sharding rules: per-family rules on hand-built ops, the registry, and the text syntaxes."""

from __future__ import annotations

import pytest

from shardc.dialect.errors import ParseError, ShardcError
from shardc.dialect.ir import AttrDict, Operation, Value
from shardc.dialect.rules import (
    NO_RULE,
    FactorKind,
    OpShardingRule,
    RuleBuilder,
    identity_rule,
    parse_rule,
    print_rule,
    register_rule,
    registered_ops,
    rule_for,
    rule_from_einsum,
    unregister_rule,
)
from shardc.dialect.rules.shape import reshape_factors
from shardc.dialect.types import TensorType


def make_op(
    name: str,
    operand_shapes: list[tuple[int, ...]],
    result_shapes: list[tuple[int, ...]],
    props: dict[str, str] | None = None,
    attrs: dict[str, str] | None = None,
) -> Operation:
    operands = [Value(TensorType(tuple(s), "f32")) for s in operand_shapes]
    return Operation(
        name,
        operands,
        [TensorType(tuple(s), "f32") for s in result_shapes],
        properties=AttrDict(items=dict(props or {})),
        attributes=AttrDict(items=dict(attrs or {})),
    )


def text(op) -> str:  # type: ignore[no-untyped-def]
    rule = rule_for(op)
    return "no rule" if rule is None else print_rule(rule)


# --------------------------------------------------------------------------------------------
# one rule per family (expected texts: Shardy's, docs/op_rules.md §3)


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (
            make_op("stablehlo.add", [(8, 4), (8, 4)], [(8, 4)]),
            "([i, j], [i, j])->([i, j]) {i=8, j=4}",
        ),
        (
            make_op("stablehlo.clamp", [(), (8, 16), ()], [(8, 16)]),
            "([], [i, j], [])->([i, j]) {i=8, j=16}",
        ),
        (
            make_op(
                "stablehlo.broadcast_in_dim",
                [(8, 1)],
                [(2, 8, 4)],
                {"broadcast_dimensions": "array<i64: 1, 2>"},
            ),
            "([j, k])->([i, j, l]) {i=2, j=8, k=1, l=4}",
        ),
        (
            make_op("stablehlo.reshape", [(6, 4)], [(4, 6)]),
            "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}",
        ),
        (
            make_op(
                "stablehlo.dot_general",
                [(4, 8, 16), (4, 16, 32)],
                [(4, 8, 32)],
                {
                    "dot_dimension_numbers": "#stablehlo.dot<lhs_batching_dimensions = [0], "
                    "rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
                    "rhs_contracting_dimensions = [1]>"
                },
            ),
            "([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=32, l=16} reduction={l}",
        ),
        (
            make_op(
                "stablehlo.reduce", [(8, 16, 4), ()], [(8, 4)], {"dimensions": "array<i64: 1>"}
            ),
            "([i, j, k], [])->([i, k]) {i=8, j=16, k=4} reduction={j}",
        ),
        (
            make_op(
                "stablehlo.gather",
                [(8, 16), (4, 1)],
                [(4, 16)],
                {
                    "dimension_numbers": "#stablehlo.gather<offset_dims = [1], "
                    "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>",
                    "slice_sizes": "array<i64: 1, 16>",
                },
            ),
            "([k, j], [i, l])->([i, j]) {i=4, j=16, k=8, l=1} reduction={k} need_replication={l}",
        ),
        (
            make_op("stablehlo.sort", [(16,)], [(16,)], {"dimension": "0 : i64"}),
            "([i])->([i]) {i=16} need_replication={i} blocked_propagation={i}",
        ),
        (
            make_op("stablehlo.cholesky", [(4, 8, 8)], [(4, 8, 8)]),
            "([i, j, k])->([i, j, k]) {i=4, j=8, k=8} need_replication={j, k}",
        ),
        (
            make_op("stablehlo.all_gather", [(4, 4)], [(8, 4)], {"all_gather_dim": "0 : i64"}),
            "([j, i])->([k, i]) {i=4, j=4, k=8} need_replication={j, k}",
        ),
        (
            make_op(
                "stablehlo.custom_call",
                [(4, 8, 8)],
                [(4, 8, 8), (4, 8)],
                {"call_target_name": '"Eigh"'},
            ),
            "([i, j, k])->([i, j, k], [i, k]) {i=4, j=8, k=8}",
        ),
        (
            make_op("sdy.sharding_constraint", [(8, 16)], [(8, 16)]),
            "([i, j])->([i, j]) {i=8, j=16}",
        ),
    ],
    ids=lambda v: v.name if hasattr(v, "name") else "",
)
def test_family_rules(op, expected) -> None:  # type: ignore[no-untyped-def]
    assert text(op) == f"#sdy.op_sharding_rule<{expected}>"


def test_no_rule_ops() -> None:
    assert rule_for(make_op("stablehlo.iota", [], [(8,)])) is None
    assert rule_for(make_op("stablehlo.constant", [], [(8,)])) is None
    assert (
        rule_for(
            make_op(
                "stablehlo.custom_call", [(8,)], [(8,)], {"call_target_name": '"unknown_thing"'}
            )
        )
        is None
    )
    assert "stablehlo.iota" not in registered_ops()
    assert not set(NO_RULE) & set(registered_ops())


def test_reshape_factors_match_reference_walk() -> None:
    # 6x4 -> 4x6: ([ij, mn])->([ik, ln]); factors as (in dim, out dim, size) in creation order
    assert reshape_factors((6, 4), (4, 6)) == [
        (0, 0, 2),
        (0, None, 3),
        (None, 0, 2),
        (None, 1, 3),
        (1, None, 2),
        (1, 1, 2),
    ]
    # every factorization multiplies back to both shapes
    for a, b in [((2, 3, 4), (24,)), ((12, 10), (8, 15)), ((1, 6, 1), (2, 3)), ((30,), (5, 6))]:
        fs = reshape_factors(a, b)
        for shape, side in ((a, 0), (b, 1)):
            for d, size in enumerate(shape):
                prod = 1
                for f in fs:
                    if f[side] == d:
                        prod *= f[2]
                assert prod == size, (a, b, fs)


def test_kinds_and_blocked_fields() -> None:
    rule = rule_for(make_op("stablehlo.dynamic_slice", [(8, 16), (), ()], [(4, 16)]))
    assert rule is not None
    assert rule.kinds == (FactorKind.NEED_REPLICATION, FactorKind.PASS_THROUGH)
    assert rule.blocked == frozenset({0})
    assert rule.operand_dims == (((0,), (1,)), (), ())
    assert rule.result_dims == (((0,), (1,)),)


# --------------------------------------------------------------------------------------------
# builder


def test_builder_size_one_factors() -> None:
    b = RuleBuilder([2], [2])
    b.add_factor(0, 0, 4)
    b.add_factor(0, None, 1)  # skipped: dim 0 already has a factor
    rule = b.build()
    # operand dim 1 and result dim 1 got their own size-1 factors; factor 1 is unused -> keep
    assert rule.operand_dims[0][0] == (0,)
    assert rule.operand_dims[0][1] == (2,) and rule.result_dims[0][1] == (3,)


def test_identity_rule() -> None:
    assert print_rule(identity_rule((8, 16), 2)) == (
        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>"
    )


# --------------------------------------------------------------------------------------------
# registry


def test_register_twice_raises_and_override_replaces() -> None:
    name = "my.test_op"

    @register_rule(name)
    def first(op):  # type: ignore[no-untyped-def]
        return RuleBuilder.for_op(op).add_pointwise((8,)).build()

    try:
        with pytest.raises(ValueError, match="already registered") as info:

            @register_rule(name)
            def second(op):  # type: ignore[no-untyped-def]
                return None

        assert isinstance(info.value, ShardcError)

        @register_rule(name, override=True)
        def third(op):  # type: ignore[no-untyped-def]
            return None

        assert rule_for(make_op(name, [(8,)], [(8,)])) is None
        assert name in registered_ops()
    finally:
        unregister_rule(name)
    assert name not in registered_ops()


def test_builtin_rule_override_and_restore() -> None:
    op = make_op("stablehlo.add", [(8,), (8,)], [(8,)])
    original = unregister_rule("stablehlo.add")
    assert original is not None
    try:
        register_rule("stablehlo.add")(lambda o: None)
        assert rule_for(op) is None
    finally:
        register_rule("stablehlo.add", override=True)(original)
    assert rule_for(op) is not None


def test_attached_rule_wins() -> None:
    attached = (
        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4} need_replication={j}, custom>"
    )
    op = make_op("stablehlo.add", [(8, 4), (8, 4)], [(8, 4)], attrs={"sdy.sharding_rule": attached})
    assert text(op) == attached
    assert rule_for(op).is_custom  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# #sdy.op_sharding_rule syntax


@pytest.mark.parametrize(
    "rule_text",
    [
        "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=2} reduction={j}>",
        "#sdy.op_sharding_rule<([], [])->([])>",
        "#sdy.op_sharding_rule<([])->([]), custom>",
        "#sdy.op_sharding_rule<([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}>",
        "#sdy.op_sharding_rule<([i, j, k], [i, k, l])->([i, j, l]) {i=2, j=8, k=16, l=4}, custom>",
        "#sdy.op_sharding_rule<([k, i])->([l, j]) {i=4, j=1, k=4, l=16} need_replication={i, j, k, l}>",
        "#sdy.op_sharding_rule<([i, j], [i, j, k], [])->([i, k, m, n]) {i=8, j=8, k=16, l=8, m=16, n=4} reduction={l} need_replication={j} permutation={k, m} blocked_propagation={j, n}>".replace(
            "[i, j, k], []", "[i, j, k], [l]"
        ),
    ],
)
def test_rule_text_round_trip(rule_text: str) -> None:
    rule = parse_rule(rule_text)
    assert print_rule(rule) == rule_text
    assert str(rule) == rule_text
    assert parse_rule(print_rule(rule)) == rule


def test_many_factor_symbols_round_trip() -> None:
    n = 25
    rule = OpShardingRule(
        tuple([2] * n),
        (tuple((f,) for f in range(n)),),
        (tuple((f,) for f in range(n)),),
        tuple([FactorKind.PASS_THROUGH] * n),
    )
    t = print_rule(rule)
    assert "z_1" in t and "z_7=2" in t
    assert parse_rule(t) == rule


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, k=16}>",
            "Expecting factor index symbol 'j', received: 'k'",
        ),
        ("#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8}>", "has no size"),
        ("#sdy.op_sharding_rule<([i, i])->([i]) {i=8}>", "cannot reuse factors"),
        ("#sdy.op_sharding_rule<([i])->([i]) {i=8, j=4}>", "has factor j=4 that isn't used"),
        (
            "#sdy.op_sharding_rule<([i])->([i]) {i=8} reduction={i}>",
            "reduction factor cannot be in result",
        ),
        ("#sdy.op_sharding_rule<([ij])->([ij]) {i=8, j=1}>", "can't have a factor of size 1"),
        (
            "#sdy.op_sharding_rule<([i])->([i]) {i=8} reduction={i} need_replication={i}>",
            "only be in one",
        ),
        ("#sdy.op_sharding_rule<([i, *])->([i]) {i=8}>", "unexpected input"),
        ("#sdy.op_sharding_rule<([a])->([a]) {a=8}>", "unexpected input"),
    ],
)
def test_rule_text_errors(bad: str, message: str) -> None:
    with pytest.raises(ParseError, match="invalid op sharding rule") as info:
        parse_rule(bad)
    assert message in str(info.value)


# --------------------------------------------------------------------------------------------
# einsum-like custom rules


def test_einsum_matmul_with_batch() -> None:
    rule = rule_from_einsum("... i j, ... j k -> ... i k", [(2, 8, 16), (2, 16, 4)], [(2, 8, 4)])
    assert print_rule(rule) == (
        "#sdy.op_sharding_rule<([i, j, k], [i, k, l])->([i, j, l]) {i=2, j=8, k=16, l=4}, custom>"
    )


def test_einsum_kinds_compound_and_broadcast_batch() -> None:
    rule = rule_from_einsum(
        "... (a b) c, c -> ... a b",
        [(3, 2, 8, 4), (4,)],
        [(3, 2, 2, 4)],
        reduction=["c"],
        factor_sizes={"a": 2},
    )
    assert print_rule(rule) == (
        "#sdy.op_sharding_rule<([i, j, kl, m], [m])->([i, j, k, l]) "
        "{i=3, j=2, k=2, l=4, m=4} reduction={m}, custom>"
    )
    # `...` right-aligned: a rank-1 batch on one operand shares the minor batch factor
    rule = rule_from_einsum("... i, ... i -> ... i", [(4, 5, 6), (5, 6)], [(4, 5, 6)])
    assert rule.operand_dims[1] == ((1,), (2,))
    scalar = rule_from_einsum("i, -> i", [(8,), ()], [(8,)])
    assert scalar.operand_dims[1] == ()


@pytest.mark.parametrize(
    ("spec", "operands", "results", "kw", "message"),
    [
        ("i j, j k -> i k", [(8, 16), (8, 4)], [(8, 4)], {}, "factor j has size 16"),
        ("i j -> i", [(8,)], [(8,)], {}, "spec names 2 dims"),
        ("i j, j k -> i k", [(8, 16)], [(8, 4)], {}, "has 2 operands"),
        ("i j -> i", [(8, 16)], [(8,)], {"reduction": ["q"]}, "no factor named 'q' in sharding rule spec 'i j -> i'"),
        ("(a b) -> a b", [(8,)], [(2, 4)], {}, "give the sizes"),
        ("i j -> i k ->", [(8, 16)], [(8,)], {}, "invalid sharding rule spec 'i j -> i k ->' at column"),
        ("i ... -> i", [(8, 16)], [(8,)], {}, "'...' may appear once per tensor, first"),
        (
            "i j -> i",
            [(8, 16)],
            [(8,)],
            {"reduction": ["i"]},
            "reduction factor cannot be in result",
        ),
    ],
)
def test_einsum_errors(spec, operands, results, kw, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShardcError) as info:
        rule_from_einsum(spec, operands, results, **kw)
    assert message in str(info.value)
    assert repr(spec) in str(info.value)


def test_rules_are_memoized_by_shape_and_attributes() -> None:
    a = make_op("stablehlo.transpose", [(2, 4)], [(4, 2)], {"permutation": "array<i64: 1, 0>"})
    b = make_op("stablehlo.transpose", [(2, 4)], [(4, 2)], {"permutation": "array<i64: 1, 0>"})
    c = make_op("stablehlo.transpose", [(2, 8)], [(8, 2)], {"permutation": "array<i64: 1, 0>"})
    assert rule_for(a) is rule_for(b)
    assert rule_for(a) != rule_for(c)
    # rules that look at neighbouring ops are not memoized by shape alone
    x = make_op("stablehlo.slice", [(8, 16)], [(8, 4)])
    y = make_op("stablehlo.slice", [(8, 16)], [(8, 12)])
    cat = make_op("stablehlo.concatenate", [(8, 4), (8, 12)], [(8, 16)], {"dimension": "1 : i64"})
    plain = rule_for(cat)
    cat.set_operand(0, x.results[0])
    cat.set_operand(1, y.results[0])
    assert plain is not None and plain.kinds[1] is FactorKind.NEED_REPLICATION
    assert rule_for(cat).kinds[1] is FactorKind.PERMUTATION  # type: ignore[union-attr]


def test_a_custom_call_of_another_arity_than_its_targets_rule_has_no_rule() -> None:
    """A target's rule reads the operands and results its registration says; a call of that
    target with other counts (a malformed or newer form) gets no rule, never an IndexError."""
    from shardc.backend.importer import import_text
    from shardc.dialect.rules.registry import rule_for

    module = import_text(
        "func.func @f(%m: tensor<4x8x8xf32>, %t: tensor<4x8xf32>) -> tensor<4x8x8xf32> {\n"
        "  %0 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%m, %t)"
        " : (tensor<4x8x8xf32>, tensor<4x8xf32>) -> tensor<4x8x8xf32>\n"
        "  %1 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%m)"
        " : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>\n"
        "  return %0 : tensor<4x8x8xf32>\n}\n"
    )
    good, bad = [op for op in module.walk() if op.name == "stablehlo.custom_call"]
    assert rule_for(good) is not None
    assert rule_for(bad) is None
