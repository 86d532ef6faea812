"""The auto-sharding pass through the API and the CLI, on the shipped MLP module."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import shardc
from shardc.dialect.errors import ShardcError
from shardc.passes.plan.plan import plan_module
from shardc.passes.propagation.options import PropagationOptions

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "..", "examples", "mlp.mlir")
W1_ANNOTATION = ' {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}'


def _batch_only() -> str:
    text = open(MLP).read()
    assert W1_ANNOTATION in text
    return text.replace(W1_ANNOTATION, "", 1)


def _run(text: str, **kw: object) -> tuple[shardc.Lowered, object]:  # type: ignore[name-defined]
    from shardc.api.propagate import propagate_module
    from shardc.backend.importer import import_text

    module = import_text(text, "<test>")
    report = propagate_module(module, PropagationOptions(auto=True, **kw))  # type: ignore[arg-type]
    return module, report


def _arg_shardings(module: object) -> list[str]:
    from shardc.dialect.ir import func_body

    body = func_body(module.funcs["main"])  # type: ignore[attr-defined]
    return [s.body() if s is not None else "None" for s in (a.sharding for a in body.args)]


def test_auto_keeps_every_annotation() -> None:
    module, report = _run(open(MLP).read())
    args = _arg_shardings(module)
    assert args[0] == '<@mesh, [{"data"}, {}]>'  # the user's batch annotation, dim 1 closed
    assert args[1] == '<@mesh, [{}, {"model"}]>'  # the user's megatron annotation
    assert report.auto.functions[0].method == "highs optimal"  # type: ignore[attr-defined]


def test_budget_too_small_for_replicated_weights_shards_them() -> None:
    text = _batch_only()
    _, unconstrained = _run(text)
    free = unconstrained.auto.functions[0]  # type: ignore[attr-defined]
    module, report = _run(text, memory_budget="12KiB")
    f = report.auto.functions[0]  # type: ignore[attr-defined]
    assert free.peak > 12 * 1024 >= f.peak  # the layout auto found alone does not fit
    args = _arg_shardings(module)
    assert args[0] == '<@mesh, [{"data"}, {}]>'
    assert args[1] != "<@mesh, [{}, {}]>" and args[2] != "<@mesh, [{}, {}]>"
    assert f.decisions and all(d.value.startswith("%") for d in f.decisions)
    lines = report.auto.lines()  # type: ignore[attr-defined]
    assert any(line.startswith("auto @main: highs optimal") for line in lines)
    assert any("%arg1 dim" in line and "weighed" in line for line in lines)
    # the promise is the plan's: the layout chosen fits by the plan's memory, which is the figure
    # the report gives, and the one `shardc plan` computes for the module
    planned = report.auto.planned_memory  # type: ignore[attr-defined]
    assert planned is not None and planned <= 12 * 1024
    m = plan_module(module).memory
    assert m.arguments + m.results + m.peak == planned


def _smallest(text: str, budget: str) -> int:
    with pytest.raises(ShardcError, match=r"cannot be met: the smallest layout found needs") as e:
        _run(text, memory_budget=budget)
    return int(e.value.message.split("(", 2)[2].split(" bytes")[0])


def test_unmeetable_budget_names_one_smallest_layout_whatever_the_budget() -> None:
    text = _batch_only()
    small = _smallest(text, "1KiB")
    assert small > 1024
    assert _smallest(text, "3KiB") == small
    # and a budget of that figure is met
    module, report = _run(text, memory_budget=small)
    assert report.auto.planned_memory <= small  # type: ignore[attr-defined]


def test_the_report_says_in_fields_that_auto_took_its_smallest_layout() -> None:
    # with half the budget kept free no solve fits, and the smallest layout found (one per
    # program: the figure the budget error names) is taken where the plan fits it
    text = _batch_only()
    small = _smallest(text, "1KiB")
    for budget in (small, small + 1000):
        _, report = _run(text, memory_budget=budget, auto_headroom=50)
        auto = report.auto  # type: ignore[attr-defined]
        assert auto.fell_back_to_smallest
        assert auto.smallest_memory == auto.planned_memory == small
    _, report = _run(text, memory_budget="1MiB", auto_headroom=50)
    auto = report.auto  # type: ignore[attr-defined]
    assert not auto.fell_back_to_smallest and auto.smallest_memory is None
    assert auto.planned_memory > small


def test_axis_cost_must_name_mesh_axes() -> None:
    with pytest.raises(ShardcError, match=r"axis cost .pod=3. in .pod=3.: unknown axis name: \"pod\""):
        _run(_batch_only(), axis_cost="pod=3")


def test_jit_auto_keywords_reach_the_options() -> None:
    from shardc.api.jitted import _auto_options

    o = _auto_options(None, True, "1MiB", "data=4")
    assert o.auto and o.memory_budget == "1MiB" and o.axis_cost == "data=4"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardc.tools.cli", "propagate", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_cli_auto_explain_and_budget_error(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "mlp.mlir")
    with open(path, "w") as f:
        f.write(_batch_only())
    ok = _cli("--auto", "--memory-budget", "12KiB", "--explain", path)
    assert ok.returncode == 0, ok.stderr
    assert "explain: auto @main: highs optimal" in ok.stderr
    assert "explain: auto: %arg1" in ok.stderr
    assert "sdy.sharding_constraint" in ok.stdout or "sdy.sharding" in ok.stdout
    bad = _cli("--auto", "--memory-budget", "1KiB", path)
    assert bad.returncode == 1
    assert bad.stderr.startswith("error: memory budget 1.00 KiB") and bad.stderr.count("\n") == 1
    assert "Traceback" not in bad.stderr


def test_axis_cost_steers_collectives_off_a_slow_axis() -> None:
    text = _batch_only()
    plain_module, plain = _run(text, memory_budget="12KiB")
    slow_module, slow = _run(text, memory_budget="12KiB", axis_cost="model=100")
    p, s = plain.auto.functions[0], slow.auto.functions[0]  # type: ignore[attr-defined]
    # the plain plan's collectives run over "model": weighted 100x they would cost more than
    # the plan auto finds when "model" is slow, which differs from it
    assert 100 * p.objective > s.objective > p.objective
    assert _arg_shardings(plain_module) != _arg_shardings(slow_module)


PRIORITIES = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p1, {?}]>},
                %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}p0]>},
                %arg2: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<16x32xf32>
  %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0]
    : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}
"""


def test_priorities_keep_what_propagation_settled() -> None:
    # p0 (%arg1's "x" on dim 1) wins the conflict at the add; auto keeps that outcome
    module, report = _run(PRIORITIES, memory_budget="9KiB")
    add = next(op for op in module.funcs["main"].walk() if op.name == "stablehlo.add")  # type: ignore[attr-defined]
    assert add.results[0].sharding.dims[1].axes[0].name == "x"
    assert any("annotations carry priorities" in line for line in report.auto.lines())  # type: ignore[attr-defined]
    args = _arg_shardings(module)
    assert args[0].startswith('<@mesh, [{"x"}') and args[1] == '<@mesh, [{}, {"x"}]>'


def test_plan_says_what_auto_decided() -> None:
    # shardc.plan with auto: the plan of auto's layout, with auto's explanation in the table
    plan = shardc.plan(_batch_only(), options=PropagationOptions(auto=True, memory_budget="12KiB"))
    assert plan.auto and plan.auto[0].startswith("auto @main: highs optimal")
    table = plan.table()
    assert "decided by automatic sharding:" in table
    assert any("%arg1 dim" in line and "weighed" in line for line in plan.auto)
    assert "auto" not in plan.to_json()  # the JSON schema stays the plan's own
    # without auto there is nothing of the kind
    assert not shardc.plan(_batch_only()).auto


def test_lowered_plan_is_the_plan_of_the_auto_layout() -> None:
    import jax
    import jax.numpy as jnp

    mesh = jax.sharding.AbstractMesh((4, 2), ("data", "model"))

    def mlp(x, w1, w2):  # type: ignore[no-untyped-def]
        return jnp.tanh(x @ w1) @ w2

    f = shardc.jit(mlp, mesh=mesh, in_shardings=("data, _", None, None), auto=True)
    sds = [jax.ShapeDtypeStruct(s, jnp.float32) for s in ((16, 64), (64, 256), (256, 64))]
    lowered = f.lower(*sds)
    plan = lowered.plan()
    assert plan.auto == lowered.auto_explanation() and plan.auto
    # the plan reads the layout auto chose (the exported shardings), not a re-run of it
    from shardc.api.plan import plan_module

    assert plan.total_bytes == plan_module(lowered.ir.clone(), None).total_bytes
