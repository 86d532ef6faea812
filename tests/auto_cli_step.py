"""A `shardc compile --auto` script: the batch annotated, w1 and w2 left to auto, w3 written
replicated (which stays)."""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import shardc  # noqa: E402

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


@shardc.entry(
    jax.ShapeDtypeStruct((16, 128), np.float32),
    jax.ShapeDtypeStruct((128, 256), np.float32),
    jax.ShapeDtypeStruct((256, 128), np.float32),
    jax.ShapeDtypeStruct((128, 8), np.float32),
)
@shardc.jit(mesh=MESH, in_shardings=("x, _", None, None, "_, _"))
def mlp(x, w1, w2, w3):  # noqa: ANN001, ANN201 - a user script
    return (jax.nn.relu(x @ w1) @ w2) @ w3
