"""A shard_map whose output varies along "x" but is declared replicated (out_specs=P())."""

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

import shardc

MESH = AbstractMesh((4,), ("x",), axis_types=(AxisType.Auto,))


@shardc.entry(jax.ShapeDtypeStruct((8, 4), jnp.float32))
@shardc.jit(mesh=MESH)
def local_rows(a):
    return jax.shard_map(lambda b: b * 2, in_specs=P("x"), out_specs=P(), check_vma=False)(a)
