"""Building blocks the step models share: meshes, sharding rules by parameter path, the
optimizer, and the transformer pieces (RMSNorm, rotary embeddings, causal attention).

Sharding rules are written the way EasyLM and big_vision write them: a list of
`(regex, PartitionSpec)` matched against each leaf's path (`layers/0/wq`), first match wins.
The optimizer's moments (`1/0/mu/layers/0/wq`) take their parameter's spec by path
(`train.like_params`), whatever gave the parameters theirs (rules or Flax logical names).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

Rules = Sequence[tuple[str, P]]


@dataclass(frozen=True)
class DecoderSize:
    """The size of a decoder-only language model step (defaults: the tests' tiny one)."""

    vocab: int = 128
    dim: int = 64
    heads: int = 4
    ffn: int = 128
    layers: int = 1
    seq: int = 16
    batch: int = 8


def auto_mesh(axes: dict[str, int], devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh with `Auto` axes (what both compilers propagate over), in the given order."""
    n = len(axes)
    return jax.make_mesh(tuple(axes.values()), tuple(axes), devices=devices,
                         axis_types=(jax.sharding.AxisType.Auto,) * n)


def one_device_mesh(mesh: Mesh) -> Mesh:
    """The same axis names, every one of size 1, on the first device: the unsharded run of a
    step built for `mesh` (its sharding constraints become no-ops)."""
    return auto_mesh({name: 1 for name in mesh.axis_names}, devices=jax.devices()[:1])


def path_name(path: Sequence[Any]) -> str:
    """`layers/0/wq` for a pytree key path."""
    return jax.tree_util.keystr(tuple(path), simple=True, separator="/")


def specs_by_rules(tree: Any, rules: Rules) -> Any:
    """A `PartitionSpec` per leaf of `tree`: scalars replicated, others by the first rule whose
    regex is found in the leaf's path. A leaf no rule matches raises, naming its path."""

    def spec(path: Sequence[Any], leaf: Any) -> P:
        if not np.shape(leaf):
            return P()
        name = path_name(path)
        for pattern, s in rules:
            if re.search(pattern, name):
                return s
        raise ValueError(f"no sharding rule matches parameter {name}")

    return jax.tree_util.tree_map_with_path(spec, tree)


def named(mesh: Mesh, specs: Any) -> Any:
    """`NamedSharding`s on `mesh` for a pytree of `PartitionSpec`s."""
    return jax.tree.map(lambda s: NamedSharding(mesh, s), specs,
                        is_leaf=lambda s: isinstance(s, P))


def constrainer(mesh: Mesh) -> Callable[[jax.Array, P], jax.Array]:
    """`with_sharding_constraint` on `mesh`, as model code calls it."""

    def constrain(x: jax.Array, spec: P) -> jax.Array:
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))

    return constrain


def f32(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def fill(abstract: Any, seed: int, ones: str = r"norm|scale", zeros: str = r"bias",
         std: float = 0.02) -> Any:
    """Numpy arrays for a pytree of `ShapeDtypeStruct` parameters: a leaf whose last path
    entry matches `ones` is ones, `zeros` zeros, any other N(0, std^2) (GPT-style). Numpy, so
    that no initializer compiles."""
    rng = np.random.default_rng(seed)

    def leaf(path: Sequence[Any], s: jax.ShapeDtypeStruct) -> np.ndarray:
        last = path_name(path).rsplit("/", 1)[-1]
        if re.search(ones, last):
            return np.ones(s.shape, s.dtype)
        if re.search(zeros, last):
            return np.zeros(s.shape, s.dtype)
        return (rng.standard_normal(s.shape) * std).astype(s.dtype)

    return jax.tree_util.tree_map_with_path(leaf, abstract)


def integers(seed: int, shape: tuple[int, ...], high: int) -> np.ndarray:
    """Random int32 data (tokens, labels) in `[0, high)`."""
    return np.random.default_rng(seed).integers(0, high, shape, dtype=np.int32)


def optimizer(learning_rate: float = 1e-3, clip: float = 1.0) -> optax.GradientTransformation:
    """Clip by global norm, then AdamW: the update every step here uses."""
    return optax.chain(optax.clip_by_global_norm(clip), optax.adamw(learning_rate))


def rms_norm(x: jax.Array, w: jax.Array, plus_one: bool = False, eps: float = 1e-6) -> jax.Array:
    """RMSNorm over the last dim (in f32); Gemma scales by `1 + w`."""
    y = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * (1.0 + w if plus_one else w)


def rope(x: jax.Array, base: float = 10000.0) -> jax.Array:
    """Rotary position embedding of `x[batch, seq, heads, head_dim]` (interleaved pairs)."""
    seq, head_dim = x.shape[1], x.shape[-1]
    inv = 1.0 / (base ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))
    angle = jnp.arange(seq, dtype=jnp.float32)[:, None] * inv[None, :]
    cos, sin = jnp.cos(angle)[None, :, None, :], jnp.sin(angle)[None, :, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    return jnp.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1).reshape(x.shape)


def causal_attention(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
    """Softmax attention of `q[b, s, h, d]` over `k, v[b, s, g, d]` with a causal mask; `g`
    divides `h` (grouped-query attention: each key/value head serves `h // g` query heads)."""
    b, s, h, d = q.shape
    g = k.shape[2]
    q = q.reshape(b, s, g, h // g, d)
    scores = jnp.einsum("bqgrd,bkgd->bgrqk", q, k) / np.sqrt(d).astype(np.float32)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, jnp.finfo(scores.dtype).min)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bgrqk,bkgd->bqgrd", probs, v).reshape(b, s, h, d)


def next_token_loss(logits: jax.Array, tokens: jax.Array) -> jax.Array:
    """Mean cross-entropy of predicting `tokens[:, 1:]` from `logits[:, :-1]`."""
    return optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], tokens[:, 1:]).mean()
