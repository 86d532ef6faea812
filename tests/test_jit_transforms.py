"""A shardc.jit function under JAX transforms acts as an inner jax.jit call whose in/out
shardings are sharding constraints (priorities kept): numbers and gradients equal jax.jit's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
RNG = np.random.default_rng(3)
X = jnp.asarray(RNG.standard_normal((8, 16)), jnp.float32)
W = jnp.asarray(RNG.standard_normal((16, 4)) * 0.1, jnp.float32)


def layer(x, w):
    return jnp.tanh(x @ w)


S_LAYER = shardc.jit(layer, mesh=MESH, in_shardings=("x?p1, _", "_, y"), out_shardings="x, ?")
J_LAYER = jax.jit(layer)


def loss(f):
    return lambda w, x: (f(x, w) ** 2).sum()


def close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_outer_jit_sees_constraints_with_priorities() -> None:
    text = jax.jit(lambda x, w: S_LAYER(x, w) * 2).lower(X, W).as_text()
    assert 'sdy.sharding_constraint %arg0 <@mesh, [{"x", ?}p1, {}]>' in text
    assert 'sdy.sharding_constraint %arg1 <@mesh, [{}, {"y"}]>' in text
    assert '<@mesh, [{"x"}, {?}]>' in text
    close(jax.jit(lambda x, w: S_LAYER(x, w) * 2)(X, W), J_LAYER(X, W) * 2)


def test_grad_value_and_grad_checkpoint_vmap() -> None:
    close(jax.grad(loss(S_LAYER))(W, X), jax.grad(loss(J_LAYER))(W, X))
    v, g = jax.value_and_grad(loss(S_LAYER))(W, X)
    v_ref, g_ref = jax.value_and_grad(loss(J_LAYER))(W, X)
    close(v, v_ref)
    close(g, g_ref)
    close(jax.grad(jax.checkpoint(loss(S_LAYER)))(W, X), g_ref)
    xs = jnp.stack([X, 2 * X])
    close(jax.vmap(S_LAYER, in_axes=(0, None))(xs, W), jax.vmap(J_LAYER, in_axes=(0, None))(xs, W))


def test_scan_and_fori_loop_bodies() -> None:
    # the body closes over concrete arrays: no tracer argument, but JAX is tracing
    def body(c, _):
        return c + S_LAYER(X, W).sum(), None

    ref = 3 * J_LAYER(X, W).sum()
    close(jax.lax.scan(body, 0.0, None, length=3)[0], ref)
    close(jax.lax.fori_loop(0, 3, lambda i, c: c + S_LAYER(X * 1.0, W).sum(), 0.0), ref)
    # and a carried tracer
    out, _ = jax.lax.scan(lambda x, _: (S_LAYER(x, W) @ W.T, None), X, None, length=2)
    ref_out, _ = jax.lax.scan(lambda x, _: (J_LAYER(x, W) @ W.T, None), X, None, length=2)
    close(out, ref_out)


def test_grads_through_a_jitted_helper_inside_shardc_jit() -> None:
    """A training step written for jax.jit: grads taken through a shardc.jit helper, the whole
    step itself a shardc.jit function; the helper's shardings join the outer propagation."""
    step = shardc.jit(lambda w, x: w - 0.1 * jax.grad(loss(S_LAYER))(w, x), mesh=MESH)
    ref = jax.jit(lambda w, x: w - 0.1 * jax.grad(loss(J_LAYER))(w, x))
    close(step(W, X), ref(W, X))
    assert 'sdy.sharding_constraint' in step.lower(W, X).as_text()


def test_static_arguments_and_keywords_inside_a_trace() -> None:
    f = shardc.jit(lambda x, n, *, w: jnp.tanh(x @ w) * n, mesh=MESH, static_argnums=1,
                   in_shardings="x, _")
    g = jax.jit(lambda x, w: f(x, 3, w=w).sum())
    close(g(X, W), (J_LAYER(X, W) * 3).sum())
    close(jax.grad(lambda w: f(X, 2, w=w).sum())(W), jax.grad(lambda w: (J_LAYER(X, w) * 2).sum())(W))


def test_non_dividing_shardings_raise_inside_a_trace_too() -> None:
    f = shardc.jit(lambda v: v + 1, mesh=MESH, in_shardings="x")
    with pytest.raises(shardc.ShardcError, match=r"argument v \(in_shardings = .*\): dim 0 of size 6 .*4 does not divide 6"):
        jax.jit(f)(jnp.ones(6))
