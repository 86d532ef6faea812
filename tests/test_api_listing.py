"""`Lowered.listing()` names every value of every function as the printed module does."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp

import shardc

MESH = jax.sharding.AbstractMesh((4, 2), ("x", "y"))


@jax.jit
def _relu(h):
    return jnp.maximum(h, 0.0)


def _mlp(x, w1, w2):
    return _relu(x @ w1) @ w2


def test_listing_covers_callees_with_printed_names() -> None:
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in [(16, 32), (32, 64), (64, 32)]]
    low = shardc.jit(_mlp, mesh=MESH, in_shardings=("x, _", "_, y", None)).lower(*args)
    rows = [line.split()[:2] for line in low.listing().splitlines()[1:]]
    text = low.as_text()
    callee = next(r for r in rows if r[0].startswith("@"))
    assert callee[0] == "@_relu" and callee[1] == "%arg0"
    # every listed name of @main appears in the printed module as a definition or argument
    main_names = [r[0] for r in rows if not r[0].startswith("@")]
    for name in main_names:
        assert re.search(re.escape(name) + r"\b", text), name
    # a value propagation sharded inside the callee is listed with its sharding
    line = next(ln for ln in low.listing().splitlines() if ln.startswith("@_relu %0"))
    assert '{"x"}, {"y"}' in line
