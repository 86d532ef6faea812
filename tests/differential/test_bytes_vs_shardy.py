"""Bytes against jax.jit's: programs where shardc's layout or its compiled form once moved more
collective bytes than Shardy's, compiled by XLA on 8 CPU devices against what jax.jit runs (JAX's
module compiled as it is), numbers checked against the unsharded run.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import shardc

from . import harness as H
from . import hlo_bytes as HB


def _mesh(fsdp: int, mp: int) -> jax.sharding.Mesh:
    return jax.make_mesh((fsdp, mp), ("fsdp", "mp"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def _bytes_and_outs(text: str, args: list[np.ndarray]) -> tuple[int, list[np.ndarray]]:
    exe = H.compile_mlir(text, 8)
    return HB.total_bytes(H.hlo_text(exe)), H.run_executable(exe, args)


def _jax_jit_bytes(text: str) -> int:
    """The bytes of what jax.jit runs: JAX's module compiled as it is, as jax.jit compiles it."""
    return HB.total_bytes(H.hlo_text(H.compile_mlir(text, 8, as_jax_jit=True)))


def _clip_by_global_norm(g1: jax.Array, g2: jax.Array) -> tuple[jax.Array, ...]:
    norm = jnp.sqrt(jnp.sum(g1 * g1) + jnp.sum(g2 * g2))
    return tuple(jnp.where(norm < 1.0, g, g / norm) for g in (g1, g2))


def test_annotate_keeps_a_callee_per_layout_and_no_more_bytes() -> None:
    """Global-norm clipping calls one `@_where` for a `[fsdp, mp]` and an `[mp, fsdp]` gradient:
    pointed back at one callee, the second call site was resharded into the first one's layout
    and back (12,304 B vs Shardy's 16 B); with a copy per layout it moves Shardy's bytes."""
    mesh = _mesh(4, 2)
    sh = (NamedSharding(mesh, P("fsdp", "mp")), NamedSharding(mesh, P("mp", "fsdp")))
    args = [np.random.default_rng(0).standard_normal((64, 64), np.float32) for _ in range(2)]
    text = jax.jit(_clip_by_global_norm, in_shardings=sh, out_shardings=sh).lower(*args).as_text()
    assert text.count("call @_where(") == 2  # one callee, two call sites in JAX's own lowering
    out = shardc.propagate(text)
    assert "call @_where(" in out and "call @_where_0(" in out
    assert "func.func private @_where_0(" in out
    ref = [np.asarray(o) for o in jax.jit(_clip_by_global_norm)(*args)]
    mine, outs = _bytes_and_outs(out, args)
    shardy, _ = _bytes_and_outs(H.shardy_output_for_xla(H.run_shardy(text)), args)
    assert mine <= shardy, (mine, shardy)
    for o, r in zip(outs, ref, strict=True):
        np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-5)


def _take_of_sliced_sum(x: jax.Array, idx: jax.Array) -> jax.Array:
    return jnp.take(jnp.abs(jnp.sum(x, axis=1)[2:3]), idx)


def test_pin_of_a_take_of_a_sharded_sum_moves_no_more_than_jax_jit() -> None:
    """A sharded value passed to `@_take`, whose argument is replicated: XLA reshards the f32[1]
    operand before the gather, and so does the compiled form (it pinned the operand inside the
    callee once, and all-reduced the gathered f32[4] instead)."""
    mesh = _mesh(4, 2)
    sh = (NamedSharding(mesh, P("fsdp", None)), NamedSharding(mesh, P()))
    args = [np.random.default_rng(1).standard_normal((4, 16), np.float32),
            np.zeros((4,), np.int32)]  # fmt: skip
    text = jax.jit(_take_of_sliced_sum, in_shardings=sh).lower(*args).as_text()
    assert "call @_take(" in text
    mine, outs = _bytes_and_outs(shardc.propagate(text, mode="pin"), args)
    assert mine <= _jax_jit_bytes(text), mine
    ref = np.asarray(jax.jit(_take_of_sliced_sum)(*args))
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


def _take_rows_of_sharded_slice(x: jax.Array, idx: jax.Array) -> jax.Array:
    mesh = _mesh(4, 2)
    v = jax.lax.with_sharding_constraint(x * 2.0, NamedSharding(mesh, P(None, "mp")))
    return jnp.take(v[:, 7:10], idx, axis=0)


def test_pin_leaves_a_call_operand_larger_than_its_results_to_xla() -> None:
    """The other side: gathering 2 rows out of an f32[8,3] `[{}, {mp}]` operand into `@_take`
    (replicated argument). Resharded before the call the whole operand is gathered (192 B);
    XLA gathers the f32[2,3] result instead (64 B), and so does the compiled form."""
    args = [np.random.default_rng(2).standard_normal((8, 16), np.float32),
            np.array([1, 5], np.int32)]  # fmt: skip
    text = jax.jit(_take_rows_of_sharded_slice).lower(*args).as_text()
    pinned = shardc.propagate(text, mode="pin")
    before_call = pinned.split("call @_take(", 1)[0].rsplit("\n", 2)[-2]
    assert "sdy.sharding_constraint" not in before_call or "mp" in before_call, before_call
    mine, outs = _bytes_and_outs(pinned, args)
    assert mine <= _jax_jit_bytes(text), mine
    ref = np.asarray(jax.jit(_take_rows_of_sharded_slice)(*args))
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


def test_closed_constraint_on_a_loop_result_leaves_the_loop_alone() -> None:
    """A closed constraint on a fori_loop's result (fuzzer seed 6262 #20, shrunk): Shardy does not
    apply it to the loop result (a data-flow edge target) but sends the result's other uses
    through it, so the loop keeps its operand's `[{X, Y}, {Z}, {}]`. Applied to the result, the
    constraint's Y reached the loop body's contracting dim (3,328 B vs Shardy's 3,072 B, and 3
    of 8 values disagreeing)."""

    mesh = jax.make_mesh((2, 2, 2), ("X", "Y", "Z"), axis_types=(jax.sharding.AxisType.Auto,) * 3)

    def f(x: jax.Array, w: jax.Array) -> jax.Array:
        y = jax.lax.fori_loop(0, 2, lambda i, c: jnp.tanh(c @ w), x)
        jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P(None, None, "Y")))
        return y

    rng = np.random.default_rng(3)
    args = [rng.standard_normal((8, 8, 8), np.float32), rng.standard_normal((8, 8), np.float32)]
    sh = (NamedSharding(mesh, P(("X", "Y"), "Z")), None)
    text = jax.jit(f, in_shardings=sh, keep_unused=True).lower(*args).as_text()
    assert "sdy.sharding_constraint" in text  # (keep_unused: JAX keeps the unused constraint)
    shardy_out = H.run_shardy(text)
    cmp = H.compare(H.read_shardings(shardy_out), H.read_shardings(shardc.propagate(text)))
    assert cmp.agreed == cmp.compared, [str(m) for m in cmp.mismatches]
    mine, outs = _bytes_and_outs(shardc.propagate(text, mode="pin"), args)
    assert mine <= _jax_jit_bytes(text), mine
    np.testing.assert_allclose(outs[0], np.asarray(jax.jit(f)(*args)), rtol=1e-5, atol=1e-5)


def _pad_dropping_a_whole_element(x: jax.Array) -> jax.Array:
    return jnp.tanh(jax.lax.pad(jnp.tanh(x), jnp.float32(0.5), [(0, 0, 0), (-2, 3, 1)]))


def test_a_pad_xla_partitions_is_pinned_sharded() -> None:
    """An interior pad whose negative low edge drops a whole operand element (-2, 3, 1) on a dim
    sharded over 8 devices, in and out: XLA partitions it (64 B), and so does the compiled
    form. It was pinned replicated as a pad hazard (1,024 B)."""
    mesh = jax.make_mesh((8,), ("X",), axis_types=(jax.sharding.AxisType.Auto,))
    sh = NamedSharding(mesh, P(None, "X"))
    args = [np.random.default_rng(4).standard_normal((16, 16), np.float32)]
    text = jax.jit(_pad_dropping_a_whole_element, in_shardings=sh, out_shardings=sh).lower(
        *args
    ).as_text()
    mine, outs = _bytes_and_outs(shardc.propagate(text, mode="pin"), args)
    assert mine <= _jax_jit_bytes(text), mine
    ref = np.asarray(jax.jit(_pad_dropping_a_whole_element)(*args))
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


def _reshape_beside_unused_constraints(x: jax.Array) -> jax.Array:
    mesh = jax.make_mesh((2, 2, 2), ("X", "Y", "Z"), axis_types=(jax.sharding.AxisType.Auto,) * 3)
    y = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("X", "Y")))
    jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P(None, "Z")))
    return jnp.tanh(x.reshape(8, 11))


def _unused_constraints_text() -> tuple[str, list[np.ndarray]]:
    mesh = jax.make_mesh((2, 2, 2), ("X", "Y", "Z"), axis_types=(jax.sharding.AxisType.Auto,) * 3)
    args = [np.random.default_rng(5).standard_normal((2, 4, 11), np.float32)]
    jitted = jax.jit(
        _reshape_beside_unused_constraints, out_shardings=NamedSharding(mesh, P()), keep_unused=True
    )
    text = jitted.lower(*args).as_text()
    assert text.count("sdy.sharding_constraint") == 2  # (kept by JAX here; XLA deletes them)
    return text, args


def test_an_unused_constraint_shards_no_input_where_it_is_dead() -> None:
    """With unused constraints dead (`xla_dead_constraints`: the plan's and the compiled form's
    view, as XLA deletes them) the argument they constrain is replicated, as XLA compiles it;
    Shardy's own pipeline (the default) shards it. The constraint's sharding used to reach the
    argument before propagation (apply-sharding-constraints) even when dead."""
    text, _ = _unused_constraints_text()

    def arg0(out: str) -> str:
        return out.split("%arg0: ", 1)[1].split("]>", 1)[0]

    dead = shardc.PropagationOptions(xla_dead_code=True, xla_dead_constraints=True)
    assert arg0(shardc.propagate(text, options=dead)).endswith("[{}, {}, {}")
    assert arg0(shardc.propagate(text)).endswith('[{"X"}, {"Y"}, {}')


def test_unused_constraints_decide_nothing_in_the_compiled_form() -> None:
    """Two constraints nothing reads, on an argument written without a sharding: XLA's
    dead-code pass deletes them before its Shardy runs, so jax.jit's program keeps the argument
    and the replicated result whole (0 B). Propagated with them, the compiled form sharded
    the argument and gathered the result (352 B)."""
    text, args = _unused_constraints_text()
    mine, outs = _bytes_and_outs(shardc.propagate(text, mode="pin"), args)
    assert mine <= _jax_jit_bytes(text), mine
    ref = np.asarray(jax.jit(_reshape_beside_unused_constraints)(*args))
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


CONCAT = """
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @main(%arg0: tensor<2x4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"X"}, {"Y"}, {}]>})
    -> (tensor<4x4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {}, {"X"}, {}]>}) {
  %0 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<4x4x8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<4x4x8x8xf32>
  return %1 : tensor<4x4x8x8xf32>
}
"""


def test_a_concatenate_is_computed_at_shardys_common_axes() -> None:
    """Operands [{}, {X}, {Y}, {}], result [{Y}, {}, {X}, {}]: Shardy's explicit reshards
    compute the concatenate at [{}, {Y}, {X}, {}] (of two candidates equal in everything else,
    X on dim 1 or on dim 2, the higher factor wins; the concat dim's Y moves to dim 1), and so
    does the export. It chose X on dim 1, [{}, {X}, {Y}, {}], and the compiled form moved more
    than jax.jit's."""
    text = H.tag_module(CONCAT)
    cmp = H.compare(H.read_shardings(H.run_shardy(text)), H.read_shardings(shardc.propagate(text)))
    assert cmp.agreed == cmp.compared, [str(m) for m in cmp.mismatches]
    args = [np.random.default_rng(6).standard_normal((2, 4, 8, 8), np.float32)]
    mine, outs = _bytes_and_outs(shardc.propagate(text, mode="pin"), args)
    assert mine <= _jax_jit_bytes(text), mine
    np.testing.assert_allclose(outs[0], np.tanh(np.concatenate(args * 2)), rtol=1e-5, atol=1e-5)
