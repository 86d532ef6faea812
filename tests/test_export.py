"""Export modes: annotate puts a sharding on every value; pin adds a constraint after each op
result XLA would lay out otherwise (by the local rules; with `PIN_BY_VIEW`, by XLA's view of
the export, passes/pin_select.py)."""

import pytest

import shardc

TEXT = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>},
                %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def test_annotate_every_value_closed() -> None:
    out = shardc.propagate(TEXT)
    assert "?" not in out
    assert out.count("sdy.sharding_per_value") == 2
    assert "%arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}" in out


def test_keep_open() -> None:
    out = shardc.propagate(TEXT, options=shardc.PropagationOptions(keep_open=True))
    assert '{"x", ?}' in out


@pytest.fixture
def local_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pin selection without XLA's view of the export (as when propagating that view fails
    or does not settle): only the local rules decide what is left unpinned."""
    import shardc.passes.export as export

    monkeypatch.setattr(export, "xla_view_layouts", lambda module, pins: None)


@pytest.fixture
def by_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pin selection by XLA's view of the export (export.PIN_BY_VIEW, off by default)."""
    import shardc.passes.export as export

    monkeypatch.setattr(export, "PIN_BY_VIEW", True)


@pytest.mark.usefixtures("by_view")
def test_pin_leaves_what_xla_rederives_unpinned() -> None:
    out = shardc.propagate(TEXT, mode="pin")
    # XLA's propagation from the closed boundary shardings gives the tanh and the dot the
    # layouts shardc chose: no constraint; the op-level shardings are written as in annotate
    assert "sdy.sharding_constraint" not in out
    assert out == shardc.propagate(TEXT)


OP_SHARDED = TEXT.replace(
    "%0 = stablehlo.tanh %arg0 : tensor<8x16xf32>",
    '%0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}'
    " : tensor<8x16xf32>",
)


@pytest.mark.usefixtures("by_view")
def test_pin_pins_a_layout_xla_would_not_derive() -> None:
    annotated = shardc.propagate(OP_SHARDED)
    assert '%0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}' in annotated
    out = shardc.propagate(OP_SHARDED, mode="pin")
    # XLA drops op-level shardings: from the argument's {"x"}, {"y"} it would give the tanh
    # {"x"}, {"y"} and the dot {"x"}, {}; both are pinned to shardc's layouts
    assert out.count("sdy.sharding_constraint") == 2
    assert 'sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]>' in out
    assert "stablehlo.dot_general %1, %arg1" in out
    assert 'sdy.sharding_constraint %2 <@mesh, [{}, {}]>' in out


@pytest.mark.usefixtures("by_view")
def test_pin_view_selection_compiles_to_the_chosen_layout() -> None:
    from tests.differential import harness as H

    for text in (TEXT, OP_SHARDED):
        pinned = H.hlo_text(H.compile_mlir(shardc.propagate(text, mode="pin"), 8))
        everything = H.hlo_text(H.compile_mlir(_pin_all(text), 8))
        assert _collectives(pinned) == _collectives(everything)


def _pin_all(text: str) -> str:
    """The pin export with every candidate pinned (the view says every value differs)."""
    import shardc.passes.export as export

    original = export._Exporter.select_by_view
    export._Exporter.select_by_view = lambda self, pins, rest: pins + rest  # type: ignore[method-assign]
    try:
        return shardc.propagate(text, mode="pin")
    finally:
        export._Exporter.select_by_view = original  # type: ignore[method-assign]


def _collectives(hlo: str) -> list[str]:
    import re

    return sorted(re.findall(r"= (\S+) (all-gather|all-reduce|all-to-all|reduce-scatter|collective-permute)", hlo))


@pytest.mark.usefixtures("local_rules")
def test_pin_adds_constraints() -> None:
    out = shardc.propagate(TEXT, mode="pin")
    # the tanh and the dot are both pinned (an element-wise op too: left to XLA, a chain of
    # them can be resharded where the tensors are larger), uses rewired to the constraints
    assert out.count("sdy.sharding_constraint") == 2
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]>' in out
    assert 'stablehlo.dot_general %1, %arg1' in out
    assert 'sdy.sharding_constraint %2 <@mesh, [{"x"}, {}]>' in out
    assert "sdy.reshard" not in out
    assert "return %3" in out


@pytest.mark.usefixtures("local_rules")
def test_pin_skips_values_a_constraint_already_pins() -> None:
    text = TEXT.replace(
        "return %1 : tensor<8x4xf32>",
        '%2 = sdy.sharding_constraint %1 <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>\n'
        "  return %2 : tensor<8x4xf32>",
    )
    out = shardc.propagate(text, mode="pin")
    # the dot's only use is a closed constraint to its own layout: no second one (the tanh is
    # pinned, the constraint's own result is pinned by itself)
    assert out.count("sdy.sharding_constraint") == 2
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]>' in out
    assert 'sdy.sharding_constraint %2 <@mesh, [{"x"}, {"y"}]>' in out


@pytest.mark.usefixtures("local_rules")
def test_pin_keeps_type_changing_elementwise() -> None:
    text = TEXT.replace(
        "%0 = stablehlo.tanh %arg0 : tensor<8x16xf32>",
        "%c = stablehlo.convert %arg0 : (tensor<8x16xf32>) -> tensor<8x16xbf16>\n"
        "  %0 = stablehlo.convert %c : (tensor<8x16xbf16>) -> tensor<8x16xf32>",
    )
    out = shardc.propagate(text, mode="pin")
    # a convert changes the element size: where XLA reshards around it decides the bytes
    assert out.count("sdy.sharding_constraint") == 3


def test_pin_compiles_through_jaxlib() -> None:
    from shardc.importer import import_text

    import_text(shardc.propagate(TEXT, mode="pin"))  # jaxlib parses and verifies it


def test_while_gets_no_op_sharding() -> None:
    import os

    text = open(
        os.path.join(os.path.dirname(__file__), "lit", "propagate", "control_flow.mlir")
    ).read()
    out = "\n".join(shardc.propagate(chunk, mode="pin") for chunk in text.split("// -----"))
    assert "stablehlo.while" in out
    for line in out.splitlines():
        if "stablehlo.while" in line:
            assert "sdy.sharding" not in line


@pytest.mark.usefixtures("local_rules")
def test_pin_skips_constants_and_scalar_broadcasts() -> None:
    text = TEXT.replace(
        "%0 = stablehlo.tanh %arg0 : tensor<8x16xf32>",
        "%c = stablehlo.constant dense<2.0> : tensor<f32>\n"
        "  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x16xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<8x16xf32>\n"
        "  %s = stablehlo.add %b, %k : tensor<8x16xf32>\n"
        "  %m = stablehlo.multiply %arg0, %s : tensor<8x16xf32>\n"
        "  %0 = stablehlo.tanh %m : tensor<8x16xf32>",
    )
    out = shardc.propagate(text, mode="pin")
    # each device makes a constant or a broadcast scalar in any layout without communication:
    # neither is pinned; nor are the add and multiply, whose operands and users all carry their
    # layout; the tanh (used by the dot) and the dot are (2 constraints)
    assert out.count("sdy.sharding_constraint") == 2
    for name in ("%c", "%b", "%k", "%s", "%m"):
        assert f"sdy.sharding_constraint {name} " not in out
    first = out.split("sdy.sharding_constraint")[0]
    assert "stablehlo.broadcast_in_dim" in first and "stablehlo.tanh" in first


CHAIN = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  %2 = stablehlo.exponential %1 : tensor<8x16xf32>
  %3 = stablehlo.dot_general %2, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}
"""


@pytest.mark.usefixtures("local_rules")
def test_pin_skips_inside_an_element_wise_chain_of_one_layout() -> None:
    out = shardc.propagate(CHAIN, mode="pin")
    # tanh and negate sit between neighbours of their own layout {"x"}: unpinned; the exponential
    # (used by the dot) and the dot are pinned
    assert out.count("sdy.sharding_constraint") == 2
    assert "stablehlo.negate %0 " in out and "stablehlo.exponential %1 " in out
    assert 'sdy.sharding_constraint %2 <@mesh, [{"x"}, {}]>' in out


@pytest.mark.usefixtures("local_rules")
def test_pin_keeps_both_sides_of_a_layout_change_in_a_chain() -> None:
    text = CHAIN.replace(
        "%2 = stablehlo.exponential %1 : tensor<8x16xf32>",
        '%e = stablehlo.exponential %1 : tensor<8x16xf32>\n'
        '  %2 = sdy.sharding_constraint %e <@mesh, [{}, {"y"}]> : tensor<8x16xf32>',
    )
    out = shardc.propagate(text, mode="pin")
    # the chain goes from the argument's {"x"}, {} through tanh and negate at {"x"}, {"y"} to the
    # exponential at the user's {}, {"y"}: tanh (operand of another layout) and negate (user of
    # another layout) stay pinned, so XLA cannot move either reshard into the chain
    assert '%0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}' in out
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]>' in out
    assert 'sdy.sharding_constraint %2 <@mesh, [{"x"}, {"y"}]>' in out
    assert 'stablehlo.exponential %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}' in out
    assert out.count("sdy.sharding_constraint") == 4  # tanh, negate, the user's, the dot
