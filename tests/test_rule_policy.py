"""One policy for rules that cannot be used (dialect/rules/registry.py `usable_rule`): a rule
that raises or does not match its op's arity is no rule, never a crash, and a run names each
such op name once, however many ops have it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shardc.backend.importer import import_text
from shardc.dialect.ir import Module, Operation
from shardc.dialect.rules.model import OpShardingRule
from shardc.dialect.rules.registry import (
    RuleProblems,
    register_rule,
    unregister_rule,
    usable_rule,
)
from shardc.dialect.rules.syntax import parse_rule
from shardc.passes.propagation.driver import propagate

# negate gets a rule that raises, abs one with two operands; each op twice, of two shapes
TEXT = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %b: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) {
  %0 = stablehlo.negate %a : tensor<8xf32>
  %1 = stablehlo.negate %b : tensor<4x8xf32>
  %2 = stablehlo.abs %a : tensor<8xf32>
  %3 = stablehlo.abs %b : tensor<4x8xf32>
  %4 = stablehlo.exponential %a : tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>
}
"""
EXPECTED = [
    "sharding rule of stablehlo.negate failed: cannot read stablehlo.negate",
    "sharding rule of stablehlo.abs does not match its arity",
]


@pytest.fixture
def broken_rules() -> Iterator[None]:
    def broken(op: Operation) -> OpShardingRule:
        raise ValueError(f"cannot read {op.name}")

    def wrong_arity(op: Operation) -> OpShardingRule:
        return parse_rule("#sdy.op_sharding_rule<([i], [i])->([i]) {i=8}>")  # two operands

    originals = {n: unregister_rule(n) for n in ("stablehlo.negate", "stablehlo.abs")}
    register_rule("stablehlo.negate")(broken)
    register_rule("stablehlo.abs")(wrong_arity)
    try:
        yield
    finally:
        for name, fn in originals.items():
            assert fn is not None
            register_rule(name, override=True)(fn)


def _module() -> Module:
    return import_text(TEXT, "rules.mlir")


def test_usable_rule_notes_each_op_name_once(broken_rules: None) -> None:
    module = _module()
    problems = RuleProblems()
    ops = [op for op in module.walk() if op.name in ("stablehlo.negate", "stablehlo.abs")]
    assert len(ops) == 4
    assert all(usable_rule(op, problems=problems) is None for op in ops)
    assert problems.lines() == EXPECTED
    exp = next(op for op in module.walk() if op.name == "stablehlo.exponential")
    assert usable_rule(exp, problems=problems) is not None
    assert problems.lines() == EXPECTED


def test_propagation_names_each_unusable_rule_once(broken_rules: None) -> None:
    module = _module()
    report = propagate(module)
    assert [line for line in report.notes() if "sharding rule of" in line] == EXPECTED
    ret = module.funcs["main"].regions[0].entry.terminator
    assert ret is not None
    # nothing moves through an op without a usable rule; the exponential beside them follows %a
    for v in ret.operands[:4]:
        assert v.sharding is None or not any(d.axes for d in v.sharding.dims), v
    exp_sharding = ret.operands[4].sharding
    assert exp_sharding is not None and [str(a) for a in exp_sharding.dims[0].axes] == ['"x"']

