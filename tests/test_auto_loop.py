"""Auto in a training loop: a state leaf that is both an argument and a result (same pytree path,
or donated) gets one layout in and out, and calling again with the outputs runs the program
already compiled (8 virtual CPU devices)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import shardc

from .auto_programs import MESH, fresh, programs


def _entries(f: Any) -> int:
    return len({id(e) for e in f._cache.values()})


def test_params_in_and_out_share_a_layout_and_the_loop_reuses_the_program() -> None:
    prog = next(p for p in programs() if p.name == "MLP train step")
    f = shardc.jit(fresh(prog.fun), mesh=MESH, in_shardings=prog.batch_only, auto=True,
                   memory_budget="1MB")  # fmt: skip
    params, x, y = prog.args()
    lowered = f.lower(params, x, y)
    ins = [s.body() for s in jax.tree.leaves(lowered.in_shardings)][:3]
    outs = [s.body() for s in jax.tree.leaves(lowered.out_shardings)][:3]
    assert ins == outs
    assert any('"' in s for s in ins), "the budget must make auto shard some parameter"
    ref = jax.jit(prog.fun)
    want = (params, 0.0)
    got = (params, 0.0)
    for step in range(3):
        got = f(got[0], x, y)
        want = ref(want[0], x, y)
        assert _entries(f) == 1, f"step {step} compiled again"
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


def _decay(w: Any, x: Any) -> Any:
    return w * 0.5 + (x @ w).sum()


def test_a_donated_argument_leaves_in_its_own_layout() -> None:
    # (the replicated weight and its update need 20 KiB by the plan and by XLA, the update
    # written into the donated weight: 20 KB makes auto shard it)
    f = shardc.jit(_decay, mesh=MESH, in_shardings=(None, "data, _"), auto=True,
                   memory_budget="20KB", donate_argnums=(0,))  # fmt: skip
    w = np.ones((64, 64), np.float32) / 64
    x = np.ones((32, 64), np.float32)
    lowered = f.lower(w, x)
    (w_in, _), (out,) = jax.tree.leaves(lowered.in_shardings), jax.tree.leaves(lowered.out_shardings)
    assert w_in.body() == out.body()
    assert '"' in w_in.body(), "the budget must make auto shard the weight"
    w1 = f(jax.numpy.asarray(w), x)
    w2 = f(w1, x)
    assert _entries(f) == 1
    np.testing.assert_allclose(np.asarray(w2), _decay(_decay(w, x), x), rtol=1e-5)
