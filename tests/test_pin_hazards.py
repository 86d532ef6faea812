"""The op/dim patterns `pin` must not force (passes/pin_hazards.py), each compiled and run.

XLA aborts the whole process on some of these layouts, so each end-to-end case compiles in a
child process: before the pattern was listed, the child died with XLA's `Check failed`.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (mesh axis the input is sharded over, pad low, high, interior on dim 0 of f32[16, 8])
PAD_CASES = [("Y", -1, 1, 1), ("X", -3, 0, 1), ("Y", -2, 3, 1), ("X", 0, -1, 1)]

CHILD = r"""
import os, sys
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import numpy as np, jax, jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
import shardc
from tests.differential import harness as H
axis, lo, hi, it = sys.argv[1], *map(int, sys.argv[2:5])
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
def f(x):
    return jnp.tanh(lax.pad(jnp.tanh(x), jnp.float32(0.5), [(lo, hi, it), (0, 0, 0)]))
x = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
text = jax.jit(f, in_shardings=NamedSharding(mesh, P(axis))).lower(x).as_text()
pinned = shardc.propagate(text, mode="pin")
out = H.run_executable(H.compile_mlir(pinned), [x])[0]
print("RIGHT" if np.allclose(out, np.asarray(jax.jit(f)(x)), atol=1e-5) else "WRONG")
"""


# a pad made safe (replicated along dim 1), then an interior-only pad of its result that the
# layout shards along dim 1: before the second pattern was listed, XLA's HLO verifier rejected it
CHAIN_CHILD = r"""
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import numpy as np, jax, jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
import shardc
from tests.differential import harness as H
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
def f(x):
    y = lax.pad(jnp.tanh(x), jnp.float32(0.5), [(0, 0, 0), (-2, 3, 1)])
    return lax.pad(y, jnp.float32(0.25), [(0, 0, 0), (0, 0, 1)])
x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
text = jax.jit(f, in_shardings=NamedSharding(mesh, P(None, "X"))).lower(x).as_text()
pinned = shardc.propagate(text, mode="pin")
out = H.run_executable(H.compile_mlir(pinned), [x])[0]
print("RIGHT" if np.allclose(out, np.asarray(jax.jit(f)(x)), atol=1e-5) else "WRONG")
"""


def _op(text: str, name: str):  # type: ignore[no-untyped-def]
    from shardc.backend.importer import import_text

    return next(op for op in import_text(text).walk() if op.name == name)


def _pinned(op, sharding: str) -> str:  # type: ignore[no-untyped-def]
    """The layout `pinnable` gives `op`'s result for `sharding` (its dims' text), or "same"."""
    from shardc.dialect.sharding_syntax import parse_tensor_sharding
    from shardc.passes.pin_hazards import pinnable

    s = parse_tensor_sharding(f"#sdy.sharding<@mesh, {sharding}>")
    got = pinnable(op, s)
    return "same" if got is s else str(got).split(", ", 1)[1][:-1]


def test_an_interior_pad_after_a_pad_made_safe_compiles_and_is_right() -> None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(
        [sys.executable, "-c", CHAIN_CHILD],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("RIGHT"), r.stdout + r.stderr[-2000:]


# the pad's operand, held along dim 0 only: by a constraint, by a shard_map's out_specs
HELD_ALONG_DIM_0 = {
    "constraint": '  %o = sdy.sharding_constraint %x <@mesh, [{"Y"}, {}]> : tensor<4x16xf32>\n',
    "shard_map": (
        '  %o = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"Y"}, {}]>] '
        'out_shardings=[<@mesh, [{"Y"}, {}]>] manual_axes={"Y"} (%a: tensor<1x16xf32>) {\n'
        "    sdy.return %a : tensor<1x16xf32>\n"
        "  } : (tensor<4x16xf32>) -> tensor<4x16xf32>\n"
    ),
}


@pytest.mark.parametrize("held_by", sorted(HELD_ALONG_DIM_0))
def test_an_interior_pad_keeps_its_operands_layout_along_the_padded_dim(held_by: str) -> None:
    text = (
        'sdy.mesh @mesh = <["X"=2, "Y"=4]>\n'
        "func.func @main(%x: tensor<4x16xf32>) -> tensor<4x31xf32> {\n"
        "  %z = stablehlo.constant dense<0.5> : tensor<f32>\n"
        + HELD_ALONG_DIM_0[held_by]
        + "  %d = stablehlo.pad %o, %z, low = [0, 0], high = [0, 0], interior = [0, 1] "
        ": (tensor<4x16xf32>, tensor<f32>) -> tensor<4x31xf32>\n"
        "  return %d : tensor<4x31xf32>\n}\n"
    )
    pad = _op(text, "stablehlo.pad")
    # the operand is replicated along dim 1: the pad's result may not be pinned sharded there
    assert _pinned(pad, '[{"Y"}, {"X"}]') == '[{"Y"}, {}]'
    # dim 0 has no interior padding: any layout there is kept
    assert _pinned(pad, '[{"X"}, {}]') == "same"


def _psum_then_pad(x: object, y: object) -> object:
    """A shard_map whose out_specs replicate its result, an interior pad of it, and a reader
    sharded along the padded dim (XLA shards the pad from it; its verifier then rejects the
    partitioned pad: jax.jit's program too)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import PartitionSpec as P

    from tests.fuzz.programs import jax_mesh

    s = jax.shard_map(lambda a: lax.psum(a, "X"), mesh=jax_mesh(0), in_specs=P("X"), out_specs=P())
    return lax.pad(s(x), jnp.float32(0.5), [(0, 0, 0), (-2, 3, 1)]) - y  # type: ignore[operator]


def test_an_interior_pad_of_a_shard_map_result_compiles_and_is_right() -> None:
    """The pad's operand is held whole by the manual computation's out_sharding: the pad is
    pinned whole along the padded dim, XLA compiles the pin export on 8 devices, and it
    computes the unsharded numbers."""
    import jax
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import shardc
    from tests.differential import harness as H
    from tests.fuzz.programs import jax_mesh

    rng = np.random.default_rng(0)
    args = [rng.standard_normal((2, 8)).astype(np.float32),
            rng.standard_normal((1, 16)).astype(np.float32)]  # fmt: skip
    sh = (None, NamedSharding(jax_mesh(0), P(None, "Y")))
    text = jax.jit(_psum_then_pad, in_shardings=sh).lower(*args).as_text()
    pinned = shardc.propagate(text, mode="pin")
    assert '<@mesh, [{}, {}]> : tensor<1x16xf32>' in pinned, pinned
    out = H.run_executable(H.compile_mlir(pinned, 8), args)
    np.testing.assert_allclose(out[0], np.asarray(jax.jit(_psum_then_pad)(*args)), atol=1e-5)


@pytest.mark.parametrize("axis,lo,hi,interior", PAD_CASES)
def test_pad_with_negative_edge_and_interior_compiles_and_is_right(axis, lo, hi, interior) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(
        [sys.executable, "-c", CHILD, axis, str(lo), str(hi), str(interior)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("RIGHT"), r.stdout + r.stderr[-2000:]


def test_pad_hazard_dims_and_the_pinned_layout() -> None:
    from shardc.passes.pin_hazards import pad_negative_edge_with_interior

    text = (
        'sdy.mesh @mesh = <["X"=2, "Y"=4]>\n'
        "func.func @main(%x: tensor<16x8x4xf32>) -> tensor<31x9x7xf32> {\n"
        "  %z = stablehlo.constant dense<0.5> : tensor<f32>\n"
        "  %d = stablehlo.pad %x, %z, low = [-1, 1, 0], high = [1, 0, 0], interior = [1, 0, 1] "
        ": (tensor<16x8x4xf32>, tensor<f32>) -> tensor<31x9x7xf32>\n"
        "  return %d : tensor<31x9x7xf32>\n}\n"
    )
    pad = _op(text, "stablehlo.pad")
    assert pad_negative_edge_with_interior(pad) == {0}  # dim 1: no interior; dim 2: no negative
    assert _pinned(pad, '[{"Y"}, {"X"}, {}]') == '[{}, {"X"}, {}]'
    assert _pinned(pad, '[{}, {"X"}, {"Y"}]') == "same"


@pytest.mark.parametrize("lo,hi,interior,hazard", [
    (-1, 1, 1, True), (-3, -2, 1, True), (-1, 0, 2, True), (-2, 3, 2, True),
    (-2, 3, 1, False), (-4, 0, 1, False), (0, -1, 1, False), (-3, 0, 2, False), (1, -3, 1, False),
])  # fmt: skip
def test_a_negative_low_edge_is_a_hazard_only_between_elements(lo, hi, interior, hazard) -> None:
    """The pads of f32[16] XLA aborts on when partitioned along the padded dim, as a sweep of
    every low/high edge in -3..3 and interior 1, 2 over 2, 4 and 8 devices found them: those
    whose negative low edge starts the result between two operand elements."""
    from shardc.passes.pin_hazards import pad_negative_edge_with_interior

    out = 16 + 15 * interior + lo + hi
    text = (
        'sdy.mesh @mesh = <["X"=8]>\n'
        f"func.func @main(%x: tensor<16xf32>) -> tensor<{out}xf32> {{\n"
        "  %z = stablehlo.constant dense<0.5> : tensor<f32>\n"
        f"  %d = stablehlo.pad %x, %z, low = [{lo}], high = [{hi}], interior = [{interior}] "
        f": (tensor<16xf32>, tensor<f32>) -> tensor<{out}xf32>\n"
        f"  return %d : tensor<{out}xf32>\n}}\n"
    )
    pad = _op(text, "stablehlo.pad")
    assert pad_negative_edge_with_interior(pad) == ({0} if hazard else set())


def _dus_one_row(x: object, u: object, i: object) -> object:
    import jax.numpy as jnp
    from jax import lax

    return jnp.tanh(lax.dynamic_update_slice(jnp.tanh(x), u, (0, i)))


def _dus_pinned(start: int, xla_keeps_it_whole: bool) -> tuple[str, list, object]:  # type: ignore[type-arg]
    """The compiled form of a one-row update of f32[8, 8] sharded along the updated dim, with
    the oracle's answer for the update edited: XLA's own layout keeps that dim whole (as where
    shardc's layout parts from XLA's) or shards it (as here, jax.jit's own layout)."""
    import jax
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    import shardc
    from shardc.backend.exporter import export_text
    from shardc.backend.importer import import_text
    from shardc.backend.xla_form import ShardyOracle
    from shardc.passes.export import export_module
    from shardc.passes.pin import record_written

    class Edited(ShardyOracle):
        def __call__(self, module, wanted, dead, rules):  # type: ignore[no-untyped-def]
            got = super().__call__(module, wanted, dead, rules)
            if xla_keeps_it_whole:
                for k, op in enumerate(module.walk()):
                    if op.name == "stablehlo.dynamic_update_slice" and k in got.results:
                        got.results[k] = [(None,) for _ in got.results[k]]
            return got

    mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((8, 8)).astype(np.float32), np.ones((8, 1), np.float32),
            np.int32(start)]  # fmt: skip
    sh = (NamedSharding(mesh, P(None, "Y")), None, None)
    text = jax.jit(_dus_one_row, in_shardings=sh).lower(*args).as_text()
    written = record_written(import_text(text))
    opts = shardc.PropagationOptions(keep_open=True, xla_dead_code=True, xla_dead_constraints=True)
    module = import_text(shardc.propagate(text, options=opts))
    export_module(module, "pin", oracle=Edited(), written=written)
    return export_text(module, "pretty"), args, jax.jit(_dus_one_row)(*args)


@pytest.mark.parametrize("start", [9, 3])
def test_a_pin_never_shards_a_one_row_update_xla_keeps_whole(start: int) -> None:
    """Where XLA's own layout keeps the updated dim whole and shardc's shards it, pinned as it
    is a row at start 9 (clamped to 7) landed in no shard; the compiled form pins the update
    and its operand with that dim replicated and computes the unsharded numbers."""
    import numpy as np

    from tests.differential import harness as H

    pinned, args, ref = _dus_pinned(start, xla_keeps_it_whole=True)
    assert pinned.count("sdy.sharding_constraint") >= 2, pinned
    out = H.run_executable(H.compile_mlir(pinned, 8, False), args)
    np.testing.assert_allclose(out[0], np.asarray(ref), atol=1e-5)


def test_a_one_row_update_xla_shards_itself_is_left_as_jax_jit_runs_it() -> None:
    """Where XLA's own layout shards the updated dim as shardc's does, nothing is pinned: the
    program is jax.jit's (which has XLA's fault at a clamped start, as jax.jit has)."""
    pinned, _, _ = _dus_pinned(3, xla_keeps_it_whole=False)
    assert "sdy.sharding_constraint" not in pinned, pinned


def test_dus_hazard_dims() -> None:
    text = (
        'sdy.mesh @mesh = <["X"=2, "Y"=4]>\n'
        "func.func @main(%x: tensor<8x8x4xf32>, %u: tensor<1x2x1xf32>, %i: tensor<i32>)"
        " -> tensor<8x8x4xf32> {\n"
        "  %c = stablehlo.constant dense<3> : tensor<i32>\n"
        "  %d = stablehlo.dynamic_update_slice %x, %u, %i, %i, %c : (tensor<8x8x4xf32>, "
        "tensor<1x2x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x8x4xf32>\n"
        "  return %d : tensor<8x8x4xf32>\n}\n"
    )
    dus = _op(text, "stablehlo.dynamic_update_slice")
    # dim 0: one row at a dynamic start; dim 1: two rows; dim 2: one row at constant 3 (in range)
    assert _pinned(dus, '[{"X"}, {"Y"}, {}]') == '[{}, {"Y"}, {}]'
    assert _pinned(dus, '[{}, {"Y"}, {"X"}]') == "same"


def test_a_scans_row_update_at_its_counter_is_in_range() -> None:
    """A scan writes row i of its stacked output at its loop counter (0..7 of 8 rows): always in
    range, so the update keeps a layout sharded along the rows; the same update at an
    argument's index may be clamped and does not."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    from shardc.backend.importer import import_text
    from shardc.dialect.sharding_syntax import parse_tensor_sharding
    from shardc.passes.pin_hazards import pinnable

    def scan(xs: jax.Array) -> jax.Array:
        return lax.scan(lambda c, x: (c, jnp.tanh(x)), 0.0, xs)[1]

    def at_index(x: jax.Array, u: jax.Array, i: jax.Array) -> jax.Array:
        return lax.dynamic_update_slice(x, u, (i, 0))

    x = np.zeros((8, 4), np.float32)
    s = parse_tensor_sharding('#sdy.sharding<@mesh, [{"X"}, {}]>')
    for f, args, keeps in ((scan, (x,), True),
                           (at_index, (x, x[:1], np.int32(0)), False)):  # fmt: skip
        module = import_text(jax.jit(f).lower(*args).as_text())
        dus = [op for op in module.walk() if op.name == "stablehlo.dynamic_update_slice"]
        assert dus
        for op in dus:
            assert (pinnable(op, s) is s) == keeps, f.__name__


# one callee updating a row of f32[8, 32] (sharded along the rows' dim) at its argument %i,
# called at start 3 (in range) and at start 40 (past the end: clamped to 31)
TWO_CALLS = """sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @main(%x: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"Y"}]>},
                %u: tensor<8x1xf32>) -> tensor<8x32xf32> {
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %c40 = stablehlo.constant dense<40> : tensor<i32>
  %a = call @f(%x, %u, %c3) : (tensor<8x32xf32>, tensor<8x1xf32>, tensor<i32>) -> tensor<8x32xf32>
  %b = call @f(%a, %u, %c40) : (tensor<8x32xf32>, tensor<8x1xf32>, tensor<i32>) -> tensor<8x32xf32>
  return %b : tensor<8x32xf32>
}
func.func private @f(%x: tensor<8x32xf32>, %u: tensor<8x1xf32>, %i: tensor<i32>) -> tensor<8x32xf32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %d = stablehlo.dynamic_update_slice %x, %u, %z, %i : (tensor<8x32xf32>, tensor<8x1xf32>,
    tensor<i32>, tensor<i32>) -> tensor<8x32xf32>
  return %d : tensor<8x32xf32>
}
"""


def test_each_call_sites_copy_is_bounded_by_its_own_call() -> None:
    """Propagation gives the second call its own copy of @f, which the pin export keeps: the
    export's index of calls (`CallSites`, built once) sees the copy, so the copy called at 40
    is pinned with the row dim whole and @f, called only at 3, keeps it sharded (an index
    from before the copy would give @f both calls, 3..40, and pin it whole too)."""
    from shardc.backend.importer import import_text
    from shardc.dialect.op_views import ShardingConstraint
    from shardc.passes.pin_hazards import CallSites, value_bounds
    from shardc.passes.pipeline import PipelineOptions, run_pipeline

    module = import_text(TWO_CALLS)
    run_pipeline(module, PipelineOptions(export="pin"))  # (no oracle: every value pinned)
    funcs = module.funcs
    assert set(funcs) == {"main", "f", "f_0"}, set(funcs)
    sites = CallSites(module.op)
    layout = {}
    for name in ("f", "f_0"):
        dus = next(op for op in funcs[name].walk() if op.name == "stablehlo.dynamic_update_slice")
        pin = next(iter(dus.results[0].users))
        layout[name] = [[a.name for a in d.axes] for d in ShardingConstraint(pin).sharding.dims]
        start = dus.operands[3]
        assert value_bounds(start, sites=sites) == value_bounds(start)  # (the index is exact)
        assert len(sites.of(name)) == 1
    assert layout == {"f": [[], ["Y"]], "f_0": [[], []]}, layout


def test_call_sites_index_bounds_like_a_walk_of_the_module() -> None:
    """`value_bounds` with the module's `CallSites` equals the walk per argument it replaces,
    on every start of a module whose callee is called at two constants and from a callee."""
    from shardc.backend.importer import import_text
    from shardc.passes.pin_hazards import CallSites, value_bounds

    module = import_text(TWO_CALLS)
    sites = CallSites(module.op)
    assert [callee for callee in sites.calls] == ["f"] and len(sites.of("f")) == 2
    starts = [op.operands[3] for op in module.walk() if op.name == "stablehlo.dynamic_update_slice"]
    assert starts
    for v in starts:
        assert value_bounds(v, sites=sites) == value_bounds(v) == (3, 40)
