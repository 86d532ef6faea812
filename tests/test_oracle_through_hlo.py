"""The oracle asked about the module as XLA's Shardy pass gets it: converted to HLO and back
(`through_hlo`), each op found again by its frontend attribute, and what comes back where the
trip cannot be made (`sdy` content jaxlib's bindings cannot import back)."""

from __future__ import annotations

from shardc.backend.importer import import_text
from shardc.backend.xla_form import (
    ShardyOracle,
    _diagnostic,
    parse_for_xla,
    through_hlo,
    xla_layouts,
)
from shardc.dialect.shardings import TensorSharding

# a dot whose operands conflict on "x" (a batch dim and a contracting dim), a broadcast that
# HLO writes as a reshape and a broadcast (the size-1 dim it expands), a call, a constraint
MODULE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %w: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %s: tensor<8x1xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x32xf32>
  %2 = func.call @scale(%0, %1) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{"x"}, {"y"}]> : tensor<8x32xf32>
  return %3 : tensor<8x32xf32>
}
func.func private @scale(%p: tensor<8x32xf32>, %q: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.multiply %p, %q : tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
"""

MANUAL = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %a, %a : tensor<8x16xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%b: tensor<2x16xf32>) {
    %2 = stablehlo.multiply %b, %b : tensor<2x16xf32>
    sdy.return %2 : tensor<2x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
"""


def _wanted(module) -> tuple[list, set[int]]:
    ops = list(module.walk())
    wanted = {
        k for k, op in enumerate(ops)
        if op.results and op.name.startswith(("stablehlo.", "func.call"))
    }  # fmt: skip
    return ops, wanted


def test_each_op_is_read_back_after_the_trip_through_hlo() -> None:
    """Every op asked about is found in the converted module, the broadcast HLO splits in two
    by its own result type, and the call's callee op through the call; the layouts are those
    of Shardy's pipeline (the constraint's, the arguments')."""
    module = import_text(MODULE)
    ops, wanted = _wanted(module)
    oracle = ShardyOracle(round_trip=True)
    got = oracle(module, wanted, set(), {})
    assert set(got.results) == wanted
    assert all(len(copies) == 1 for copies in got.results.values())
    by_name = {ops[k].name: got.results[k][0] for k in wanted}
    (dot,) = by_name["stablehlo.dot_general"]
    (bcast,) = by_name["stablehlo.broadcast_in_dim"]
    assert dot is not None and dot[1] == (('"x"',), ('"y"',))  # (the batch dim keeps "x")
    assert bcast is not None and len(bcast[1]) == 2  # (the 2-d broadcast's, not the reshape's)
    text = oracle.texts[next(k for k in wanted if ops[k].name == "stablehlo.dot_general")][0]
    assert text.startswith("#sdy.sharding_per_value")


def test_the_trip_changes_nothing_the_module_as_written_agrees_on() -> None:
    """On a module without conflicts both questions get one answer, value by value."""
    module = import_text(MODULE.replace('[{"x"}, {"y"}]>}', '[{}, {"y"}]>}', 1))
    ops, wanted = _wanted(module)
    through = ShardyOracle(round_trip=True)(module, wanted, set(), {})
    written = ShardyOracle()(module, wanted, set(), {})
    assert through.results == written.results
    assert through.args["main"] == written.args["main"]


def test_a_manual_computation_is_asked_about_as_written() -> None:
    """jaxlib cannot import a manual computation back from HLO: the trip gives None, the
    oracle answers from the module as written, and `xla_layouts` has nothing to offer."""
    module = import_text(MANUAL)
    assert through_hlo(parse_for_xla(module).operation) is None
    ops, wanted = _wanted(module)
    got = ShardyOracle(round_trip=True)(module, wanted, set(), {})
    assert got.results  # (answered: the module as written)
    assert xla_layouts(module) == []


def test_xla_layouts_gives_a_sharding_per_result() -> None:
    module = import_text(MODULE)
    layouts = xla_layouts(module)
    ops = {id(op) for op in module.walk()}
    assert layouts and all(id(op) in ops for op, _, _ in layouts)
    assert all(isinstance(s, TensorSharding) and i < len(op.results) for op, i, s in layouts)
    names = {op.name for op, _, _ in layouts}
    assert {"stablehlo.dot_general", "stablehlo.broadcast_in_dim"} <= names
    assert "sdy.sharding_constraint" not in names  # (XLA keeps it as written)


class _Diag:
    def __init__(self, message: str, location: str) -> None:
        self.message, self.location = message, location


class _PipelineFailure(Exception):
    """What jaxlib raises when a pass fails: a header line, the diagnostics after it."""

    def __init__(self) -> None:
        super().__init__("Failure while executing pass pipeline:\nerror: \"-\":3:5: bad axis")
        self.error_diagnostics = [_Diag("bad axis\nmore", 'loc("-":3:5)')]


def test_a_failing_shardy_pipeline_is_reported_by_its_diagnostic() -> None:
    # jaxlib's error says only "Failure while executing pass pipeline:" on its first line: the
    # user's one-line error must carry the diagnostic (message and location) instead
    assert _diagnostic(_PipelineFailure()) == 'bad axis more (at loc("-":3:5))'
    bare = Exception("Failure while executing pass pipeline:\nerror: \"-\":3:5: bad axis")
    assert _diagnostic(bare) == 'error: "-":3:5: bad axis'
