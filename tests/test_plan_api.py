"""The plan's surfaces: `shardc.plan`, `Lowered.plan()` / `.diff()`, `shardc plan|diff`,
`shardc compile --plan`, and their errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "mlp.mlir")
SCRIPT = os.path.join(os.path.dirname(__file__), "..", "examples", "mlp.py")

DOT = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
    : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardc.tools.cli", *args], capture_output=True, text=True
    )


def test_plan_api_and_json_schema() -> None:
    plan = shardc.plan(DOT)
    assert [(c.kind, c.axes, c.bytes) for c in plan.collectives] == [("all-reduce", ("x",), 1024)]
    doc = plan.to_json()
    assert set(doc) == {"collectives", "total_bytes", "bytes_per_axis", "memory"}
    (entry,) = doc["collectives"]
    assert list(entry) == ["kind", "axes", "bytes", "func", "value", "op", "loc", "cause", "fix"]
    # no JAX name in a hand-written module: the printed name and its line in the text
    assert entry["value"].startswith("%0 at <input>:") and entry["op"] == "stablehlo.dot_general"
    assert entry["func"] == "main" and "reduction factor" in entry["cause"]
    assert doc["total_bytes"] == 1024 and doc["bytes_per_axis"] == {"x": 1024}
    # 8x16 f32 / 4 columns + 16x32 f32 / 4 rows; the 8x32 f32 result replicated; the dot's
    # partial sums are a temporary of the result's size before the all-reduce (XLA: 1024 too)
    assert doc["memory"] == {"arguments": 128 + 512, "results": 1024, "peak": 1024, "aliased": 0}
    assert json.loads(plan.json_text()) == doc


def _mlp(x, w1, w2):  # noqa: ANN001, ANN202
    return jnp.tanh(x @ w1) @ w2


def _lower(w1_spec: str):  # noqa: ANN202
    f = shardc.jit(_mlp, mesh=MESH, in_shardings=("x, _", w1_spec, "y, _"))
    args = (
        jax.ShapeDtypeStruct((16, 32), jnp.float32),
        jax.ShapeDtypeStruct((32, 64), jnp.float32),
        jax.ShapeDtypeStruct((64, 8), jnp.float32),
    )
    return f.lower(*args)


def test_lowered_plan_and_diff() -> None:
    a = _lower("_, y")  # Megatron: the second dot contracts over y: an all-reduce
    plan = a.plan()
    kinds = [(c.kind, c.axes) for c in plan.collectives]
    assert ("all-reduce", ("y",)) in kinds
    reduce = next(c for c in plan.collectives if c.kind == "all-reduce")
    assert reduce.op == "stablehlo.dot_general" and "test_plan_api.py" in (reduce.loc or "")
    # the same as planning the lowered text: one plan, two doors
    assert plan.total_bytes == shardc.plan(a.as_text()).total_bytes
    b = _lower("y, _")  # w1 sharded along its contraction: another reduction
    d = a.diff(b)
    assert d.bytes_delta == b.plan().total_bytes - plan.total_bytes
    assert d.values and all(v.a != v.b for v in d.values)
    assert d.collectives_added or d.collectives_removed
    assert set(d.to_json()) == {"values", "collectives_added", "collectives_removed", "bytes_delta"}


def run_cli(capsys, *args: str) -> tuple[int, str, str]:  # noqa: ANN001
    """The CLI in this process (as `shardc ARGS`): exit status, stdout, stderr."""
    from shardc.tools.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_plan_cli_table_json_and_options(tmp_path, capsys) -> None:  # noqa: ANN001
    src = tmp_path / "dot.mlir"
    src.write_text(DOT)
    code, out, err = run_cli(capsys, "plan", str(src))
    assert code == 0, err
    assert "all-reduce {x} 1.0 KiB: %0 at dot.mlir:" in out
    assert "of stablehlo.dot_general in @main" in out
    assert "total: 1.0 KiB per device in 1 collectives" in out
    dest = tmp_path / "plan.json"
    code, _, err = run_cli(
        capsys, "plan", str(src), "--json", "-o", str(dest), "--strategy", "basic"
    )
    assert code == 0, err
    assert json.loads(dest.read_text())["total_bytes"] == 1024


def test_plan_cli_errors_are_one_line(tmp_path, capsys) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main( {")
    dest = tmp_path / "never.json"
    code, _, err = run_cli(capsys, "plan", str(bad), "-o", str(dest))
    assert code == 1 and err.startswith("error: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not dest.exists()
    code, _, err = run_cli(capsys, "diff", str(bad), EXAMPLE)
    assert code == 1 and err.startswith("error: ")
    code, _, err = run_cli(capsys, "plan", str(tmp_path / "missing.mlir"))
    assert code == 1 and "no such file" in err
    # and through the installed entry point, as a user runs it
    r = cli("plan", str(bad))
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr


def test_diff_of_a_module_with_itself_is_empty() -> None:
    d = shardc.diff(DOT, DOT)
    assert d.values == [] and d.collectives_added == [] and d.collectives_removed == []
    assert d.bytes_delta == 0


def test_compile_plan_prints_the_plan(tmp_path) -> None:  # noqa: ANN001
    r = cli("compile", SCRIPT, "--plan", "-o", str(tmp_path / "out.mlir"))
    assert r.returncode == 0, r.stderr
    assert "total:" in r.stderr and "memory per device:" in r.stderr


def test_plan_bytes_are_what_xla_moves() -> None:
    # the planned collectives of the Megatron MLP are the ones XLA compiles, byte for byte
    from tests.differential import harness as H
    from tests.differential import hlo_bytes as HB

    low = _lower("_, y")
    exe = H.compile_mlir(low.as_text(mode="pin"))
    assert low.plan().total_bytes == HB.total_bytes(H.hlo_text(exe)) > 0


# two arguments split on x along different dims: Shardy's aggressive propagation (XLA's own)
# lays the chain out like %arg0, shardc's basic strategy like %arg1
CONFLICT = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
    -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  %1 = stablehlo.tanh %0 : tensor<8x16xf32>
  %2 = stablehlo.multiply %1, %arg1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
"""


def test_plan_says_what_xla_own_layout_would_cost() -> None:
    basic = shardc.PropagationOptions(strategy="basic")
    plan = shardc.plan(CONFLICT, options=basic)
    own = plan.xla_own
    assert own is not None and own.pinned == 4  # the add, tanh and multiply and the result
    # XLA's own layout is Shardy's aggressive one, which shardc's default strategy also finds
    aggressive = shardc.plan(CONFLICT)
    assert (own.total_bytes, own.memory) == (aggressive.total_bytes, aggressive.memory)
    assert "shardc's differs from XLA's own at 4 values" in plan.table()
    # where shardc's layout is XLA's own, nothing is pinned and nothing said
    same = shardc.plan(CONFLICT)
    assert same.xla_own is None and "XLA's own" not in same.table()
    assert same.total_bytes == aggressive.total_bytes


def test_lowered_plan_is_of_the_compiled_form() -> None:
    x = jax.ShapeDtypeStruct((8, 16), jnp.float32)

    def f(a, b):
        return jnp.tanh(a + b) * b

    specs = ("x, _", "_, x")
    low = shardc.jit(f, mesh=MESH, in_shardings=specs,
                     options=shardc.PropagationOptions(strategy="basic")).lower(x, x)
    own = low.plan().xla_own
    assert own is not None and own.pinned >= 3
    checked = low.plan(check=True)
    assert checked.xla_own == own and checked.check is not None
    assert shardc.jit(f, mesh=MESH, in_shardings=specs).lower(x, x).plan().xla_own is None
