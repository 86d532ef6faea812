"""The plan's causes, fixes and names: a cause names two different shardings, a fix is offered
only where re-planning with it lowers the total (and says by how much), values carry their
JAX names and source lines, "(annotated)" marks only what the user annotated, and ops without
a sharding rule are named."""

from __future__ import annotations

import re
import subprocess
import sys

import jax
import jax.numpy as jnp

import shardc

MESH = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def _softmax_grad():  # noqa: ANN202
    def step(x, w):  # noqa: ANN001, ANN202
        def loss(w):  # noqa: ANN001, ANN202
            return jnp.sum(jax.nn.softmax(x @ w, axis=-1) ** 2)

        return jax.grad(loss)(w)

    f = shardc.jit(step, mesh=MESH, in_shardings=("data, _", "_, model"))
    return f.lower(
        jax.ShapeDtypeStruct((8, 16), jnp.float32), jax.ShapeDtypeStruct((16, 32), jnp.float32)
    )


def test_values_are_named_as_jax_names_them_and_only_annotations_are_annotated() -> None:
    plan = _softmax_grad().plan()
    assert plan.collectives
    for c in plan.collectives:
        assert not re.match(r"%\d", c.value), c.value  # a JAX name, not %N
        assert "test_plan_causes.py" in c.value or c.value in ("x", "w"), c.value
        for named in re.findall(r"(\S+) dim \d+ \{[^}]*\} \(annotated\)", c.cause):
            assert named in ("x", "w"), c.cause  # only the arguments the user annotated


def test_a_fix_is_offered_only_where_it_lowers_the_total() -> None:
    low = _softmax_grad()
    plan = low.plan()
    offered = [c for c in plan.collectives if c.fix]
    assert offered  # the data-parallel contraction goes if x is not split
    build, options = low.plan_source
    for c in offered:
        m = re.search(r"moves (.+) instead of (.+) \((.+) less\)", c.fix)
        assert m and m.group(2) != m.group(1), c.fix
    # the stated total is the total of the program planned again with the change
    from shardc.api.plan import plan_propagated
    from shardc.passes.plan.fixes import apply
    from shardc.passes.plan.report import fmt_bytes

    best = min(offered, key=lambda c: c.fix)
    cand = next(k for k in best.candidates if k.text in best.fix)
    module = build()
    assert apply(module, cand)
    again = plan_propagated(module, options)
    assert again.total_bytes < plan.total_bytes
    assert f"moves {fmt_bytes(again.total_bytes)} instead of" in best.fix


def test_no_fix_where_no_annotation_change_helps() -> None:
    # the result must be replicated and the argument is split by the user: the gather stays
    # wherever the annotation goes, so nothing is offered
    text = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = stablehlo.abs %arg0 : tensor<16xf32>
  return %0 : tensor<16xf32>
}
"""
    plan = shardc.plan(text)
    (c,) = plan.collectives
    assert c.kind == "all-gather"
    # the cause names two different shardings
    assert re.search(r'is \[\{"x"\}\].*is \[\{\}\]', c.cause), c.cause
    # the fix found is to move the gather to the argument: not lower, so only a real change
    # (declaring the result split) may be offered, and it must lower the total to 0
    assert c.fix == "" or "moves 0 B instead of 64 B" in c.fix


def test_ops_without_a_rule_are_named() -> None:
    text = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = chlo.square %arg0 : tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
"""
    plan = shardc.plan(text)
    assert plan.ruleless == {"chlo.square": 1}
    assert "no sharding rule for chlo.square (1 op)" in plan.table()
    r = subprocess.run(
        [sys.executable, "-m", "shardc.tools.cli", "plan", "-"],
        input=text,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "no sharding rule for chlo.square" in r.stderr, r.stderr


def test_compile_keeps_python_locations(tmp_path) -> None:  # noqa: ANN001
    import os

    script = os.path.join(os.path.dirname(__file__), "..", "examples", "mlp.py")
    out = tmp_path / "mlp.mlir"
    r = subprocess.run(
        [sys.executable, "-m", "shardc.tools.cli", "compile", script, "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    plan = shardc.plan(out.read_text())
    assert plan.collectives and all("mlp.py" in (c.loc or "") for c in plan.collectives)
    assert any("mlp.py" in c.value for c in plan.collectives)
