"""The typed op views: every interpreted sdy attribute is an object after import, and the views
read and write them (the printer writes them back as sdy text)."""

from __future__ import annotations

from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.dialect.ir import FuncOp, Module
from shardc.dialect.op_views import Func, ManualComputation, MeshOp, ShardingConstraint
from shardc.dialect.sharding_syntax import parse_tensor_sharding
from shardc.dialect.shardings import ManualAxes, Mesh, ShardingPerValue, TensorSharding

TEXT = """
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<8x8xf32>) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x", ?}, {?}]> : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %2 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"y"} (%b: tensor<4x4xf32>) {
      sdy.return %b : tensor<4x4xf32>
    } : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sdy.return %2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1, %0 : tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def _module() -> Module:
    return import_text(TEXT, "views.mlir")


def _ops(module: Module, name: str) -> list:
    return [op for op in module.walk() if op.name == name]


def test_interpreted_attributes_are_objects_after_import() -> None:
    module = _module()
    (mesh_op,) = _ops(module, "sdy.mesh")
    assert isinstance(mesh_op.properties["mesh"], Mesh)
    (c,) = _ops(module, "sdy.sharding_constraint")
    assert isinstance(c.properties["sharding"], TensorSharding)
    for m in _ops(module, "sdy.manual_computation"):
        assert isinstance(m.properties["in_shardings"], ShardingPerValue)
        assert isinstance(m.properties["out_shardings"], ShardingPerValue)
        assert isinstance(m.properties["manual_axes"], ManualAxes)
    main = module.funcs["main"]
    assert isinstance(main, FuncOp)
    # result shardings live on the func (as argument shardings live on its arguments)
    assert "res_attrs" not in main.properties and "arg_attrs" not in main.properties


def test_views_read_what_the_text_says() -> None:
    module = _module()
    main = Func(module.funcs["main"])
    assert main.arg_sharding(0) == parse_tensor_sharding('<@mesh, [{"x"}, {}]>')
    assert main.result_sharding(0) == parse_tensor_sharding('<@mesh, [{}, {"y"}]>')
    assert main.result_sharding(1) is None
    (c,) = _ops(module, "sdy.sharding_constraint")
    assert ShardingConstraint(c).sharding.body() == '<@mesh, [{"x", ?}, {?}]>'
    outer, inner = (ManualComputation(op) for op in _ops(module, "sdy.manual_computation"))
    assert outer.manual_axes == ("x",) and inner.manual_axes == ("y",)
    assert inner.outer_manual_axes == ("x",)
    assert outer.free_axes == ("y", "z") and inner.free_axes == ("z",)
    assert inner.mesh == MeshOp(_ops(module, "sdy.mesh")[0]).mesh
    assert [s.body() for s in inner.in_shardings] == ['<@mesh, [{}, {"y"}]>']


def test_writes_through_views_are_printed() -> None:
    module = _module()
    main = Func(module.funcs["main"])
    main.set_result_sharding(1, parse_tensor_sharding('<@mesh, [{"z"}, {}]>'))
    (c,) = _ops(module, "sdy.sharding_constraint")
    ShardingConstraint(c).sharding = parse_tensor_sharding('<@mesh, [{"y"}, {}]>')
    outer = ManualComputation(_ops(module, "sdy.manual_computation")[0])
    outer.out_shardings = (parse_tensor_sharding('<@mesh, [{"x", "z"}, {}]>'),)
    text = export_text(module)
    assert '-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, ' in text
    assert 'tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>})' in text
    assert 'sdy.sharding_constraint %arg0 <@mesh, [{"y"}, {}]>' in text
    assert 'out_shardings=[<@mesh, [{"x", "z"}, {}]>]' in text
    # printing does not move anything: the func still holds its shardings, not attribute text
    assert "res_attrs" not in module.funcs["main"].properties


def test_clone_keeps_result_shardings_independent() -> None:
    module = _module()
    copy = module.clone()
    Func(copy.funcs["main"]).set_result_sharding(0, None)
    assert Func(module.funcs["main"]).result_sharding(0) is not None
    assert Func(copy.funcs["main"]).result_sharding(0) is None


SDY_COLLECTIVE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{"x"}, {?}]>] manual_axes={"x"} (%arg1: tensor<2x8xf32>) {
    %1 = sdy.all_slice [{}, {"y"}] %arg1 out_sharding=<@mesh, [{}, {"y"}]> : tensor<2x8xf32>
    sdy.return %1 : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_sdy_collective_out_sharding_is_an_object() -> None:
    from shardc.dialect.op_views import SdyCollective

    module = import_text(SDY_COLLECTIVE, "collective.mlir")
    (op,) = _ops(module, "sdy.all_slice")
    out = SdyCollective(op).out_sharding
    assert isinstance(op.properties["out_sharding"], TensorSharding)
    assert out is not None and out.body() == '<@mesh, [{}, {"y"}]>'
    assert 'out_sharding=<@mesh, [{}, {"y"}]>' in export_text(module)
