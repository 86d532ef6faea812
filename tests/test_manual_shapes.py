"""Local-shape checks of manual regions on IR that skipped the MLIR verifier (built or edited
by passes), where shardc's own messages are what the user sees."""

from __future__ import annotations

import pytest

from shardc.backend import mlir_bridge
from shardc.dialect.errors import ManualComputationError
from shardc.dialect.text import absorb_sharding_attrs, parse_generic
from shardc.passes.manual.shapes import check_shapes

GOOD = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<16x8xf32>) -> tensor<16x4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {
    sdy.return %arg1 : tensor<4x4xf32>
  } : (tensor<16x8xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
"""


def _generic() -> str:
    return mlir_bridge.generic_text(mlir_bridge.parse_module(GOOD))


def _unverified(text: str):  # type: ignore[no-untyped-def]
    module = parse_generic(text, "edited.mlir")
    absorb_sharding_attrs(module)
    return module


def test_good_module_local_shapes() -> None:
    (rs,) = check_shapes(_unverified(_generic()))
    assert rs.operands[0].local_shape == (4, 4) and rs.results[0].global_shape == (16, 4)


def test_non_dividing_axis_names_dim_axis_and_sizes() -> None:
    text = _generic().replace("tensor<16x8xf32>", "tensor<6x8xf32>")
    with pytest.raises(ManualComputationError) as e:
        check_shapes(_unverified(text))
    msg = e.value.first_line()
    assert 'in_shardings[0] = <@mesh, [{"x"}, {"y"}]> splits dim 0 of size 6' in msg
    assert 'over manual axis "x" of size 4 (4 shards), and 4 does not divide 6' in msg
    assert "pad dim 0 to a multiple of 4" in msg


def test_block_argument_disagreeing_with_in_sharding() -> None:
    text = _generic().replace("%arg1: tensor<4x4xf32>", "%arg1: tensor<8x4xf32>")
    with pytest.raises(ManualComputationError) as e:
        check_shapes(_unverified(text))
    msg = str(e.value)
    assert "operand 0 is tensor<16x8xf32>" in msg and "tensor<4x4> per device" in msg
    assert "block argument 0 of the body is tensor<8x4xf32>" in msg


def test_returned_shape_disagreeing_with_out_sharding() -> None:
    text = _generic().replace("-> tensor<16x4xf32>", "-> tensor<16x8xf32>")
    with pytest.raises(ManualComputationError) as e:
        check_shapes(_unverified(text))
    assert "result 0 is tensor<16x8xf32>" in str(e.value)
    assert "needs tensor<4x8> per device, but the body returns tensor<4x4xf32>" in str(e.value)
