"""Export modes: annotate puts a sharding on every value; pin adds a constraint per op result."""

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


def test_pin_adds_constraints() -> None:
    out = shardc.propagate(TEXT, mode="pin")
    assert out.count("sdy.sharding_constraint") == 2
    assert "sdy.reshard" not in out
    assert "return %3" in out or "return %" in out


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
