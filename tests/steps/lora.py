"""A Gemma-style LoRA fine-tune step: the base model frozen, low-rank adapters trained.

The base decoder follows Gemma's layout: an embedding scaled by sqrt(d_model) and tied to the
output logits, RMSNorm scaled by `1 + w`, multi-query attention (one key/value head) with
rotary embeddings, a GeGLU MLP, the projections kept as Gemma keeps them (`q [heads, d,
head_dim]`, `kv [2, kv_heads, d, head_dim]`, `o [heads, head_dim, d]`, `gating [2, ffn, d]`,
`linear [ffn, d]`). Adapters `A [in, r]`, `B [r, out]` add `x @ A @ B` to the query and MLP
output projections. Only the adapters are differentiated and updated (AdamW, their moments
sharded like them); the base weights are an argument of their own, FSDP + tensor-parallel
sharded on `(data, fsdp, tp)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .common import (
    causal_attention,
    constrainer,
    f32,
    fill,
    integers,
    next_token_loss,
    rms_norm,
    rope,
    specs_by_rules,
)
from .harness import Step
from .train import adamw_step

MESH_AXES = {"data": 2, "fsdp": 2, "tp": 2}
BASE_RULES = (
    ("embedder", P("tp", "fsdp")),
    (r"/q$", P("tp", "fsdp", None)),
    (r"/kv$", P(None, None, "fsdp", None)),
    (r"/o$", P("tp", None, "fsdp")),
    ("gating", P(None, "tp", "fsdp")),
    ("linear", P("tp", "fsdp")),
    ("norm", P()),
)
LORA_RULES = (
    (r"q_lora/a$", P("fsdp", None)),
    (r"q_lora/b$", P(None, "tp", None)),
    (r"mlp_lora/a$", P("tp", None)),
    (r"mlp_lora/b$", P(None, "fsdp")),
)
BATCH = P(("data", "fsdp"))


@dataclass(frozen=True)
class Size:
    vocab: int = 128
    dim: int = 64
    heads: int = 4
    head_dim: int = 16
    ffn: int = 128
    layers: int = 1
    rank: int = 4
    seq: int = 16
    batch: int = 8


def base_shapes(size: Size) -> dict[str, Any]:
    d, h, hd, f = size.dim, size.heads, size.head_dim, size.ffn
    layer = {"attention_norm": f32(d), "q": f32(h, d, hd), "kv": f32(2, 1, d, hd),
             "o": f32(h, hd, d), "mlp_norm": f32(d), "gating": f32(2, f, d),
             "linear": f32(f, d)}
    return {"embedder": f32(size.vocab, d), "layers": [dict(layer) for _ in range(size.layers)],
            "final_norm": f32(d)}


def lora_shapes(size: Size) -> dict[str, Any]:
    d, r = size.dim, size.rank
    layer = {"q_lora": {"a": f32(d, r), "b": f32(r, size.heads, size.head_dim)},
             "mlp_lora": {"a": f32(size.ffn, r), "b": f32(r, d)}}
    return {"layers": [dict(layer) for _ in range(size.layers)]}


def forward(lora: Any, base: Any, tokens: jax.Array, size: Size) -> jax.Array:
    """Logits `[batch, seq, vocab]` of the adapted decoder."""
    x = base["embedder"][tokens] * np.sqrt(size.dim).astype(np.float32)
    for layer, adapter in zip(base["layers"], lora["layers"], strict=True):
        h = rms_norm(x, layer["attention_norm"], plus_one=True)
        qa = adapter["q_lora"]
        q = jnp.einsum("bsd,hdk->bshk", h, layer["q"]) + jnp.einsum(
            "bsr,rhk->bshk", h @ qa["a"], qa["b"])
        k, v = jnp.einsum("bsd,ckdx->cbskx", h, layer["kv"])
        attention = causal_attention(rope(q), rope(k), v)
        x = x + jnp.einsum("bshk,hkd->bsd", attention, layer["o"])
        h = rms_norm(x, layer["mlp_norm"], plus_one=True)
        gate, up = jnp.einsum("bsd,cfd->cbsf", h, layer["gating"])
        hidden = jax.nn.gelu(gate) * up
        ma = adapter["mlp_lora"]
        x = x + hidden @ layer["linear"] + (hidden @ ma["a"]) @ ma["b"]
    x = rms_norm(x, base["final_norm"], plus_one=True)
    return x @ base["embedder"].T


def build(mesh: Mesh, size: Size = Size()) -> Step:
    """The step `(lora, opt_state, base, tokens) -> (lora, opt_state, loss)` on `mesh`."""
    constrain = constrainer(mesh)

    def loss(lora: Any, base: Any, tokens: jax.Array) -> jax.Array:
        tokens = constrain(tokens, BATCH)
        return next_token_loss(forward(lora, base, tokens, size), tokens)

    base, lora = base_shapes(size), lora_shapes(size)
    tokens = jax.ShapeDtypeStruct((size.batch, size.seq), jnp.int32)
    return adamw_step(
        "gemma_lora", mesh, loss, lora, specs_by_rules(lora, LORA_RULES),
        (base, tokens), (specs_by_rules(base, BASE_RULES), BATCH),
        lambda: (fill(base, 1), integers(2, tokens.shape, size.vocab)))
