"""Import -> export is lossless on what JAX emits, and the output compiles with XLA."""

from __future__ import annotations

import pytest

from shardc.backend import mlir_bridge
from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.dialect.text import print_generic

from .programs import PROGRAMS, lowered_text
from .xla_util import compile_text


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_round_trip_is_identity(name: str) -> None:
    text = lowered_text(name)
    module = import_text(text, name)
    out = export_text(module)
    # Same module: jaxlib's own canonical print of the input equals our output, op for op.
    assert out == mlir_bridge.pretty_text(mlir_bridge.parse_module(text))
    # The generic form re-imports to the same text too (a fixed point).
    again = import_text(print_generic(module), name)
    assert export_text(again) == out


@pytest.mark.parametrize("name", ["mlp", "transformer_layer", "shard_map_psum", "scan", "sort"])
def test_exported_module_compiles_on_8_devices(name: str) -> None:
    out = export_text(import_text(lowered_text(name), name))
    exe = compile_text(out)
    assert len(exe.local_devices()) == 8


def test_every_program_emits_shardings_or_manual_regions() -> None:
    # Guards the suite itself: the programs exercise the sharding syntax we round-trip.
    with_shardings = [n for n in PROGRAMS if "sdy.sharding" in lowered_text(n)]
    with_manual = [n for n in PROGRAMS if "sdy.manual_computation" in lowered_text(n)]
    assert len(with_shardings) >= 10 and len(with_manual) >= 5


def test_region_ops_and_calls_are_in_the_ir() -> None:
    names = {op.name for n in PROGRAMS for op in import_text(lowered_text(n)).walk()}
    for expected in (
        "stablehlo.while",
        "stablehlo.case",
        "stablehlo.reduce",
        "stablehlo.sort",
        "stablehlo.scatter",
        "stablehlo.gather",
        "stablehlo.convolution",
        "stablehlo.reduce_window",
        "sdy.manual_computation",
        "sdy.sharding_constraint",
        "func.call",
    ):
        assert expected in names, expected


# op-level shardings (one result, two results) beside boundary ones and a constraint
_OP_SHARDINGS = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x8xf32>, tensor<8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %2:2 = stablehlo.reduce(%1 init: %c), (%1 init: %c) across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%c1: tensor<f32>, %d: tensor<f32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      %t = stablehlo.add %c1, %d : tensor<f32>
      stablehlo.return %s, %t : tensor<f32>, tensor<f32>
    }
  return %1, %2#0 : tensor<8x8xf32>, tensor<8xf32>
}
"""


@pytest.mark.parametrize("name", [*sorted(PROGRAMS), "op_shardings"])
def test_generic_parse_absorbs_as_the_separate_step(name: str) -> None:
    # the importer's one pass (`parse_generic(absorb=True)`, only the ops the parse saw an sdy
    # attribute on) builds what the parse and then `absorb_sharding_attrs` over every op do
    from shardc.dialect.text import absorb_sharding_attrs, parse_generic

    def contents(module):
        out = []
        for op in module.walk():
            out.append((op.name, op.loc, op.properties.body(), op.attributes.body(),
                        [r.sharding for r in op.results]))
            out += [[(a.loc, a.sharding) for a in b.args] for r in op.regions for b in r.blocks]
        return out

    jmod = mlir_bridge.parse_module(_OP_SHARDINGS if name == "op_shardings" else lowered_text(name))
    for with_locs in (True, False):
        generic = mlir_bridge.generic_text(jmod, with_locs=with_locs)
        one = parse_generic(generic, name, absorb=True)
        two = parse_generic(generic, name)
        absorb_sharding_attrs(two)
        assert contents(one) == contents(two)
        assert "sdy.sharding =" not in "".join(op.attributes.body() for op in one.walk()
                                               if op.results)
    if name == "op_shardings":
        add = next(op for op in one.walk() if op.name == "stablehlo.add")  # (@main's own)
        reduce = next(op for op in one.walk() if op.name == "stablehlo.reduce")
        assert [str(r.sharding) for r in add.results] == ['#sdy.sharding<@mesh, [{}, {"y"}]>']
        assert [str(r.sharding) for r in reduce.results] == [
            '#sdy.sharding<@mesh, [{"x"}]>', "#sdy.sharding<@mesh, [{}]>"]
