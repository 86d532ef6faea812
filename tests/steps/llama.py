"""A LLaMA training step sharded the way EasyLM shards its FSDP + tensor-parallel step.

Mesh `(dp, fsdp, mp)`; the embedding `P('mp', 'fsdp')`, the q/k/v and gate/up projections
`P('fsdp', 'mp')`, the output and down projections `P('mp', 'fsdp')`, the norms replicated,
the LM head `P('fsdp', 'mp')`; the token batch constrained to `P(('dp', 'fsdp'))` and the q/k/v
activations to `P(('dp', 'fsdp'), None, 'mp')`. RMSNorm, rotary embeddings, causal attention,
SwiGLU; `value_and_grad`, gradient clipping by global norm and AdamW, both moments sharded like
their parameters; parameters and optimizer state donated, as EasyLM's train step does.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .common import (
    DecoderSize,
    causal_attention,
    constrainer,
    f32,
    integers,
    next_token_loss,
    rms_norm,
    rope,
    specs_by_rules,
)
from .harness import Step
from .train import adamw_step

MESH_AXES = {"dp": 1, "fsdp": 4, "mp": 2}
RULES = (
    ("embed", P("mp", "fsdp")),
    (r"(wq|wk|wv|w1|w3)$", P("fsdp", "mp")),
    (r"(wo|w2)$", P("mp", "fsdp")),
    ("norm", P()),
    ("lm_head", P("fsdp", "mp")),
)
BATCH = P(("dp", "fsdp"))
ACTIVATION = P(("dp", "fsdp"), None, "mp")


Size = DecoderSize
TINY = Size()


def param_shapes(size: Size) -> dict[str, Any]:
    d, f = size.dim, size.ffn
    layer = {"attention_norm": f32(d), "wq": f32(d, d), "wk": f32(d, d), "wv": f32(d, d),
             "wo": f32(d, d), "ffn_norm": f32(d), "w1": f32(d, f), "w3": f32(d, f),
             "w2": f32(f, d)}
    return {"embed": f32(size.vocab, d), "layers": [dict(layer) for _ in range(size.layers)],
            "norm": f32(d), "lm_head": f32(d, size.vocab)}


def forward(params: dict[str, Any], tokens: jax.Array, size: Size, mesh: Mesh) -> jax.Array:
    """Logits `[batch, seq, vocab]` of the decoder."""
    constrain = constrainer(mesh)
    b, s = tokens.shape
    head_dim = size.dim // size.heads
    x = params["embed"][tokens]
    for layer in params["layers"]:
        h = rms_norm(x, layer["attention_norm"])
        q, k, v = (constrain(h @ layer[w], ACTIVATION).reshape(b, s, size.heads, head_dim)
                   for w in ("wq", "wk", "wv"))
        attention = causal_attention(rope(q), rope(k), v).reshape(b, s, size.dim)
        x = x + attention @ layer["wo"]
        h = rms_norm(x, layer["ffn_norm"])
        x = x + (jax.nn.silu(h @ layer["w1"]) * (h @ layer["w3"])) @ layer["w2"]
    return rms_norm(x, params["norm"]) @ params["lm_head"]


def build(mesh: Mesh, size: Size = TINY) -> Step:
    """The step `(params, opt_state, tokens) -> (params, opt_state, loss)` on `mesh`."""
    constrain = constrainer(mesh)

    def loss(params: Any, tokens: jax.Array) -> jax.Array:
        tokens = constrain(tokens, BATCH)
        return next_token_loss(forward(params, tokens, size, mesh), tokens)

    params = param_shapes(size)
    tokens = jax.ShapeDtypeStruct((size.batch, size.seq), jnp.int32)
    return adamw_step("llama_fsdp_tp", mesh, loss, params, specs_by_rules(params, RULES),
                      (tokens,), (BATCH,),
                      lambda: (integers(1, tokens.shape, size.vocab),))
