"""The data-flow edges of ops with region or call boundaries (dialect/data_flow.py): owners,
sources and targets as Shardy's data-flow-edge ops have them, and which funcs are entries."""

from __future__ import annotations

from shardc.backend.importer import import_text
from shardc.dialect import data_flow
from shardc.dialect.data_flow import FlowKind
from shardc.dialect.ir import Module, Operation, Value
from shardc.dialect.op_views import Func

TEXT = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>, %idx: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %arg0) : tensor<i32>, tensor<8xf32>
   cond {
    %p = stablehlo.compare LT, %i, %c0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %t = stablehlo.tanh %v : tensor<8xf32>
    stablehlo.return %i, %t : tensor<i32>, tensor<8xf32>
  }
  %1 = "stablehlo.case"(%idx) ({
    stablehlo.return %0#1 : tensor<8xf32>
  }, {
    stablehlo.return %arg0 : tensor<8xf32>
  }) : (tensor<i32>) -> tensor<8xf32>
  %2 = stablehlo.optimization_barrier %1 : tensor<8xf32>
  %3 = sdy.manual_computation(%2) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<4xf32>) {
    %n = stablehlo.negate %a : tensor<4xf32>
    sdy.return %n : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %4 = func.call @helper(%3) : (tensor<8xf32>) -> tensor<8xf32>
  return %4, %2 : tensor<8xf32>, tensor<8xf32>
}
func.func private @helper(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = stablehlo.exponential %x : tensor<8xf32>
  return %e : tensor<8xf32>
}
func.func private @unused(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
func.func @other(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
"""


def _module() -> Module:
    return import_text(TEXT, "flow.mlir")


def _op(module: Module, name: str) -> Operation:
    (op,) = [op for op in module.walk() if op.name == name]
    return op


def _returned(block_owner: Operation, region: int = 0) -> list[Value]:
    ret = block_owner.regions[region].entry.terminator
    assert ret is not None
    return ret.operands


def test_kinds() -> None:
    module = _module()
    kinds = {op.name: data_flow.flow_kind(op) for op in module.walk()}
    assert kinds["stablehlo.while"] is FlowKind.LOOP
    assert kinds["stablehlo.case"] is FlowKind.BRANCH
    assert kinds["stablehlo.optimization_barrier"] is FlowKind.BARRIER
    assert kinds["sdy.manual_computation"] is FlowKind.REGION
    assert kinds["func.call"] is FlowKind.CALL
    assert kinds["stablehlo.tanh"] is None
    assert "stablehlo.if" in data_flow.FLOW_OPS and "stablehlo.if" not in data_flow.SHARDY_EDGE_OPS


def test_while_edges() -> None:
    module = _module()
    loop = _op(module, "stablehlo.while")
    cond, body = loop.regions[0].entry, loop.regions[1].entry
    r = loop.results[1]
    # init value, then what the body returns
    assert data_flow.result_sources(loop, 1) == [loop.operands[1], _returned(loop, 1)[1]]
    assert data_flow.operand_source(loop, 1) is loop.operands[1]
    # the result, the condition's and the body's argument share one layout
    assert data_flow.edge_targets(r) == [r, cond.args[1], body.args[1]]
    assert data_flow.edge_owner(body.args[1]) is r
    assert data_flow.edge_owner(cond.args[0]) is loop.results[0]
    assert data_flow.is_result_owner(r)


def test_case_barrier_manual_call_edges() -> None:
    module = _module()
    case = _op(module, "stablehlo.case")
    loop = _op(module, "stablehlo.while")
    main_arg0 = module.funcs["main"].regions[0].entry.args[0]
    # every branch's returned value: the loop's result, the captured argument
    assert data_flow.result_sources(case, 0) == [loop.results[1], main_arg0]
    assert data_flow.operand_source(case, 0) is None  # (its operand is the branch index)
    barrier = _op(module, "stablehlo.optimization_barrier")
    assert data_flow.result_sources(barrier, 0) == [case.results[0]]
    manual = _op(module, "sdy.manual_computation")
    ((arg, operand),) = data_flow.region_arg_sources(manual)
    assert arg is manual.regions[0].entry.args[0] and operand is barrier.results[0]
    assert data_flow.result_sources(manual, 0) == [_returned(manual)[0]]
    assert not data_flow.is_result_owner(manual.results[0])  # (its edges are its own)
    call = _op(module, "func.call")
    helper = module.funcs["helper"]
    assert data_flow.callee(call, module.funcs) is helper
    assert data_flow.result_sources(call, 0, module.funcs) == [_returned(helper)[0]]
    assert data_flow.result_sources(call, 0) == []  # (no funcs given: the callee is unknown)
    tanh = _op(module, "stablehlo.tanh")
    assert data_flow.result_sources(tanh, 0) == []
    assert data_flow.edge_targets(tanh.results[0]) == [tanh.results[0]]


def test_entry_funcs() -> None:
    module = _module()
    assert data_flow.called_funcs(module) == {"helper"}
    # public and not called: `@main` and `@other`; `@unused` is private, `@helper` called
    assert list(data_flow.entry_funcs(module)) == ["main", "other"]
    assert Func(module.funcs["unused"]).is_private
    assert not Func(module.funcs["helper"]).is_entry({"helper"})
    assert Func(module.funcs["helper"]).is_entry(set()) is False  # (private)
    assert data_flow.shardy_main_func(module.funcs) == "main"
    assert data_flow.shardy_main_func({"f": module.funcs["other"]}) == "f"
    two = {"f": module.funcs["other"], "g": module.funcs["helper"]}
    assert data_flow.shardy_main_func(two) is None
