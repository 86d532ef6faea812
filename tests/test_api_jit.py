"""shardc.jit end to end on 8 virtual CPU devices, and its error paths."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"))


def layer(x, w):
    return jnp.tanh(shardc.constrain(x @ w, "x?, ?"))


def test_lower_compile_call() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 4), np.float32)
    f = shardc.jit(layer, mesh=MESH, in_shardings=("x, _", "_, y"), out_shardings="x?p1, ?")
    low = f.lower(x, w)
    text = low.as_text()
    assert 'sdy.sharding_constraint' in text and '#sdy.sharding<@mesh, [{"x"}, {}]>' in text
    assert "pin" and "sdy.sharding_constraint" in low.as_text(mode="pin")
    assert '"func.func"' in low.as_text("generic")
    assert low.module is not None and low.ir.funcs["main"] is not None
    assert str(low.in_shardings[0]) == '#sdy.sharding<@mesh, [{"x"}, {}]>'
    listing = low.listing()
    assert "stablehlo.dot_general" in listing and "test_api_jit.py:14" in listing
    assert "0,1" in low.show("%arg0", print_it=False)
    y = low.compile()(x, w)
    np.testing.assert_allclose(np.asarray(y), np.tanh(x @ w), rtol=1e-5, atol=1e-5)
    y2 = f(jnp.asarray(x), w)  # direct call: compiles once per signature
    np.testing.assert_allclose(np.asarray(y2), np.tanh(x @ w), rtol=1e-5, atol=1e-5)
    f(x, w)
    assert len(f._cache) == 1
    with pytest.raises(shardc.ShardcError, match="compiled for"):
        low.compile()(x[:4], w)


def test_pytrees_static_and_decorator() -> None:
    @shardc.jit(mesh="x=4,y=2", in_shardings=({"a": "x", "b": None},), static_argnums=1)
    def f(d, scale):
        return {"out": d["a"] * scale + d["b"]}

    a = np.arange(8, dtype=np.float32)
    out = f({"a": a, "b": a}, 3.0)
    np.testing.assert_allclose(np.asarray(out["out"]), a * 4)
    assert out["out"].sharding.spec == jax.sharding.PartitionSpec("x")


def test_abstract_pod_lowers_but_does_not_run() -> None:
    pod = jax.sharding.AbstractMesh((16, 16), ("x", "y"))
    f = shardc.jit(lambda a: a + 1, mesh=pod, in_shardings="x, y")
    low = f.lower(jax.ShapeDtypeStruct((32, 32), jnp.float32))
    assert "mhlo.num_partitions = 256" in low.as_text()
    with pytest.raises(shardc.ShardcError, match="248 missing"):
        low.compile()


@pytest.mark.parametrize("kwargs,message", [
    ({"in_shardings": ("z, _", None)}, 'names axis "z"'),
    ({"in_shardings": ("x, _, _", None)}, "has 3 dims"),
    ({"in_shardings": ("x", None, None)}, "shardings"),
    ({"out_shardings": "x?p01"}, "leading zeros"),
])
def test_bad_shardings(kwargs: dict, message: str) -> None:
    x = jax.ShapeDtypeStruct((8, 16), jnp.float32)
    w = jax.ShapeDtypeStruct((16, 4), jnp.float32)
    with pytest.raises(shardc.ShardcError, match=message):
        shardc.jit(layer, mesh=MESH, **kwargs).lower(x, w)


def test_no_mesh_and_unknown_value() -> None:
    with pytest.raises(shardc.ShardcError, match="needs a mesh"):
        shardc.jit(layer)
    low = shardc.jit(layer, mesh=MESH).lower(np.ones((8, 16), np.float32), np.ones((16, 4), np.float32))
    with pytest.raises(shardc.ShardcError, match="no value named"):
        low.show("%99")
    with pytest.raises(shardc.ShardcError, match="format"):
        low.as_text("fancy")


def test_options_strategy() -> None:
    from shardc.passes.propagation.options import PropagationOptions

    x = jax.ShapeDtypeStruct((8, 16), jnp.float32)
    w = jax.ShapeDtypeStruct((16, 4), jnp.float32)
    f = shardc.jit(layer, mesh=MESH, in_shardings=("x, _", None),
                   options=PropagationOptions(strategy="basic"))
    assert "sdy.sharding" in f.lower(x, w).as_text()
    assert "sdy.sharding" in f.lower(x, w, strategy="aggressive").as_text()
