"""Entries for the `shardc compile --pin` test: one XLA derives alone, one it could not."""

import jax
import jax.numpy as jnp

import shardc

MESH = jax.sharding.AbstractMesh((4, 2), ("x", "y"))
F32 = jnp.float32


@shardc.entry(jax.ShapeDtypeStruct((8, 16), F32), jax.ShapeDtypeStruct((16, 32), F32))
@shardc.jit(mesh=MESH, in_shardings=("x, _", "_, y"))
def agree(x, w):
    return jnp.tanh(x @ w)


@shardc.entry(jax.ShapeDtypeStruct((8, 16), F32), jax.ShapeDtypeStruct((16, 32), F32))
@shardc.jit(mesh=MESH, in_shardings=("x, _", "_, x"))
def conflict(x, w):
    return jnp.tanh(x @ w)


if __name__ == "__main__":
    raise SystemExit("not run by shardc compile")
