"""Export modes: annotate puts a sharding on every value; pin adds a constraint after each op
result XLA's own propagation (jaxlib's Shardy, run on the export) would lay out otherwise."""

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


def _what_xla_derives(text: str, pinned: str | None = None) -> str:
    """jaxlib's Shardy pipeline (what XLA runs on import) on `text`'s pin export (or on
    `pinned`, an export of it) as XLA reads it (the op-level shardings it drops left out),
    compared with shardc's layout (the annotate export): the mismatches, "" when none."""
    from shardc.backend.importer import import_text
    from shardc.backend.xla_form import text_for_xla
    from tests.differential import harness as H

    tagged = H.tag_module(text)
    out = shardc.propagate(tagged, mode="pin") if pinned is None else H.tag_module(pinned)
    derived = H.run_shardy(text_for_xla(import_text(out)))
    layout = H.read_shardings(shardc.propagate(tagged))
    comparison = H.compare(H.read_shardings(derived), layout)
    return "" if comparison.ok else comparison.report()


def test_pin_leaves_values_xla_derives_unpinned() -> None:
    out = shardc.propagate(TEXT, mode="pin")
    # XLA's propagation from the argument gives the tanh, the dot, %arg1 and the result
    # shardc's layouts: nothing to pin, the compiled form is the module as written (what
    # jax.jit hands XLA), without op-level shardings
    assert "sdy.sharding_constraint" not in out and "sdy.sharding_per_value" not in out
    assert '%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}' in out
    assert "%arg1: tensor<16x4xf32>)" in out and "-> tensor<8x4xf32> {" in out
    assert _what_xla_derives(TEXT) == ""


def test_pin_holds_an_op_sharding_xla_drops() -> None:
    out = shardc.propagate(OP_SHARDED, mode="pin")
    # the input's op-level sharding on the tanh is a user's to shardc (and to Shardy), but XLA's
    # import drops it and would lay the tanh out from the argument: the tanh is pinned
    assert 'sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]>' in out
    assert _what_xla_derives(OP_SHARDED, pinned=shardc.propagate(OP_SHARDED)) != ""
    assert _what_xla_derives(OP_SHARDED) == ""


def test_pin_skips_values_a_constraint_already_pins() -> None:
    text = TEXT.replace(
        "return %1 : tensor<8x4xf32>",
        '%2 = sdy.sharding_constraint %1 <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>\n'
        "  return %2 : tensor<8x4xf32>",
    )
    out = shardc.propagate(text, mode="pin")
    # the dot's only use is a closed constraint to its own layout, and XLA derives the tanh:
    # the user's constraint is the only one
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
    # sub-computation) per use, each copy in its user's layout: never pinned; XLA derives the
    # multiply, the tanh and the dot as shardc
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
    # every op of the chain is on {"x"}, {} as XLA derives it from the argument: nothing pinned
    assert "sdy.sharding_constraint" not in out


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


def test_xla_derives_the_pin_exports_layout_everywhere() -> None:
    # whatever shardc's layout, the pin export is one XLA's propagation leaves as it is: each
    # value it would lay out otherwise is pinned (and where shardc's layout is Shardy's, none)
    for text in (TEXT, OP_SHARDED, CHAIN, CHANGE, LATER, SQUARE, SHARED_CONSTANT):
        assert _what_xla_derives(text) == "", text


def test_pin_moves_no_more_than_every_value_pinned() -> None:
    from tests.differential import harness as H

    for text in (TEXT, OP_SHARDED, CHANGE, LATER, SQUARE):
        chosen = H.collective_stats(H.hlo_text(H.compile_mlir(shardc.propagate(text, mode="pin"), 8)))
        everything = H.collective_stats(H.hlo_text(H.compile_mlir(_pin_every_value(text), 8)))
        assert chosen.total_bytes <= everything.total_bytes, text


def _pin_every_value(text: str) -> str:
    """shardc's propagated layout with every value pinned (`export_module(pin_all=True)`)."""
    from shardc.backend.exporter import export_text
    from shardc.backend.importer import import_text
    from shardc.passes.export import export_module

    module = import_text(shardc.propagate(text, options=shardc.PropagationOptions(keep_open=True)))
    export_module(module, "pin", pin_all=True)
    return export_text(module, "pretty")


def test_pin_compiles_through_jaxlib() -> None:
    from shardc.backend.importer import import_text

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
