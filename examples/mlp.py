"""Seed 001's MLP: data parallel on x, megatron on y; w2 is left to propagation.

Prints the propagated module and the grid of w2, runs on 8 CPU devices and checks the numbers.
`shardc compile examples/mlp.py --show %arg2` prints the same module and grid from the CLI.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import shardc  # noqa: E402

# Auto axes: shardc propagates over them. On Explicit axes (jax.make_mesh's default) a
# value's sharding is part of its type and JAX decides it op by op, leaving nothing to
# propagate (shardc.jit then keeps JAX's types, as jax.jit does).
MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


@shardc.entry(  # for `shardc compile examples/mlp.py`: example arguments (shapes only)
    jax.ShapeDtypeStruct((16, 32), np.float32),
    jax.ShapeDtypeStruct((32, 64), np.float32),
    jax.ShapeDtypeStruct((64, 32), np.float32),
)
@shardc.jit(mesh=MESH, in_shardings=("x, _", "_, y", None), out_shardings="x, _")
def mlp(x, w1, w2):
    h = jax.nn.relu(x @ w1)  # [batch on x, hidden on y]
    return h @ w2  # w2's sharding comes from propagation: [{"y"}, {}]


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 32), np.float32)
    w1 = rng.standard_normal((32, 64), np.float32)
    w2 = rng.standard_normal((64, 32), np.float32)
    lowered = mlp.lower(x, w1, w2)
    print(lowered.as_text())
    print(lowered.listing())
    lowered.show("%arg2")
    y = lowered.compile()(x, w1, w2)
    expected = np.maximum(x @ w1, 0) @ w2
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-3)
    print("w2:", lowered.in_shardings[2], " output:", y.sharding)
    print("OK: sharded result equals the unsharded one")


if __name__ == "__main__":
    main()
