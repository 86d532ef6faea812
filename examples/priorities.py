"""Priorities settle a conflict: x wants its dim 0 on "x", w its dim 1 on "x" too.

The output of `x @ w` can take axis "x" from only one of them. With x at p0 and w at p1, the
output rows go to "x"; swapping the priorities gives "x" to the output columns.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import shardc  # noqa: E402

MESH = jax.make_mesh((8,), ("x",))


def matmul(x, w):
    return jax.numpy.tanh(x @ w)


def lower(x_spec: str, w_spec: str, x, w):
    return shardc.jit(matmul, mesh=MESH, in_shardings=(x_spec, w_spec)).lower(x, w)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 32), np.float32)
    w = rng.standard_normal((32, 64), np.float32)
    expected = np.tanh(x @ w)
    results = {}
    for label, xs, ws in (("x wins (x p0, w p1)", "{x}p0, ?", "?, {x}p1"),
                          ("w wins (x p1, w p0)", "{x}p1, ?", "?, {x}p0")):
        lowered = lower(xs, ws, x, w)
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
