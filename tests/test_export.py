"""Export modes: annotate puts a sharding on every value; pin adds a constraint after each op
result XLA would lay out otherwise (judged from its neighbours, pin_select.NeighbourSelection)."""

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


OP_SHARDED = TEXT.replace(
    "%0 = stablehlo.tanh %arg0 : tensor<8x16xf32>",
    '%0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}'
    " : tensor<8x16xf32>",
)


def _collectives(hlo: str) -> list[str]:
    import re

    return sorted(re.findall(r"= (\S+) (all-gather|all-reduce|all-to-all|reduce-scatter|collective-permute)", hlo))


def test_pin_leaves_values_their_neighbours_settle_unpinned() -> None:
    out = shardc.propagate(TEXT, mode="pin")
    # the tanh and the dot agree with the argument on every factor, and @main's result takes
    # the dot's layout: XLA derives both from the closed argument, nothing to pin
    assert "sdy.sharding_constraint" not in out
    assert out == shardc.propagate(TEXT)


def test_pin_pins_both_sides_of_a_layout_change() -> None:
    out = shardc.propagate(OP_SHARDED, mode="pin")
    # the tanh moves "x" off dim 0 and "y" onto dim 1: it is pinned; the dot agrees with its
    # operands (contracting dim on "y" on both sides) and with @main's result: unpinned
    assert out.count("sdy.sharding_constraint") == 1
    assert 'sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]>' in out
    assert "stablehlo.dot_general %1, %arg1" in out


def test_pin_pins_a_value_whose_user_reshards_it() -> None:
    text = TEXT.replace('{"x", ?}, {?}', '{"x"}, {}').replace(
        "%arg1: tensor<16x4xf32>)",
        '%arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})',
    )
    out = shardc.propagate(text, mode="pin")
    # the dot's rows (from the tanh) and columns (from the weight) both ask for "x": a conflict
    # shardc's propagation settled; XLA could settle it otherwise, so the tanh feeding the dot
    # and the dot are pinned
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]>' in out
    assert "stablehlo.dot_general %1, %arg1" in out
    assert out.count("sdy.sharding_constraint") == 2


def test_pin_pins_a_value_main_returns_in_another_layout() -> None:
    text = TEXT.replace(
        "-> tensor<8x4xf32> {",
        "-> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {",
    )
    out = shardc.propagate(text, mode="pin")
    # the dot is {"x"}, {} and @main returns it replicated: pinned, the reshard stays after it
    assert 'sdy.sharding_constraint %1 <@mesh, [{"x"}, {}]>' in out
    assert out.count("sdy.sharding_constraint") == 1


def test_pin_skips_values_a_constraint_already_pins() -> None:
    text = TEXT.replace(
        "return %1 : tensor<8x4xf32>",
        '%2 = sdy.sharding_constraint %1 <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>\n'
        "  return %2 : tensor<8x4xf32>",
    )
    out = shardc.propagate(text, mode="pin")
    # the dot's only use is a closed constraint to its own layout, and the tanh agrees with
    # its neighbours: the user's constraint is the only one
    assert out.count("sdy.sharding_constraint") == 1
    assert 'sdy.sharding_constraint %1 <@mesh, [{"x"}, {"y"}]>' in out


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
    # XLA clones a constant, a broadcast scalar and the add of two of them (a constant
    # sub-computation) per use, each copy in its user's layout: they ask for nothing, and are
    # not pinned; the multiply, the tanh and the dot agree with their neighbours
    assert "sdy.sharding_constraint" not in out
    assert "stablehlo.multiply %arg0, %1" in out


SHARED_CONSTANT = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
        tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %k = stablehlo.constant dense<1.0> : tensor<8x16xf32>
  %c = stablehlo.negate %k : tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8x16xf32>
  %1 = stablehlo.add %arg1, %c : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
"""


def test_pin_leaves_a_shared_constant_to_each_user() -> None:
    from tests.differential import harness as H

    out = shardc.propagate(SHARED_CONSTANT, mode="pin")
    # the negate of a constant is read at {"x"}, {} by one add and {}, {"y"} by the other: XLA
    # clones it per use, so unpinned each copy is made in its user's layout, no collective
    assert "sdy.sharding_constraint" not in out
    everything = _pin_every_value(SHARED_CONSTANT)
    assert "sdy.sharding_constraint %0 <@mesh" in everything  # (the negate, pinned to one)
    chosen = H.collective_stats(H.hlo_text(H.compile_mlir(out, 8)))
    assert chosen.total_count == 0
    assert chosen.total_bytes <= H.collective_stats(H.hlo_text(H.compile_mlir(everything, 8))).total_bytes


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

CHANGE = CHAIN.replace(
    "%2 = stablehlo.exponential %1 : tensor<8x16xf32>",
    '%e = stablehlo.exponential %1 : tensor<8x16xf32>\n'
    '  %2 = sdy.sharding_constraint %e <@mesh, [{}, {"y"}]> : tensor<8x16xf32>',
)


def test_pin_skips_an_element_wise_chain_of_one_layout() -> None:
    out = shardc.propagate(CHAIN, mode="pin")
    # every op of the chain agrees with its neighbours on {"x"}, {}: nothing pinned
    assert "sdy.sharding_constraint" not in out


def test_pin_keeps_both_sides_of_a_layout_change_in_a_chain() -> None:
    out = shardc.propagate(CHANGE, mode="pin")
    # the chain goes from the argument's {"x"}, {} through tanh and negate at {"x"}, {"y"} to the
    # exponential at the user's {}, {"y"}: tanh (operand of another layout) and negate (user of
    # another layout) stay pinned, so XLA cannot move either reshard into the chain; the
    # exponential's only use is the user's constraint to its layout, and the dot agrees with it
    # and the weight on the contracting "y"
    assert '%0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}' in out
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]>' in out
    assert 'sdy.sharding_constraint %2 <@mesh, [{"x"}, {"y"}]>' in out
    assert 'stablehlo.exponential %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}' in out
    assert out.count("sdy.sharding_constraint") == 3  # tanh, negate, the user's


LATER = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>})
    -> (tensor<8x16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x2xf32>
  %1 = stablehlo.tanh %arg1 : tensor<8x16x2xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x16x2xf32>
  return %2 : tensor<8x16x2xf32>
}
"""


def test_pin_pins_a_dim_only_a_later_value_gives() -> None:
    out = shardc.propagate(LATER, mode="pin")
    # the broadcast's new dim is on "y": its operand has no such dim, and the add's other
    # operand is decided after it (values go unpinned in program order, each on values decided
    # before it, so no cycle of unpinned values can leave each other empty): pinned; the tanh
    # and the add agree with their neighbours
    assert out.count("sdy.sharding_constraint") == 1
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {}, {"y"}]>' in out


SQUARE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = chlo.square %arg0 : tensor<8x16xf32> -> tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def test_pin_reads_chlo_square_as_element_wise() -> None:
    out = shardc.propagate(SQUARE, mode="pin")
    # XLA rewrites chlo.square into a multiply before its Shardy runs: the square agrees with
    # the argument on both dims, the dot with it and the weight (contracting on "y")
    assert 'chlo.square %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}' in out
    assert "sdy.sharding_constraint" not in out


def test_pin_selection_compiles_to_every_value_pinned() -> None:
    from tests.differential import harness as H

    for text in (TEXT, OP_SHARDED, CHANGE, LATER, SQUARE):
        chosen = H.hlo_text(H.compile_mlir(shardc.propagate(text, mode="pin"), 8))
        everything = H.hlo_text(H.compile_mlir(_pin_every_value(text), 8))
        assert _collectives(chosen) == _collectives(everything)


def _pin_every_value(text: str) -> str:
    """shardc's propagated layout with every value pinned (`export_module(pin_all=True)`)."""
    from shardc.exporter import export_text
    from shardc.importer import import_text
    from shardc.passes.export import export_module

    module = import_text(shardc.propagate(text, options=shardc.PropagationOptions(keep_open=True)))
    export_module(module, "pin", pin_all=True)
    return export_text(module, "pretty")


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
