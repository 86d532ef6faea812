"""Entries whose specs a user would get wrong: an axis the mesh lacks, a priority typo."""

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh

import shardc

MESH = AbstractMesh((4, 2), ("x", "y"))
X = jax.ShapeDtypeStruct((8, 16), jnp.float32)


@shardc.entry(X, name="unknown_axis")
@shardc.jit(mesh=MESH, in_shardings="z, _")
def unknown_axis(a):
    return a + 1


@shardc.entry(X, name="priority_typo")
@shardc.jit(mesh=MESH, in_shardings="x p1, _")
def priority_typo(a):
    return a + 1


@shardc.entry(X, name="rank")
@shardc.jit(mesh=MESH, out_shardings="x, _, _")
def rank(a):
    return a + 1
