"""Users add op sharding rules from Python, and propagation flows through them."""

from __future__ import annotations

import pytest

import shardc
from shardc.dialect.rules import unregister_custom_call_rule, unregister_rule

MODULE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.custom_call @my_matmul(%a, %b) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""


def _result_sharding(text: str) -> str:
    line = next(ln for ln in text.splitlines() if "custom_call @my_matmul" in ln)
    return line.split("sdy.sharding_per_value<[")[1].split("]>}")[0]


def test_without_a_rule_nothing_propagates_through_the_custom_call() -> None:
    assert _result_sharding(shardc.propagate(MODULE)) == "<@mesh, [{}, {}]>"


def test_einsum_rule_for_a_custom_call_target() -> None:
    rule = shardc.einsum_rule("i j, j k -> i k", reduction="j")
    shardc.register_custom_call_rule("my_matmul")(rule)
    try:
        out = shardc.propagate(MODULE)
        # i carries "x" to the result; j (reduction) gives %b's dim 0 "y"
        assert _result_sharding(out) == '<@mesh, [{"x"}, {}]>'
        assert '%arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}' in out
        with pytest.raises(ValueError, match="already registered"):
            shardc.register_custom_call_rule("my_matmul")(rule)
    finally:
        unregister_custom_call_rule("my_matmul")


def test_override_an_op_rule_from_python() -> None:
    text = MODULE.replace('stablehlo.custom_call @my_matmul(%a, %b)', '"stablehlo.dot"(%a, %b)')
    # a rule that blocks propagation along every factor
    blocked = shardc.einsum_rule("i j, j k -> i k", blocked=["i", "j", "k"])
    with pytest.raises(ValueError, match="already registered"):
        shardc.register_rule("stablehlo.dot")(blocked)
    from shardc.dialect.rules import registry

    original = registry._RULES["stablehlo.dot"]
    shardc.register_rule("stablehlo.dot", override=True)(blocked)
    try:
        out = shardc.propagate(text)
        line = next(ln for ln in out.splitlines() if "stablehlo.dot" in ln)
        assert "sdy.sharding_per_value<[<@mesh, [{}, {}]>]>" in line
    finally:
        unregister_rule("stablehlo.dot")
        shardc.register_rule("stablehlo.dot")(original)
    line = next(ln for ln in shardc.propagate(text).splitlines() if "stablehlo.dot" in ln)
    assert '{"x"}' in line


def test_a_bad_einsum_spec_fails_at_registration() -> None:
    with pytest.raises(shardc.ShardcError):
        shardc.einsum_rule("i j, j k -> i q q q (")


def test_every_registration_path_validates_before_it_registers() -> None:
    from shardc.dialect.rules import custom_call, registry

    rule = shardc.einsum_rule("i j, j k -> i k", reduction="j")
    # custom_call: the clash on the second target is found before the first is registered
    with pytest.raises(shardc.ShardcError, match="custom_call @X64Combine is already registered"):
        shardc.register_custom_call_rule("my_new_target", "X64Combine")(rule)
    assert "my_new_target" not in custom_call._TARGET_RULES
    # op rules: the same, and a bad name or a non-callable is refused the same way
    with pytest.raises(shardc.ShardcError, match="stablehlo.add is already registered"):
        shardc.register_rule("my.op", "stablehlo.add")(rule)
    assert "my.op" not in registry._RULES
    before = dict(registry._RULES)
    for bad in (lambda: shardc.register_rule("my.op", "")(rule),
                lambda: shardc.register_rule("my.op")("not a rule"),
                lambda: shardc.register_custom_call_rule()(rule)):
        with pytest.raises(shardc.ShardcError):
            bad()
    assert registry._RULES == before and "my.op" not in registry._RULES


def test_strategy_names_come_from_the_strategy_table() -> None:
    from shardc.passes.propagation.factor_propagation import STRATEGIES as TABLE
    from shardc.passes.propagation.options import STRATEGIES

    assert STRATEGIES == tuple(TABLE)
    with pytest.raises(shardc.ShardcError, match="strategy = 'greedy' is not one of aggressive, basic"):
        shardc.PropagationOptions(strategy="greedy")
