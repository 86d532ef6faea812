"""A mixture-of-experts layer trained on its own: top-k routing with a capacity per expert,
dispatch and combine written as einsums over one-hot tensors (GShard / Switch style), experts
sharded over the `expert` mesh axis.

Tokens come in groups (`x[groups, group_size, d]`, groups over `(data, expert)`); the dispatch
einsum moves each group's tokens to their experts (`[experts, groups, capacity, d]`, experts
constrained onto `expert`: an all-to-all), each expert runs its GELU MLP, and the combine einsum
brings the outputs back weighted by the router's gates. The loss is the squared error of the
residual output against a target plus the load-balancing loss; AdamW.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .common import constrainer, f32, fill, specs_by_rules
from .harness import Step
from .train import adamw_step

MESH_AXES = {"data": 2, "expert": 4}
RULES = (
    ("router", P()),
    ("w_in", P("expert", None, None)),
    ("w_out", P("expert", None, None)),
)
GROUPS = P(("data", "expert"))
DISPATCHED = P("expert", "data")


@dataclass(frozen=True)
class Size:
    experts: int = 8
    top_k: int = 2
    capacity_factor: float = 1.25
    dim: int = 32
    ffn: int = 64
    groups: int = 8
    group_size: int = 16


def capacity(size: Size) -> int:
    return int(np.ceil(size.top_k * size.group_size * size.capacity_factor / size.experts))


def route(logits: jax.Array, size: Size) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The dispatch `[g, s, e, c]` (0/1), combine `[g, s, e, c]` (gate weights) tensors and the
    router's probabilities, for router `logits[g, s, e]`: each token goes to its top-k experts
    in order of choice, into the next free slot while the expert has capacity."""
    g, s, e = logits.shape
    probs = jax.nn.softmax(logits, axis=-1)
    gates, experts = jax.lax.top_k(probs, size.top_k)  # [g, s, k]
    choice = jax.nn.one_hot(experts, e, dtype=jnp.float32)  # [g, s, k, e]
    # slots fill by choice rank first (every first choice before any second), then by token
    ordered = choice.transpose(0, 2, 1, 3).reshape(g, size.top_k * s, e).astype(jnp.int32)
    slot = (jnp.cumsum(ordered, axis=1) - 1) * ordered
    slot = slot.reshape(g, size.top_k, s, e).transpose(0, 2, 1, 3)  # [g, s, k, e]
    kept = choice * (slot < capacity(size))
    in_slot = jax.nn.one_hot(slot, capacity(size), dtype=jnp.float32)  # [g, s, k, e, c]
    dispatch = jnp.einsum("gske,gskec->gsec", kept, in_slot)
    combine = jnp.einsum("gske,gsk,gskec->gsec", kept, gates, in_slot)
    return dispatch, combine, probs


def moe_layer(params: dict[str, jax.Array], x: jax.Array, size: Size, mesh: Mesh
              ) -> tuple[jax.Array, jax.Array]:
    """The layer's output `[g, s, d]` and its load-balancing loss."""
    constrain = constrainer(mesh)
    dispatch, combine, probs = route(jnp.einsum("gsd,de->gse", x, params["router"]), size)
    expert_in = constrain(jnp.einsum("gsec,gsd->egcd", dispatch, x), DISPATCHED)
    hidden = jax.nn.gelu(jnp.einsum("egcd,edf->egcf", expert_in, params["w_in"]))
    expert_out = constrain(jnp.einsum("egcf,efd->egcd", hidden, params["w_out"]), DISPATCHED)
    y = constrain(jnp.einsum("gsec,egcd->gsd", combine, expert_out), GROUPS)
    # Switch's auxiliary loss: experts' share of first choices times their mean probability
    first = jax.nn.one_hot(jnp.argmax(probs, axis=-1), size.experts)
    balance = jnp.mean(first, axis=(0, 1)) @ jnp.mean(probs, axis=(0, 1)) * size.experts
    return y, balance


def build(mesh: Mesh, size: Size = Size()) -> Step:
    """The step `(params, opt_state, x, target) -> (params, opt_state, loss)` on `mesh`."""
    constrain = constrainer(mesh)

    def loss(params: Any, x: jax.Array, target: jax.Array) -> jax.Array:
        x = constrain(x, GROUPS)
        y, balance = moe_layer(params, x, size, mesh)
        return jnp.mean((x + y - target) ** 2) + 0.01 * balance

    e, d, f = size.experts, size.dim, size.ffn
    params = {"router": f32(d, e), "w_in": f32(e, d, f), "w_out": f32(e, f, d)}
    data = (f32(size.groups, size.group_size, d),) * 2
    # a router whose logits are far apart, so that no top-k choice is a near tie that the
    # sharded and the unsharded run's round-off could break differently
    return adamw_step(
        "moe_top2", mesh, loss, params, specs_by_rules(params, RULES), data, (GROUPS, GROUPS),
        lambda: tuple(fill({"x": data[0], "y": data[1]}, 5, std=1.0).values()),
        make_params=lambda p: {**fill(p, 0), "router": fill(p["router"], 6, std=0.5)})
