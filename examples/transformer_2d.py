"""Seed 003's "2D finalized" transformer FFN sublayer on a 2x4 mesh with logical axis rules.

Activations are [batch on X, embed on Y]; weights are sharded on both axes
(kernel axes ("embed_kernel", "hidden") and ("hidden", "embed_kernel")).
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import shardc  # noqa: E402

# Auto axes: shardc propagates over them. On Explicit axes (jax.make_mesh's default) a
# value's sharding is part of its type and JAX decides it op by op, leaving nothing to
# propagate (shardc.jit then keeps JAX's types, as jax.jit does).
MESH = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
RULES = [("batch", "X"), ("hidden", "Y"), ("heads", "Y"), ("embed_kernel", "X"), ("embed", "Y")]


def L(*names):  # noqa: N802 - reads like flax's logical axis annotations
    """A logical spec resolved with RULES (or use `with shardc.axis_rules(RULES):` around
    tracing and plain `shardc.logical(...)`)."""
    return shardc.logical(*names, rules=RULES)


def ffn(x, w_in, w_out):
    residual = x
    mean = x.mean(-1, keepdims=True)
    x = (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    x = jnp.einsum("bse,eh->bsh", x, shardc.constrain(w_in, L("embed_kernel", "hidden")))
    x = shardc.constrain(x, L("batch", None, "hidden"))
    x = jax.nn.gelu(x, approximate=False)
    x = jnp.einsum("bsh,he->bse", x, shardc.constrain(w_out, L("hidden", "embed_kernel")))
    x = shardc.constrain(x, L("batch", None, "embed"))
    return residual + x


# Only the activations are annotated at the boundary; the weights' shardings come from the
# constraints inside `ffn`. `shardc compile examples/transformer_2d.py --show %arg1` shows w_in.
layer = shardc.entry(
    jax.ShapeDtypeStruct((8, 16, 32), np.float32),
    jax.ShapeDtypeStruct((32, 128), np.float32),
    jax.ShapeDtypeStruct((128, 32), np.float32),
    name="ffn",
)(shardc.jit(ffn, mesh=MESH, in_shardings=(L("batch", None, "embed"), None, None),
             out_shardings=L("batch", None, "embed")))


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 32), np.float32)
    w_in = rng.standard_normal((32, 128), np.float32) * 0.1
    w_out = rng.standard_normal((128, 32), np.float32) * 0.1
    lowered = layer.lower(x, w_in, w_out)
    print(lowered.as_text())
    print("w_in:", lowered.in_shardings[1], " w_out:", lowered.in_shardings[2])
    shardc.visualize_sharding(lowered.in_shardings[1], (32, 128), MESH)
    y = lowered.compile()(x, w_in, w_out)
    expected = ffn_plain(x, w_in, w_out)
    np.testing.assert_allclose(np.asarray(y), np.asarray(expected), rtol=1e-4, atol=1e-4)
    print("output:", y.sharding)
    print("OK: sharded result equals the unsharded one")


def ffn_plain(x, w_in, w_out):
    """The unsharded reference: eagerly, where the constraints are identities."""
    return ffn(x, w_in, w_out)


if __name__ == "__main__":
    main()
