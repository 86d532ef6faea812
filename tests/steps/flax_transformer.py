"""A Flax linen transformer LM trained with optax AdamW under three layouts a Flax user picks
between by changing the logical axis rules: data parallel, FSDP, Megatron tensor parallel.

The parameters carry logical axis names (`nn.with_logical_partitioning`); their mesh specs come
from `nn.get_partition_spec` and `nn.logical_to_mesh` under the layout's rules, and the blocks'
input is constrained with `nn.with_logical_constraint`, as Flax's sharding guide writes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.sharding import Mesh

from .common import DecoderSize, integers, next_token_loss
from .harness import Step
from .train import adamw_step

Rules = tuple[tuple[str, Any], ...]

LAYOUTS: dict[str, tuple[dict[str, int], Rules]] = {
    "dp": ({"data": 8}, (("batch", "data"),)),
    "fsdp": ({"data": 8}, (("batch", "data"), ("embed", "data"))),
    "megatron": ({"data": 4, "model": 2},
                 (("batch", "data"), ("heads", "model"), ("mlp", "model"), ("vocab", "model"))),
}


Size = DecoderSize
TINY = Size()


def _logical(names: tuple[str, ...], init: Callable[..., Any] | None = None) -> Callable[..., Any]:
    return nn.with_logical_partitioning(init or nn.initializers.normal(0.02), names)


class Block(nn.Module):
    """Pre-norm block: causal multi-head attention, then a GELU MLP, each with a residual."""

    size: Size
    mesh: Mesh
    rules: Rules

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        s = self.size
        x = nn.with_logical_constraint(x, ("batch", "length", "embed"), mesh=self.mesh,
                                       rules=self.rules)
        # no attention biases: a key bias gets a zero gradient (softmax ignores it), which
        # Adam turns into an update of round-off noise that differs with the reduction order
        y = nn.MultiHeadDotProductAttention(
            num_heads=s.heads, qkv_features=s.dim, use_bias=False,
            kernel_init=_logical(("embed", "heads", "kv")),
            out_kernel_init=_logical(("heads", "kv", "embed")),
        )(nn.LayerNorm()(x), mask=nn.make_causal_mask(jnp.ones(x.shape[:2])))
        x = x + y
        y = nn.Dense(s.ffn, kernel_init=_logical(("embed", "mlp")),
                     bias_init=_logical(("mlp",), nn.initializers.zeros))(nn.LayerNorm()(x))
        y = nn.Dense(s.dim, kernel_init=_logical(("mlp", "embed")),
                     bias_init=_logical(("embed",), nn.initializers.zeros))(nn.gelu(y))
        return x + y


class TransformerLM(nn.Module):
    size: Size
    mesh: Mesh
    rules: Rules

    @nn.compact
    def __call__(self, tokens: jax.Array) -> jax.Array:
        s = self.size
        x = nn.Embed(s.vocab, s.dim, embedding_init=_logical(("vocab", "embed")))(tokens)
        for _ in range(s.layers):
            x = Block(s, self.mesh, self.rules)(x)
        return nn.Dense(s.vocab, kernel_init=_logical(("embed", "vocab")),
                        use_bias=False)(nn.LayerNorm()(x))


def build(mesh: Mesh, layout: str = "megatron", size: Size = TINY) -> Step:
    """The step `(params, opt_state, tokens) -> (params, opt_state, loss)` under `layout`."""
    rules = LAYOUTS[layout][1]
    model = TransformerLM(size, mesh, rules)
    tokens = jax.ShapeDtypeStruct((size.batch, size.seq), jnp.int32)
    boxed = jax.eval_shape(model.init, jax.random.key(0), tokens)["params"]
    specs = nn.logical_to_mesh(nn.get_partition_spec(boxed), rules)

    def loss(params: Any, tokens: jax.Array) -> jax.Array:
        return next_token_loss(model.apply({"params": params}, tokens), tokens)

    return adamw_step(f"flax_{layout}", mesh, loss, nn.meta.unbox(boxed), specs, (tokens,),
                      (nn.logical_to_mesh_axes(("batch", None), rules),),
                      lambda: (integers(4, tokens.shape, size.vocab),))
