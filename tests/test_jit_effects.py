"""Effects and callbacks inside shardc.jit: they import, propagate, compile through JAX (which
registers the host callbacks) and run, on 8 virtual CPU devices."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
X = jnp.arange(128, dtype=jnp.float32).reshape(8, 16)


def test_debug_print_callbacks_and_ordered_io(capsys) -> None:
    seen: list[float] = []
    io_seen: list[tuple[int, ...]] = []

    def fun(x):
        jax.debug.print("total {t}", t=x.sum())
        jax.debug.callback(lambda v: seen.append(float(v)), x[1, 2])
        y = jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        io_callback(lambda a: io_seen.append(a.shape), None, x, ordered=True)
        return (y * 2) @ jnp.ones((16, 4))

    f = shardc.jit(fun, mesh=MESH, in_shardings="x, _")
    text = f.lower(X).as_text()
    assert "xla_ffi_python_cpu_callback" in text and "!stablehlo.token" in text
    out = f(X)
    jax.effects_barrier()
    np.testing.assert_allclose(out, (np.sin(np.asarray(X)) * 2) @ np.ones((16, 4)), rtol=1e-5)
    assert f"total {float(X.sum())}" in capsys.readouterr().out
    assert seen == [float(X[1, 2])]
    assert io_seen == [(8, 16)]
    f(X + 1)  # same signature: cached, and the callbacks run again
    jax.effects_barrier()
    assert len(seen) == 2 and len(f._cache) == 1


def test_zero_result_callback_keeps_its_device_sharding() -> None:
    """A side-effecting custom_call with no result carries one (maximal) sharding, as JAX writes
    it; shardc keeps it on import and export instead of refusing the module."""
    f = shardc.jit(lambda x: (jax.debug.print("{}", x[0, 0]), x + 1)[1], mesh=MESH)
    text = f.lower(X).as_text()
    call = next(line for line in text.splitlines() if "xla_ffi_python_cpu_callback" in line)
    assert "sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>" in call
    assert "-> ()" in call or ": (tensor<f32>) -> ()" in call
