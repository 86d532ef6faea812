"""shard_map programs of seeds 000 and 002, lowered by JAX, through shardc's manual-region passes
and back out, compiled by XLA on 8 virtual CPU devices and compared with the unsharded numbers."""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

import shardc
from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.dialect.errors import ManualComputationError
from shardc.passes.manual.redundant import remove_redundant_collectives
from shardc.passes.manual.variance import View, analyze_variance

from .xla_util import collective_counts, compile_text


@functools.cache
def mesh42() -> jax.sharding.Mesh:
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


@functools.cache
def mesh8() -> jax.sharding.Mesh:
    return jax.make_mesh((8,), ("i",), axis_types=(AxisType.Auto,))


def _arr(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# name -> (function to jit, argument shapes, reference on numpy arrays)
def _programs() -> dict[str, tuple[Callable, list[tuple[int, ...]], Callable]]:
    m = mesh42()

    def sm(body, ins, outs, **kw):  # type: ignore[no-untyped-def]
        return jax.shard_map(body, mesh=m, in_specs=ins, out_specs=outs, **kw)

    def blocks_sum(a: np.ndarray, n: int, axis: int) -> np.ndarray:
        return np.sum(np.stack(np.split(a, n, axis=axis)), axis=0)

    progs: dict[str, tuple[Callable, list[tuple[int, ...]], Callable]] = {
        "matmul_psum": (
            sm(lambda a, b: lax.psum(a @ b, "y"), (P("x", "y"), P("y", None)), P("x", None)),
            [(8, 16), (16, 32)],
            lambda a, b: a @ b,
        ),
        "matmul_psum_scatter": (
            sm(lambda a, b: lax.psum_scatter(a @ b, "y", scatter_dimension=1, tiled=True),
               (P("x", "y"), P("y", None)), P("x", "y")),
            [(8, 16), (16, 32)],
            lambda a, b: a @ b,
        ),
        "f1": (sm(lambda x: x, P("x", None), P("x", "y")), [(12, 12)],
               lambda x: np.tile(x, (1, 2))),
        "f2": (sm(lambda x: x, P("x", "y"), P("x", "y")), [(12, 12)], lambda x: x),
        "f3": (sm(lambda x: lax.psum(x, "y"), P("x", "y"), P("x", None)), [(12, 12)],
               lambda x: blocks_sum(x, 2, 1)),
        "f4": (sm(lambda x: lax.psum(x, "x"), P("x", "y"), P(None, "y")), [(12, 12)],
               lambda x: blocks_sum(x, 4, 0)),
        "f5": (sm(lambda x: lax.psum(x, ("x", "y")), P("x", "y"), P(None, None)), [(12, 12)],
               lambda x: blocks_sum(blocks_sum(x, 4, 0), 2, 1)),
        "all_gather": (
            sm(lambda x: lax.all_gather(x, "x", axis=0, tiled=True), P("x", None), P(),
               check_vma=False),
            [(8, 4)],
            lambda x: x,
        ),
        "all_to_all": (
            sm(lambda x: lax.all_to_all(x, "x", 1, 0, tiled=True), P("x", None), P(None, "x")),
            [(8, 8)],
            lambda x: x,
        ),
        "ppermute_ring": (
            sm(lambda x: lax.ppermute(x, "x", [(i, (i + 1) % 4) for i in range(4)]),
               P("x", None), P("x", None)),
            [(8, 4)],
            lambda x: np.roll(x, 2, axis=0),
        ),
        "axis_index": (
            sm(lambda x: x + lax.axis_index("x").astype(jnp.float32), P("x", None), P("x", None)),
            [(8, 4)],
            lambda x: x + np.repeat(np.arange(4, dtype=np.float32), 2)[:, None],
        ),
        "partial_manual": (
            sm(lambda x: lax.psum(jnp.sin(x), "x"), P("x"), P(), axis_names={"x"}),
            [(16, 8)],
            lambda x: blocks_sum(np.sin(x), 4, 0),
        ),
    }
    return progs


PROGRAMS = _programs()


@functools.cache
def lowered(name: str) -> str:
    f, shapes, _ = PROGRAMS[name]
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    return jax.jit(f).lower(*args).as_text()


def run_text(text: str, args: list[np.ndarray]) -> tuple[list[np.ndarray], dict[str, int]]:
    """Compile `text` for 8 CPU devices, run it on replicated inputs, return outputs + counts."""
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    exe = compile_text(text)
    devices = xc.DeviceList(tuple(exe.local_devices()))
    placed = []
    for a, proto in zip(args, exe.get_parameter_shardings(), strict=True):
        placed.append(jax.device_put(a, GSPMDSharding(devices, xc.HloSharding.from_proto(proto))))
    per_out = exe.execute_sharded(placed).disassemble_into_single_device_arrays()
    outs = []
    for shards, proto in zip(per_out, exe.get_output_shardings(), strict=True):
        hs = xc.HloSharding.from_proto(proto)
        local = shards[0].shape
        tile = list(hs.tile_assignment_dimensions()) if hs.is_tiled() else []
        if hs.is_tiled() and hs.replicate_on_last_tile_dim():
            tile = tile[:-1]
        tile = (tile + [1] * len(local))[: len(local)]
        shape = tuple(d * t for d, t in zip(local, tile, strict=True))
        sharding = GSPMDSharding(devices, hs)
        outs.append(np.asarray(jax.make_array_from_single_device_arrays(shape, sharding, shards)))
    return outs, collective_counts(exe)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_roundtrip_through_manual_passes_runs_right(name: str) -> None:
    _, shapes, ref = PROGRAMS[name]
    module = import_text(lowered(name))
    report = shardc.check(module)  # shapes + collectives + replication must all pass
    assert report.regions
    remove_redundant_collectives(module)
    args = [_arr(s, i) for i, s in enumerate(shapes)]
    (out,), _ = run_text(export_text(module), args)
    np.testing.assert_allclose(out, ref(*args), rtol=1e-5, atol=1e-5)


def test_decoded_axes_of_seed_000_programs() -> None:
    want = {
        "matmul_psum": [("all_reduce", ("y",))],
        "matmul_psum_scatter": [("reduce_scatter", ("y",))],
        "f5": [("all_reduce", ("x", "y"))],
        "all_gather": [("all_gather", ("x",))],
        "all_to_all": [("all_to_all", ("x",))],
        "ppermute_ring": [("collective_permute", ("x",))],
        "partial_manual": [("all_reduce", ("x",))],
    }
    for name, cols in want.items():
        report = shardc.check(import_text(lowered(name)))
        got = [(c.kind, c.axes) for r in report.regions for c in r.collectives]
        assert got == cols, name
    ring = shardc.check(import_text(lowered("ppermute_ring"))).regions[0].collectives[0]
    assert ring.perm == ((0, 1), (1, 2), (2, 3), (3, 0))
    idx = shardc.check(import_text(lowered("axis_index"))).regions[0].axis_index
    assert [w for _, w in idx] == ['axis_index("x")']


def test_local_shapes_partial_manual() -> None:
    region = shardc.check(import_text(lowered("partial_manual"))).regions[0]
    assert region.region.manual_axes == ("x",) and region.region.free_axes == ("y",)
    assert region.shapes.operands[0].local_shape == (4, 8)


def test_all_gather_views_differ() -> None:
    """all_gather output is replicated (value view) but typed varying (seed 002's typing view)."""
    module = import_text(lowered("all_gather"))
    region = shardc.check(module).regions[0]
    rv = region.results[0]
    assert rv.value_axes == () and rv.typing_axes == ("x",)


# ---------------------------------------------------------------------------------------------
# The replication check


@functools.cache
def unreplicated_text() -> str:
    f = jax.shard_map(lambda x: x * 2, mesh=mesh42(), in_specs=P("x", None), out_specs=P(),
                      check_vma=False)
    return jax.jit(f).lower(jax.ShapeDtypeStruct((8, 4), jnp.float32)).as_text()


def test_replication_check_rejects_varying_unmapped_output() -> None:
    with pytest.raises(ManualComputationError) as e:
        shardc.check(unreplicated_text())
    msg = str(e.value)
    assert 'result 0' in msg and 'manual axis "x"' in msg and "in_shardings[0]" in msg


def test_replication_check_flag_off_passes() -> None:
    report = shardc.check(unreplicated_text(), check_replication=False)
    assert report.regions[0].results[0].value_axes == ("x",)


def test_replication_check_axis_index_output() -> None:
    f = jax.shard_map(lambda: lax.axis_index("y"), mesh=mesh42(), in_specs=(), out_specs=P(),
                      check_vma=False)
    text = jax.jit(f).lower().as_text()
    with pytest.raises(ManualComputationError, match='"y"'):
        shardc.check(text)


# ---------------------------------------------------------------------------------------------
# Seed 002: redundant collectives


@functools.cache
def grad_text() -> str:
    def loss(params, inputs, targets):  # type: ignore[no-untyped-def]
        pred = jnp.tanh(inputs @ params)
        return lax.pmean(jnp.mean(jnp.sum((pred - targets) ** 2, -1)), "x")

    sl = jax.shard_map(loss, mesh=mesh42(), in_specs=(P(), P("x"), P("x")), out_specs=P(),
                       check_vma=False)
    shapes = [(3, 2), (16, 3), (16, 2)]
    return jax.jit(jax.grad(sl)).lower(*[jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]).as_text()


def _grad_reference(params, inputs, targets):  # type: ignore[no-untyped-def]
    def loss(p):  # type: ignore[no-untyped-def]
        pred = jnp.tanh(inputs @ p)
        return jnp.mean(jnp.sum((pred - targets) ** 2, -1))

    return np.asarray(jax.grad(loss)(params))


def test_grad_batch_parallel_loss_drops_redundant_psum() -> None:
    args = [_arr((3, 2), 1), _arr((16, 3), 2), _arr((16, 2), 3)]
    text = grad_text()
    (before,), counts_before = run_text(text, args)
    module = import_text(text)
    report = remove_redundant_collectives(module)
    assert len(report) == 1 and "multiply by 4" in report.lines()[0]
    (after,), counts_after = run_text(export_text(module), args)
    ref = _grad_reference(*args)
    np.testing.assert_allclose(before, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(after, ref, rtol=1e-5, atol=1e-6)
    assert sum(counts_after.values()) < sum(counts_before.values())
    assert counts_after["all-reduce"] == counts_before["all-reduce"] - 1


@functools.cache
def cursed_twice_text() -> str:
    m = mesh8()
    cursed = jax.shard_map(lambda x: x, mesh=m, in_specs=P(), out_specs=P(), check_vma=False)
    spec = jax.ShapeDtypeStruct((4,), jnp.float32)
    t1 = jax.linear_transpose(cursed, spec)

    def tt(y):  # type: ignore[no-untyped-def]
        return jax.linear_transpose(lambda c: t1(c)[0], spec)(y)[0]

    return jax.jit(tt).lower(spec).as_text()


def test_cursed_identity_transposed_twice_has_no_collectives_left() -> None:
    x = _arr((4,), 7)
    text = cursed_twice_text()
    (before,), counts_before = run_text(text, [x])
    assert counts_before["all-reduce"] >= 1
    module = import_text(text)
    report = remove_redundant_collectives(module)
    assert len(report) == 2
    (after,), counts_after = run_text(export_text(module), [x])
    np.testing.assert_allclose(before, x, rtol=1e-6)
    np.testing.assert_allclose(after, x, rtol=1e-6)
    assert sum(counts_after.values()) == 0


def test_redundant_gather_scatter_and_all_to_all_of_invariant_operands() -> None:
    """all_gather / psum_scatter / all_to_all of an unmapped (invariant) input become local."""
    m = mesh42()

    def body(x):  # type: ignore[no-untyped-def]
        g = lax.all_gather(x, "x", axis=0, tiled=True)
        s = lax.psum_scatter(x, "x", scatter_dimension=0, tiled=True)
        a = lax.all_to_all(x, "y", 1, 0, tiled=True)
        return g, s, a

    f = jax.shard_map(body, mesh=m, in_specs=P(), out_specs=(P(), P("x"), P("y")),
                      check_vma=False)
    text = jax.jit(f).lower(jax.ShapeDtypeStruct((8, 4), jnp.float32)).as_text()
    x = _arr((8, 4), 5)
    before, counts_before = run_text(text, [x])
    module = import_text(text)
    report = remove_redundant_collectives(module)
    assert len(report) == 3, report.lines()
    after, counts_after = run_text(export_text(module), [x])
    for b, a in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert counts_after["reduce-scatter"] == 0 and counts_after["all-to-all"] == 0
    assert sum(counts_after.values()) < sum(counts_before.values())


def test_redundant_reduce_scatter_in_partial_manual_region() -> None:
    f = jax.shard_map(lambda x: lax.psum_scatter(x, "x", scatter_dimension=0, tiled=True),
                      mesh=mesh42(), in_specs=P(), out_specs=P("x"), axis_names={"x"},
                      check_vma=False)
    text = jax.jit(f).lower(jax.ShapeDtypeStruct((8, 4), jnp.float32)).as_text()
    x = _arr((8, 4), 6)
    module = import_text(text)
    assert len(remove_redundant_collectives(module)) == 1
    (after,), counts = run_text(export_text(module), [x])
    np.testing.assert_allclose(after, 4 * x, rtol=1e-6)
    assert counts["reduce-scatter"] == 0


def test_typing_view_is_exposed() -> None:
    module = import_text(lowered("all_gather"))
    value = analyze_variance(module, View.VALUE)
    typing = analyze_variance(module, View.TYPING)
    region = value.regions[0]
    assert value.returned_variance(region) == [{}]
    assert list(typing.returned_variance(typing.regions[0])[0]) == ["x"]


def test_replication_error_is_one_actionable_cli_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    path = tmp_path / "unreplicated.mlir"
    path.write_text(unreplicated_text())
    proc = subprocess.run([sys.executable, "-m", "shardc.tools.cli", "check", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    msg = lines[0]
    for part in ("result 0", 'manual axis "x"', "out_specs[0] = P()", "in_specs[0] = P('x')",
                 'lax.psum (or pmax/pmin) over "x"', 'mention "x" in out_specs[0], e.g. P(\'x\')'):
        assert part in msg, (part, msg)
    ok = subprocess.run([sys.executable, "-m", "shardc.tools.cli", "check",
                         "--no-check-replication", str(path)],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "replication check: skipped" in ok.stdout
