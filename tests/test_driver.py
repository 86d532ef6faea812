"""Driver tests: fixed point proven by a confirming sweep, reports, options exposed on the CLI."""

import glob
import os
from dataclasses import fields

import pytest

from shardc.backend.importer import import_text
from shardc.passes.propagation.driver import Propagator, all_shardings
from shardc.passes.propagation.options import PropagationOptions

HERE = os.path.dirname(__file__)
GOLDENS = sorted(glob.glob(os.path.join(HERE, "lit", "propagate", "*.mlir")))
MLP = os.path.join(HERE, "..", "examples", "mlp.mlir")


def _imported(text: str):  # type: ignore[no-untyped-def]
    """The module as propagation sees it: imported, then the pipeline's import steps."""
    from shardc.passes.pipeline import PipelineOptions, run_pipeline

    module = import_text(text)
    steps = PipelineOptions(verify=False, check_manual=False, check_replication=False,
                            disable=("propagate",))
    run_pipeline(module, steps)
    return module


def _confirm_fixed_point(text: str, options: PropagationOptions) -> None:
    module = _imported(text)
    prop = Propagator(module, options)
    prop.build()
    prop.run(write_back=False)
    before = {k: str(v) for k, v in all_shardings(module)}
    assert prop.confirming_sweep() == 0, "the confirming sweep changed a sharding"
    assert {k: str(v) for k, v in all_shardings(module)} == before


@pytest.mark.parametrize("path", [*GOLDENS, MLP], ids=os.path.basename)
def test_fixed_point(path: str) -> None:
    for chunk in open(path).read().split("\n// -----\n"):  # cases grouped by `// -----`
        _confirm_fixed_point(chunk, PropagationOptions())


def test_fixed_point_basic() -> None:
    _confirm_fixed_point(open(MLP).read(), PropagationOptions(strategy="basic"))


def test_report_names_ops_without_rules() -> None:
    text = open(os.path.join(HERE, "lit", "propagate", "ops.mlir")).read()
    from shardc.api.propagate import propagate_module

    reports = [propagate_module(import_text(chunk)) for chunk in text.split("\n// -----\n")]
    assert any("stablehlo.custom_call" in r.ops_without_rules for r in reports)
    assert all(r.rounds[0].startswith("p0") for r in reports)


def test_origins_recorded() -> None:
    from shardc.api.propagate import propagate_module

    report = propagate_module(import_text(open(MLP).read()), PropagationOptions(debug_origins=True))
    assert report.origins is not None
    lines = report.explanation
    assert lines and all(" <- " in line and "(annotation, p" in line for line in lines)
    assert any("stablehlo.dot_general" in line for line in lines)


def test_origins_off_costs_nothing() -> None:
    prop = Propagator(_imported(open(MLP).read()), PropagationOptions())
    prop.build()
    report = prop.run()
    assert prop.observer is None and report.origins is None and report.explanation == []


def test_explain_names_match_the_output() -> None:
    """Every `%N = op` an explain line names is that op in the exported text."""
    import re

    import shardc
    from shardc.api.propagate import propagate_module

    text = open(os.path.join(HERE, "lit", "propagate", "control_flow.mlir")).read()
    for case in [open(MLP).read(), *text.split("// -----")]:
        out = shardc.propagate(case)
        module = import_text(case)
        report = propagate_module(module, PropagationOptions(debug_origins=True))
        for line in report.explanation:
            m = re.match(r"(%[\w#]+) = ([\w.]+) ", line)
            if m:
                name, op = m.group(1).split("#")[0], m.group(2).removeprefix("func.")
                assert re.search(rf"{re.escape(name)}(:\d+)? = \"?{re.escape(op)}\b", out), line


def test_dump_rounds() -> None:
    from shardc.api.propagate import propagate_module

    report = propagate_module(import_text(open(MLP).read()), PropagationOptions(dump_rounds=True))
    titles = [line for line in report.round_dumps if line.startswith("after ")]
    assert titles == ["after import:", *(f"after {r}:" for r in report.rounds)]


def test_every_option_is_a_cli_flag() -> None:
    import argparse

    from shardc.tools import cmd_propagate

    parser = argparse.ArgumentParser()
    cmd_propagate.add_arguments(parser)
    args = parser.parse_args(["x.mlir"])
    opts = cmd_propagate.options_from_args(args)
    assert opts == PropagationOptions()
    for f in fields(PropagationOptions):
        assert hasattr(args, f.name), f.name


def test_mlp_dot_chain() -> None:
    import shardc

    out = shardc.propagate(open(MLP).read())
    assert '[{"data"}, {"model"}]' in out  # first dot result: batch on data, hidden on model


def test_dead_ops_revisits_a_producer_seen_first() -> None:
    """Dead code is the least fixed point of "every user is dead" whatever the block order: a
    producer looked at before its last user died is looked at again when that user dies."""
    from shardc.dialect.ir import func_body
    from shardc.passes.propagation.unit_builder import dead_ops

    module = import_text(
        "func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  %0 = stablehlo.negate %a : tensor<8xf32>\n"
        "  %1 = stablehlo.negate %0 : tensor<8xf32>\n"
        "  %2 = stablehlo.negate %1 : tensor<8xf32>\n"
        "  %3 = stablehlo.negate %a : tensor<8xf32>\n"
        "  return %3 : tensor<8xf32>\n"
        "}\n"
    )
    body = func_body(module.funcs["main"])
    assert body is not None
    negs = body.ops[:4]
    assert {id(op) for op in negs[:3]} == dead_ops(module)
    body.ops[:3] = negs[:3][::-1]  # producers after their users: each found on a revisit
    assert {id(op) for op in negs[:3]} == dead_ops(module)


_SCALARS = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %s: tensor<f32>) -> tensor<8x16xf32> {
  %0 = stablehlo.multiply %s, %s : tensor<f32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  %2 = stablehlo.add %a, %1 : tensor<8x16xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %5 = stablehlo.reshape %4 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %6 = stablehlo.transpose %5, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %7 = stablehlo.transpose %6, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %7 : tensor<8x16xf32>
}
"""


def test_ops_that_move_nothing_get_no_unit() -> None:
    """A scalar op or a broadcast of a scalar has no factor in two tensors: no step through
    it can change a sharding, so it gets no unit, and the result is the same as with one
    (which it gets when `max_steps` counts steps)."""
    results = {}
    for cap in (0, 10_000):
        prop = Propagator(_imported(_SCALARS), PropagationOptions(max_steps=cap))
        prop.build()
        names = [u.op_name for u in prop.units]
        prop.run()
        results[cap] = {k: str(v) for k, v in all_shardings(prop.module)}
        if cap:
            assert prop.graph.trivial == 0
            assert "stablehlo.multiply" in names and "stablehlo.broadcast_in_dim" in names
        else:
            assert prop.graph.trivial == 2
            assert "stablehlo.multiply" not in names and "stablehlo.broadcast_in_dim" not in names
            assert "stablehlo.add" in names
    assert results[0] == results[10_000]
    assert results[0]["@main op 8 stablehlo.transpose result 0"].endswith('[{"x", ?}, {"y", ?}]>')


def test_ops_alike_share_a_rule_ops_with_other_attributes_do_not() -> None:
    """Units of ops with the same name, types and attribute texts share one rule object (the
    builder's memo); the same types with another `dims` attribute get their own rule."""
    prop = Propagator(_imported(_SCALARS), PropagationOptions())
    prop.build()
    transposes = [u for u in prop.units if u.op_name == "stablehlo.transpose"]
    swap_a, swap_b, keep_a, keep_b = transposes
    assert swap_a.rule is not swap_b.rule  # other types
    assert keep_a.rule is keep_b.rule  # same types, same dims = [0, 1]
    assert keep_a.rule.operand_dims != swap_b.rule.operand_dims
    assert keep_a.sizes is keep_b.sizes and keep_a.dims is keep_b.dims


def test_a_write_makes_its_readers_step_again() -> None:
    """A sweep skips a unit whose last step changed nothing at the same directions while
    nothing it reads was written since; a write to any of its slots makes it step again."""
    from shardc.passes.propagation.units import holder_of

    prop = Propagator(_imported(_SCALARS), PropagationOptions())
    prop.build()
    prop.run(write_back=False)
    add = next(u for u in prop.units if u.op_name == "stablehlo.add")
    assert add.clean is add.dirs  # the last level's sweep found it settled
    stepped = []
    original = prop.step
    prop.step = lambda u: (stepped.append(u), original(u))  # type: ignore[method-assign]
    prop.run_to_fixed_point()
    assert add not in stepped
    operand = holder_of(add.slots[0])
    assert operand.sharding is not None
    prop.write(operand, operand.sharding)  # (the same sharding: only the readers are told)
    assert add.clean is None
    prop.run_to_fixed_point()
    assert add in stepped
    # a func-result link is stepped by the driver, not woken: a write still unsettles it
    (link,) = prop.func_result_units
    assert link.clean is link.dirs
    stepped.clear()
    prop.run_to_fixed_point()
    assert link not in stepped
    returned = holder_of(link.slots[0])
    assert returned.sharding is not None
    prop.write(returned, returned.sharding)
    assert link.clean is None
    prop.run_to_fixed_point()
    assert link in stepped


_UNSHARDED_SIDE = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.negate %a : tensor<8x16xf32>
  %1 = stablehlo.negate %b : tensor<8x16xf32>
  %2 = stablehlo.abs %1 : tensor<8x16xf32>
  return %0, %2 : tensor<8x16xf32>, tensor<8x16xf32>
}
"""


def test_a_unit_with_no_sharding_settles_for_every_level_until_written() -> None:
    """A step through a unit none of whose slots has a sharding changes nothing whatever its
    directions: the sweeps of the later op-priority levels pass it by (`ANY_DIRS`), until a
    write to one of its slots makes it step again, and then it propagates."""
    from shardc.dialect.shardings import TensorSharding
    from shardc.passes.propagation.units import ANY_DIRS, holder_of

    prop = Propagator(_imported(_UNSHARDED_SIDE), PropagationOptions())
    prop.build()
    stepped: list = []
    original = prop.step
    prop.step = lambda u: (stepped.append(u), original(u))  # type: ignore[method-assign]
    prop.run(write_back=False)
    negate_a, negate_b, abs_b = prop.units
    assert negate_b.clean is ANY_DIRS and abs_b.clean is ANY_DIRS
    assert negate_a.clean is negate_a.dirs
    levels = len(prop.report.rounds)
    assert levels > 1
    # the unsharded side is stepped at the first level that lets anything cross it, only
    assert stepped.count(negate_b) == 1 and stepped.count(abs_b) == 1
    assert stepped.count(negate_a) > 1  # (its dirs change with the level: it steps again)
    b = holder_of(negate_b.slots[0])
    assert b.sharding is None
    sharded = holder_of(negate_a.slots[0]).sharding
    assert isinstance(sharded, TensorSharding)
    prop.write(b, sharded)
    assert negate_b.clean is None
    stepped.clear()
    prop.run_to_fixed_point()
    assert negate_b in stepped and abs_b in stepped
    assert str(holder_of(abs_b.slots[1]).sharding).endswith('[{"x", ?}, {"y", ?}]>')
