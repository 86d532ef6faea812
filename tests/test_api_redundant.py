"""The compile path of `shardc.jit` rewrites redundant collectives (on by default in the
compile paths, off in `propagate`), and the rewrite keeps the numbers."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def _redundant_psum(w, x):
    def body(w, x):
        # w is replicated (P()), so psum over "x" of a w-only value is 4 * value: redundant
        scale = jax.lax.psum(jnp.sum(w * w), "x")
        return x * scale

    return jax.shard_map(
        body, in_specs=(P(), P("x")), out_specs=P("x"), check_vma=False
    )(w, x)


def _all_reduces(compiled: shardc.Compiled) -> int:
    return len(re.findall(r"\sall-reduce(-start)?\(", compiled.as_text()))


def test_compile_removes_the_redundant_psum_and_keeps_the_numbers() -> None:
    w = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    want = np.asarray(jax.jit(lambda w, x: x * (4 * jnp.sum(w * w)))(w, x))

    rewritten = shardc.jit(_redundant_psum, mesh=MESH, in_shardings=(None, "x, _"))
    low = rewritten.lower(w, x)
    fast = low.compile()
    assert any("all_reduce" in line for line in low.removed_collectives), low.removed_collectives
    assert "stablehlo.all_reduce" in low.as_text()  # the traced module itself is unchanged

    kept = shardc.jit(
        _redundant_psum, mesh=MESH, in_shardings=(None, "x, _"), remove_redundant_collectives=False
    ).lower(w, x).compile()
    assert _all_reduces(fast) < _all_reduces(kept)
    np.testing.assert_allclose(np.asarray(fast(w, x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(kept(w, x)), want, rtol=1e-5)
