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
    with pytest.raises(shardc.ShardcError, match=r"argument v \(in_shardings = .*\) splits dim 0 of size 6 .*4 does not divide 6"):
        jax.jit(f)(jnp.ones(6))


# --- the shardings and devices jax.jit's own inner call runs with (issue: never one device) ---

D_MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
NS = jax.sharding.NamedSharding
P = jax.sharding.PartitionSpec
IN = (NS(D_MESH, P("data")), NS(D_MESH, P(None, "model")))
OUT = NS(D_MESH, P("data", "model"))
S_D = shardc.jit(layer, mesh=D_MESH, in_shardings=IN, out_shardings=OUT)
J_D = jax.jit(layer, in_shardings=IN, out_shardings=OUT)
X2 = jnp.stack([X, -X])

TRANSFORMS = {
    "vjp": lambda g: (lambda y_f: (y_f[0], *y_f[1](jnp.ones_like(y_f[0]))))(jax.vjp(g, X, W)),
    "grad": lambda g: jax.grad(lambda x, w: (g(x, w) ** 2).sum(), argnums=(0, 1))(X, W),
    "value_and_grad": lambda g: jax.value_and_grad(lambda w: g(X, w).sum())(W),
    "jvp": lambda g: jax.jvp(g, (X, W), (X, W)),
    "vmap": lambda g: jax.vmap(g, in_axes=(0, None))(X2, W),
    "scan": lambda g: jax.lax.scan(lambda c, _: (g(c, W) @ W.T, c.sum()), X, None, length=2),
    "jit": lambda g: jax.jit(lambda x, w: g(x, w) * 2)(X, W),
    "jit under set_mesh": lambda g: _under_mesh(lambda: jax.jit(lambda x, w: g(x, w) * 2)(X, W)),
    "grad in jit": lambda g: jax.jit(jax.grad(lambda w: g(X, w).sum()))(W),
}


def _under_mesh(thunk):
    with jax.set_mesh(D_MESH):
        return thunk()


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transformed_calls_run_sharded_as_jax_jits(name: str) -> None:
    got, ref = TRANSFORMS[name](S_D), TRANSFORMS[name](J_D)
    for g, r in zip(jax.tree.leaves(got), jax.tree.leaves(ref), strict=True):
        close(g, r)
        assert g.sharding.device_set == r.sharding.device_set and len(g.sharding.device_set) == 8
        assert g.sharding.is_equivalent_to(r.sharding, g.ndim), (name, g.sharding, r.sharding)


def test_open_specs_under_eager_grad_still_run_on_the_mesh() -> None:
    """Nothing JAX can name (an open dim with a priority): the call still runs on the mesh's
    8 devices under an eager transform, not on one."""
    f = shardc.jit(layer, mesh=D_MESH, in_shardings=("data?p1, ?", None))
    y, vjp = jax.vjp(f, X, W)
    gx, gw = vjp(jnp.ones_like(y))
    for v in (y, gx, gw):
        assert len(v.sharding.device_set) == 8
    close(gw, jax.vjp(J_LAYER, X, W)[1](jnp.ones_like(y))[1])
    assert jax.jit(lambda x, w: f(x, w) * 2).lower(X, W).compile().as_text().count("ENTRY") == 1
    assert len(jax.jit(lambda x, w: f(x, w) * 2)(X, W).sharding.device_set) == 8


@pytest.mark.parametrize("name", ["vjp", "vmap", "jit", "scan"])
def test_transformed_calls_on_an_explicit_mesh_type_as_jax_jits(name: str) -> None:
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    ins = (NS(mesh, P("data")), NS(mesh, P(None, "model")))
    s = shardc.jit(layer, mesh=mesh, in_shardings=ins)
    j = jax.jit(layer, in_shardings=ins)
    got, ref = TRANSFORMS[name](s), TRANSFORMS[name](j)
    for g, r in zip(jax.tree.leaves(got), jax.tree.leaves(ref), strict=True):
        close(g, r)
        assert jax.typeof(g) == jax.typeof(r) and g.sharding.is_equivalent_to(r.sharding, g.ndim)
