"""A MaxText-style decoder: the layers' parameters stacked with a leading layer dim and run by
`jax.lax.scan`, optionally rematerialized (`jax.checkpoint`), sharded by logical axis rules.

Each parameter and constrained activation names its dims logically (`embed`, `heads`, `mlp`,
`activation_batch`, ...); MaxText-like rules map them onto the `(data, fsdp, tensor)` mesh
(Flax's `logical_to_mesh_axes`). RMSNorm, rotary embeddings, grouped-query causal attention,
SwiGLU, untied logits; AdamW with the moments sharded like the parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .common import causal_attention, constrainer, f32, integers, next_token_loss, rms_norm, rope
from .harness import Step
from .train import adamw_step

MESH_AXES = {"data": 2, "fsdp": 2, "tensor": 2}
LOGICAL_RULES = (
    ("activation_batch", ("data", "fsdp")),
    ("activation_heads", "tensor"),
    ("activation_mlp", "tensor"),
    ("embed", "fsdp"),
    ("heads", "tensor"),
    ("kv_heads", "tensor"),
    ("mlp", "tensor"),
    ("vocab", "tensor"),
)


@dataclass(frozen=True)
class Size:
    vocab: int = 128
    dim: int = 64
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 16
    ffn: int = 128
    layers: int = 2
    seq: int = 16
    batch: int = 8
    remat: bool = True


def logical(*names: str | None) -> P:
    """The mesh `PartitionSpec` of logically named dims under `LOGICAL_RULES`."""
    return nn.logical_to_mesh_axes(names, LOGICAL_RULES)


def param_shapes_and_specs(size: Size) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters (`ShapeDtypeStruct`s) and their mesh specs from their logical names."""
    n, d, h, g, k, f = size.layers, size.dim, size.heads, size.kv_heads, size.head_dim, size.ffn
    named = {
        "token_embedder": ((size.vocab, d), ("vocab", "embed")),
        "decoder": {
            "pre_attention_norm": ((n, d), ("layers", "norm")),
            "query": ((n, d, h, k), ("layers", "embed", "heads", "kv")),
            "key": ((n, d, g, k), ("layers", "embed", "kv_heads", "kv")),
            "value": ((n, d, g, k), ("layers", "embed", "kv_heads", "kv")),
            "out": ((n, h, k, d), ("layers", "heads", "kv", "embed")),
            "pre_mlp_norm": ((n, d), ("layers", "norm")),
            "wi_0": ((n, d, f), ("layers", "embed", "mlp")),
            "wi_1": ((n, d, f), ("layers", "embed", "mlp")),
            "wo": ((n, f, d), ("layers", "mlp", "embed")),
        },
        "decoder_norm": ((d,), ("norm",)),
        "logits_dense": ((d, size.vocab), ("embed", "vocab")),
    }
    is_entry = lambda x: isinstance(x, tuple) and isinstance(x[0], tuple)  # noqa: E731
    shapes = jax.tree.map(lambda e: f32(*e[0]), named, is_leaf=is_entry)
    specs = jax.tree.map(lambda e: logical(*e[1]), named, is_leaf=is_entry)
    return shapes, specs


def decoder_layer(x: jax.Array, p: dict[str, jax.Array], mesh: Mesh) -> jax.Array:
    """One decoder layer on `x[batch, seq, embed]` with one layer's slice of the parameters."""
    constrain = constrainer(mesh)
    x = constrain(x, logical("activation_batch", "activation_length", "activation_embed"))
    h = rms_norm(x, p["pre_attention_norm"])
    q = jnp.einsum("bsd,dhk->bshk", h, p["query"])
    k = jnp.einsum("bsd,dgk->bsgk", h, p["key"])
    v = jnp.einsum("bsd,dgk->bsgk", h, p["value"])
    q = constrain(q, logical("activation_batch", "activation_length", "activation_heads", "kv"))
    attention = causal_attention(rope(q), rope(k), v)
    x = x + jnp.einsum("bshk,hkd->bsd", attention, p["out"])
    h = rms_norm(x, p["pre_mlp_norm"])
    hidden = jax.nn.silu(h @ p["wi_0"]) * (h @ p["wi_1"])
    hidden = constrain(hidden, logical("activation_batch", "activation_length", "activation_mlp"))
    return x + hidden @ p["wo"]


def forward(params: dict[str, Any], tokens: jax.Array, size: Size, mesh: Mesh) -> jax.Array:
    """Logits `[batch, seq, vocab]`: the embedding, the scanned layers, the final norm."""

    def body(x: jax.Array, p: dict[str, jax.Array]) -> tuple[jax.Array, None]:
        return decoder_layer(x, p, mesh), None

    if size.remat:
        body = jax.checkpoint(body, policy=jax.checkpoint_policies.nothing_saveable)
    x, _ = jax.lax.scan(body, params["token_embedder"][tokens], params["decoder"])
    return rms_norm(x, params["decoder_norm"]) @ params["logits_dense"]


def build(mesh: Mesh, size: Size = Size()) -> Step:
    """The step `(params, opt_state, tokens) -> (params, opt_state, loss)` on `mesh`."""
    constrain = constrainer(mesh)
    batch = logical("activation_batch", "activation_length")

    def loss(params: Any, tokens: jax.Array) -> jax.Array:
        tokens = constrain(tokens, batch)
        return next_token_loss(forward(params, tokens, size, mesh), tokens)

    params, specs = param_shapes_and_specs(size)
    tokens = jax.ShapeDtypeStruct((size.batch, size.seq), jnp.int32)
    return adamw_step("maxtext_scan", mesh, loss, params, specs, (tokens,), (batch,),
                      lambda: (integers(3, tokens.shape, size.vocab),))
