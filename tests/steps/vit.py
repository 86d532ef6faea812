"""A ViT classifier train step in Flax linen: a strided convolution as the patch embedding, a
class token and learned position embeddings, pre-norm encoder blocks (multi-head attention,
GELU MLP), a linear head on the class token; softmax cross-entropy, AdamW.

Sharded as big_vision shards by parameter path (regex rules) on `(data, model)`: images and
labels over `data`, the attention and MLP kernels FSDP over `data` and tensor-parallel over
`model`, the patch kernel's output channels over `model`, the rest replicated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .common import f32, fill, integers, specs_by_rules
from .harness import Step
from .train import adamw_step

MESH_AXES = {"data": 4, "model": 2}
RULES = (
    (r"embedding/kernel$", P(None, None, None, "model")),
    (r"(query|key|value)/kernel$", P("data", "model", None)),
    (r"out/kernel$", P("model", None, "data")),
    (r"Dense_0/kernel$", P("data", "model")),
    (r"Dense_1/kernel$", P("model", "data")),
    (r"head/kernel$", P("data", None)),
    (r".", P()),
)
BATCH = P("data")


@dataclass(frozen=True)
class Size:
    image: int = 16
    patch: int = 4
    channels: int = 3
    dim: int = 64
    heads: int = 4
    ffn: int = 128
    layers: int = 1
    classes: int = 10
    batch: int = 8


class Encoder(nn.Module):
    size: Size

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        s = self.size
        # no attention biases (as in the Flax transformer step: a key bias's zero gradient
        # would make Adam's update round-off noise)
        x = x + nn.MultiHeadDotProductAttention(num_heads=s.heads, use_bias=False)(
            nn.LayerNorm()(x))
        y = nn.Dense(s.ffn)(nn.LayerNorm()(x))
        return x + nn.Dense(s.dim)(nn.gelu(y))


class ViT(nn.Module):
    size: Size

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        s = self.size
        x = nn.Conv(s.dim, (s.patch, s.patch), strides=(s.patch, s.patch), padding="VALID",
                    name="embedding")(images)
        b = x.shape[0]
        x = x.reshape(b, -1, s.dim)
        cls = self.param("cls", nn.initializers.zeros, (1, 1, s.dim))
        x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, s.dim)), x], axis=1)
        x = x + self.param("pos_embedding", nn.initializers.normal(0.02), x.shape[1:])
        for i in range(s.layers):
            x = Encoder(s, name=f"encoder_{i}")(x)
        x = nn.LayerNorm(name="encoder_norm")(x)
        return nn.Dense(s.classes, name="head")(x[:, 0])


def build(mesh: Mesh, size: Size = Size()) -> Step:
    """The step `(params, opt_state, images, labels) -> (params, opt_state, loss)`."""
    model = ViT(size)
    images = f32(size.batch, size.image, size.image, size.channels)
    labels = jax.ShapeDtypeStruct((size.batch,), jnp.int32)
    params = jax.eval_shape(model.init, jax.random.key(0), images)["params"]

    def loss(params: Any, images: jax.Array, labels: jax.Array) -> jax.Array:
        logits = model.apply({"params": params}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    return adamw_step(
        "vit", mesh, loss, params, specs_by_rules(params, RULES), (images, labels),
        (BATCH, BATCH),
        lambda: (fill(images, 7, std=1.0), integers(8, labels.shape, size.classes)))
