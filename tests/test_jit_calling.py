"""shardc.jit as a drop-in jax.jit: calling convention, cache, committed arrays, honest layouts,
donation and the Compiled API, each checked against jax.jit on 8 virtual CPU devices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
RNG = np.random.default_rng(0)
X = jnp.asarray(RNG.standard_normal((8, 16)), jnp.float32)
W = jnp.asarray(RNG.standard_normal((16, 4)), jnp.float32)


def mm(a, b, *, scale=1.0):
    return (a @ b) * scale


def test_keywords_statics_scalars_and_keys() -> None:
    f = shardc.jit(mm, mesh=MESH, in_shardings=("x, _", None))
    ref = np.asarray(X @ W)
    out = f(X, b=W)  # a keyword filling a positional parameter: in_shardings still covers it
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert out.sharding.spec == P("x")
    np.testing.assert_allclose(f(X, W, scale=2.0), 2 * ref, rtol=1e-5)
    # a Python scalar is weak typed, as under jax.jit: float32 in, float32 out, no error
    g = shardc.jit(lambda a, s: a * s, mesh=MESH)
    assert g(X, 2.0).dtype == jax.jit(lambda a, s: a * s)(X, 2.0).dtype == jnp.float32
    assert g(X.astype(jnp.bfloat16), 2.0).dtype == jnp.bfloat16
    # static by name and by number, resolved both ways
    h = shardc.jit(lambda a, n: a * n, mesh=MESH, static_argnames="n")
    np.testing.assert_allclose(h(X, n=3), 3 * X)
    np.testing.assert_allclose(h(X, 3), 3 * X)
    assert len(h._cache) == 1  # n=3 fills the positional parameter: one signature
    # typed PRNG keys (an extended dtype that numpy cannot hold)
    def noisy(k, a):
        return a + jax.random.normal(k, a.shape)

    k = jax.random.key(0)
    out = shardc.jit(noisy, mesh=MESH, in_shardings=(None, "x, y"))(k, X)
    np.testing.assert_allclose(out, jax.jit(noisy)(k, X), rtol=1e-6)
    assert out.sharding.spec == P("x", "y")


def test_any_pytree_and_the_cache_key() -> None:
    from typing import NamedTuple

    class Params(NamedTuple):
        w: jax.Array
        b: jax.Array

    def step(p, batch):
        return {"y": batch["x"] @ p.w + p.b}

    f = shardc.jit(step, mesh=MESH, in_shardings=(Params("_, y", None), {"x": "x, _"}))
    p = Params(W, jnp.zeros(4))
    out = f(p, {"x": X})
    np.testing.assert_allclose(out["y"], X @ W, rtol=1e-5)
    f(p, {"x": np.asarray(X)})  # numpy array: same abstract signature, no recompile
    f(p, {"x": X + 1})
    assert len(f._cache) == 1
    f(p, {"x": X[:4]})
    assert len(f._cache) == 2


def test_two_wrappers_keep_two_caches() -> None:
    a = shardc.jit(mm, mesh=MESH, in_shardings=("x, _", None))
    b = shardc.jit(mm, mesh=MESH)
    assert a(X, W).sharding.spec == P("x")
    assert b(X, W).sharding.spec != P("x")  # b's own propagation, not a's cached layout


def test_committed_arrays_keep_their_layout_or_raise() -> None:
    xc = jax.device_put(X, NamedSharding(MESH, P("y", "x")))
    f = shardc.jit(lambda a: a * 2, mesh=MESH)
    out = f(xc)
    assert out.sharding.spec == jax.jit(lambda a: a * 2)(xc).sharding.spec == P("y", "x")
    with pytest.raises(shardc.ShardcError, match=r"(?s)argument a is a jax.Array committed to "
                       r"P\('y', 'x'\).*in_shardings gives .*\{\"x\"\}.*fix: .*device_put"):
        shardc.jit(lambda a: a * 2, mesh=MESH, in_shardings="x")(xc)
    # the same layout in in_shardings is no conflict
    assert shardc.jit(lambda a: a * 2, mesh=MESH, in_shardings="y, x")(xc).sharding.spec == P("y", "x")


def test_non_dividing_shardings_raise_with_the_path() -> None:
    f = shardc.jit(lambda d: d["v"] + 1, mesh=MESH, in_shardings=({"v": "x"},))
    with pytest.raises(shardc.ShardcError, match=r"(?s)argument d\['v'\] .*splits dim 0 of size 6 "
                       r"\(shape \(6,\)\) over axes x .*\(4 shards\), and 4 does not divide 6"
                       r".*fix: pad dim 0 to a multiple of 4"):
        f({"v": jnp.ones(6)})
    g = shardc.jit(lambda a: {"o": a[:6]}, mesh=MESH, out_shardings={"o": "x"})
    with pytest.raises(shardc.ShardcError, match=r"output\['o'\] \(out_shardings = .*\) splits dim 0 "
                       r"of size 6 \(shape \(6,\)\) over axes x .*4 does not divide 6"):
        g(jnp.ones(8))
    # the abstract (pod-sized) lowering checks too
    pod = jax.sharding.AbstractMesh((16, 16), ("x", "y"))
    with pytest.raises(shardc.ShardcError, match=r"dim 0 of size 8 .*16 shards"):
        shardc.jit(lambda a: a, mesh=pod, in_shardings="x").lower(jax.ShapeDtypeStruct((8,), jnp.float32))


def test_donation_aliases_and_deletes() -> None:
    s = NamedSharding(MESH, P("x"))
    f = shardc.jit(lambda a, b: a + b, mesh=MESH, donate_argnames="a")
    a = jax.device_put(jnp.ones((8, 16)), s)
    out = f(a, X)
    assert a.is_deleted()
    np.testing.assert_allclose(out, X + 1)
    compiled = f.lower(jax.device_put(jnp.ones((8, 16)), s), X).compile()
    assert "input_output_alias" in compiled.as_text()
    assert compiled.memory_analysis().alias_size_in_bytes > 0


def test_compiled_api() -> None:
    f = shardc.jit(mm, mesh=MESH, in_shardings=("x, _", "_, y"))
    low = f.lower(X, W)
    compiled = low.compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    assert cost["flops"] > 0
    assert compiled.memory_analysis().argument_size_in_bytes > 0
    assert "dot(" in compiled.as_text() or "dot." in compiled.as_text()
    ins, _ = compiled.input_shardings
    assert ins[0].spec == P("x") and ins[1].spec == P(None, "y")
    assert compiled.output_shardings.spec == P("x", "y")
    np.testing.assert_allclose(compiled(X, W), X @ W, rtol=1e-5)
    with pytest.raises(shardc.ShardcError, match="compiled for"):
        compiled(X[:4], W)
    # compiler options reach XLA (an unknown one is refused by name)
    opt = low.compile(compiler_options={"xla_embed_ir_in_executable": True})
    np.testing.assert_allclose(opt(X, W), X @ W, rtol=1e-5)
    with pytest.raises(shardc.ShardcError, match="no_such_option"):
        low.compile(compiler_options={"no_such_option": 1})


@pytest.mark.parametrize("kwargs,message", [
    ({"static_argnames": "zz"}, "names 'zz', which is not a parameter of mm"),
    ({"static_argnums": 0, "donate_argnums": 0}, "both static and donated"),
    ({"static_argnums": "a"}, "static_argnums = 'a'"),
])
def test_argspec_mistakes(kwargs: dict, message: str) -> None:
    with pytest.raises(shardc.ShardcError, match=message):
        shardc.jit(mm, mesh=MESH, **kwargs)


def test_unhashable_static_and_non_array_arguments() -> None:
    f = shardc.jit(lambda a, n: a * len(n), mesh=MESH, static_argnums=1)
    with pytest.raises(shardc.ShardcError, match=r"static argument 1 = \[1, 2\] of type list is not hashable"):
        f(X, [1, 2])
    g = shardc.jit(lambda a, n: a, mesh=MESH)
    with pytest.raises(shardc.ShardcError, match="argument n = 'text' of type str is not an array"):
        g(X, "text")


def test_lower_takes_what_jax_lower_takes() -> None:
    """ShapeDtypeStructs with a sharding are laid out by it; a compiled function takes the
    dynamic arguments (as jax's) or the full list given to .lower()."""
    sds = jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=NamedSharding(MESH, P(None, "y")))
    f = shardc.jit(lambda a, n: a * n, mesh=MESH, static_argnums=1)
    low = f.lower(sds, 3)
    assert str(low.in_shardings[0]) == '#sdy.sharding<@mesh, [{}, {"y"}]>'
    compiled = low.compile()
    xs = jax.device_put(X, NamedSharding(MESH, P(None, "y")))
    np.testing.assert_allclose(compiled(xs), 3 * X)
    np.testing.assert_allclose(compiled(xs, 3), 3 * X)


@pytest.mark.parametrize("make,kind,message", [
    (lambda: shardc.jit(mm, mesh=MESH, donate_argnums=(5,))(X, W), ValueError,
     r"donate_argnums=\(5,\) names argument 5, but mm was given 2 positional arguments"),
    (lambda: shardc.jit(mm, mesh=MESH, static_argnums=(5,))(X, W), ValueError,
     r"static_argnums=\(5,\) names argument 5"),
    (lambda: shardc.jit(mm, mesh=MESH, static_argnames="zz"), ValueError, "names 'zz'"),
    (lambda: shardc.jit(mm, mesh=MESH, static_argnums="a"), TypeError, "'a' is not an int"),
    (lambda: shardc.jit(mm, mesh=MESH, static_argnums=1)(X, [1]), ValueError,
     r"static argument 1 = \[1\] of type list is not hashable"),
    (lambda: shardc.jit(mm, mesh=MESH)(X, "text"), TypeError, "argument b = 'text'"),
    (lambda: shardc.jit(3, mesh=MESH), TypeError, "'int' object is not callable"),
    (lambda: shardc.jit(lambda a: a, mesh=MESH, in_shardings=("x", "x"))(X), ValueError,
     r"in_shardings = \('x', 'x'\) does not match the structure of the inputs"),
    (lambda: shardc.jit(lambda v: v, mesh=MESH, in_shardings="x")(jnp.ones(6)), ValueError,
     r"argument v .*4 does not divide 6"),
    (lambda: shardc.jit(mm, mesh=MESH).lower(X, W).compile()(X[:4], W), TypeError,
     "compiled for"),
])
def test_mistakes_are_the_errors_jax_jit_raises(make, kind, message) -> None:
    """Each mistake is a ShardcError naming the user's argument, and also the ValueError or
    TypeError jax.jit raises for it (code that catches JAX's errors keeps working)."""
    with pytest.raises(shardc.ShardcError, match=message) as info:
        make()
    assert isinstance(info.value, kind)
