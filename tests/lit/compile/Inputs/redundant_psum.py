"""A shard_map whose psum acts on a replicated value: redundant, rewritten by shardc compile."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

import shardc

MESH = jax.sharding.AbstractMesh((4, 2), ("x", "y"))


@shardc.entry(
    jax.ShapeDtypeStruct((4, 4), jnp.float32), jax.ShapeDtypeStruct((8, 4), jnp.float32)
)
@shardc.jit(mesh=MESH, in_shardings=(None, "x, _"))
def scaled(w, x):
    def body(w, x):
        return x * jax.lax.psum(jnp.sum(w * w), "x")

    return jax.shard_map(body, in_specs=(P(), P("x")), out_specs=P("x"), check_vma=False)(w, x)
