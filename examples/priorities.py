"""Priorities settle a conflict: x wants its dim 0 on "x", w its dim 1 on "x" too.

The output of `x @ w` can take axis "x" from only one of them. With x at p0 and w at p1, the
output rows go to "x"; swapping the priorities gives "x" to the output columns.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import shardc  # noqa: E402

# Auto axes: shardc propagates over them. On Explicit axes (jax.make_mesh's default) a
# value's sharding is part of its type and JAX decides it op by op, leaving nothing to
# propagate (shardc.jit then keeps JAX's types, as jax.jit does).
MESH = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))


def matmul(x, w):
    return jax.numpy.tanh(x @ w)


X_WINS = ("{x}p0, ?", "?, {x}p1")  # x's wish is stronger: output rows on "x"
W_WINS = ("{x}p1, ?", "?, {x}p0")  # w's wish is stronger: output columns on "x"
ARGS = (jax.ShapeDtypeStruct((16, 32), np.float32), jax.ShapeDtypeStruct((32, 64), np.float32))
# `shardc compile examples/priorities.py --show %1` prints both modules and both grids.
x_wins = shardc.entry(*ARGS, name="x_wins")(shardc.jit(matmul, mesh=MESH, in_shardings=X_WINS))
w_wins = shardc.entry(*ARGS, name="w_wins")(shardc.jit(matmul, mesh=MESH, in_shardings=W_WINS))


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 32), np.float32)
    w = rng.standard_normal((32, 64), np.float32)
    expected = np.tanh(x @ w)
    results = {}
    for label, fun in (("x wins (x p0, w p1)", x_wins), ("w wins (x p1, w p0)", w_wins)):
        lowered = fun.lower(x, w)
        out = lowered.out_shardings[0]
        results[label] = out
        print(f"{label}: output {out}")
        lowered.show("%1")
        y = lowered.compile()(x, w)
        np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-4)
    first, second = results.values()
    assert first != second, "the two priority orders should settle the conflict differently"
    print("OK: both runs equal the unsharded result; the conflict was settled two ways")


if __name__ == "__main__":
    main()
