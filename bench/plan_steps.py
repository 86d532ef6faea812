"""Real training steps for the plan's accuracy: the planned collective bytes and memory of
`shardc.jit(step).lower(...)` against what `.compile()` builds (XLA's partitioned HLO and
`memory_analysis`), on the 2x4 mesh of 8 virtual CPU devices.

Steps (written here, small dims):

* `flax_dp`, `flax_fsdp`, `flax_megatron`: a Flax linen 2-layer transformer (embedding, layer
  norm, multi-head attention, GELU MLP, residuals, logits), softmax cross-entropy,
  `jax.value_and_grad`, optax AdamW; the parameters carry logical axis names mapped to the
  mesh as data parallel (parameters replicated, batch on `data`), FSDP (parameters sharded
  along `data` too) or Megatron (heads and MLP on `model`);
* `llama_fsdp`: a LLaMA-style decoder step written as EasyLM writes its FSDP step: mesh
  (dp 1, fsdp 4, mp 2), embedding P('mp', 'fsdp'), wq/wk/wv/w1/w3 P('fsdp', 'mp'), wo/w2
  P('mp', 'fsdp'), norms replicated, lm_head P('fsdp', 'mp'), the batch constrained to
  P(('dp', 'fsdp')) and q/k/v to P(('dp', 'fsdp'), None, 'mp'); value_and_grad, clip by
  global norm and AdamW with both moments sharded like the parameters.

    python bench/plan_steps.py [--only flax_dp,...]

Prints per step the planned and compiled bytes and memory and their ratios. Run from the
repository root.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

Step = tuple[Callable[..., Any], tuple[Any, ...], Any, Any, Any]  # fn, args, mesh, ins, outs


def flax_step(layout: str) -> Step:
    """The Flax transformer step under `layout` (dp, fsdp or megatron)."""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import linen as nn
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    vocab, embed, seq, batch, heads, hidden = 64, 32, 16, 8, 4, 64
    part = nn.with_logical_partitioning
    init = nn.initializers.lecun_normal()

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            y = nn.LayerNorm()(x)
            y = nn.MultiHeadDotProductAttention(
                num_heads=heads,
                qkv_features=embed,
                use_bias=False,
                kernel_init=part(init, ("embed", "heads", None)),
                out_kernel_init=part(init, ("heads", None, "embed")),
            )(y)
            x = x + y
            y = nn.Dense(hidden, kernel_init=part(init, ("embed", "mlp")))(nn.LayerNorm()(x))
            return x + nn.Dense(embed, kernel_init=part(init, ("mlp", "embed")))(nn.gelu(y))

    class Model(nn.Module):
        @nn.compact
        def __call__(self, tokens: Any) -> Any:
            emb = part(nn.initializers.normal(0.5), ("vocab", "embed"))
            x = nn.Embed(vocab, embed, embedding_init=emb)(tokens)
            for _ in range(2):
                x = Block()(x)
            return nn.Dense(vocab, kernel_init=part(init, ("embed", "vocab")))(nn.LayerNorm()(x))

    rules = {
        "dp": (("batch", "data"),),
        "fsdp": (("batch", "data"), ("embed", "data")),
        "megatron": (("batch", "data"), ("mlp", "model"), ("heads", "model"), ("vocab", "model")),
    }[layout]
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    model = Model()
    tx = optax.adamw(1e-3)
    tokens = jax.ShapeDtypeStruct((batch, seq), jnp.int32)
    boxed = jax.eval_shape(model.init, jax.random.key(0), tokens)["params"]
    params = nn.unbox(boxed)
    opt_state = jax.eval_shape(tx.init, params)
    param_sh = nn.logical_to_mesh_sharding(nn.get_partition_spec(boxed), mesh, rules)
    opt_sh = _like_params(tx, opt_state, param_sh, mesh)
    tok_sh = NamedSharding(mesh, P("data", None))

    step = _train_step(lambda p, tokens: model.apply({"params": p}, tokens), tx)
    args = (params, opt_state, tokens)
    return step, args, mesh, (param_sh, opt_sh, tok_sh), (param_sh, opt_sh, None)


def llama_fsdp_step() -> Step:
    """The EasyLM-style FSDP + tensor-parallel LLaMA step (see the module docstring)."""
    import jax
    import jax.numpy as jnp
    import optax
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    vocab, d, hidden, heads, layers, batch, seq = 64, 32, 64, 4, 2, 8, 16
    hd = d // heads
    mesh = jax.make_mesh((1, 4, 2), ("dp", "fsdp", "mp"), axis_types=(AxisType.Auto,) * 3)
    f32 = jnp.float32

    def sds(*shape: int) -> Any:
        return jax.ShapeDtypeStruct(shape, f32)

    layer = {
        "attn_norm": (sds(d), P()),
        "wq": (sds(d, d), P("fsdp", "mp")),
        "wk": (sds(d, d), P("fsdp", "mp")),
        "wv": (sds(d, d), P("fsdp", "mp")),
        "wo": (sds(d, d), P("mp", "fsdp")),
        "mlp_norm": (sds(d), P()),
        "w1": (sds(d, hidden), P("fsdp", "mp")),
        "w3": (sds(d, hidden), P("fsdp", "mp")),
        "w2": (sds(hidden, d), P("mp", "fsdp")),
    }
    top = {
        "embed": (sds(vocab, d), P("mp", "fsdp")),
        "final_norm": (sds(d), P()),
        "lm_head": (sds(d, vocab), P("fsdp", "mp")),
    }
    params = {k: v[0] for k, v in top.items()}
    specs = {k: v[1] for k, v in top.items()}
    params["layers"] = [{k: v[0] for k, v in layer.items()} for _ in range(layers)]
    specs["layers"] = [{k: v[1] for k, v in layer.items()} for _ in range(layers)]
    param_sh = jax.tree.map(
        lambda s: NamedSharding(mesh, s), specs, is_leaf=lambda x: isinstance(x, P)
    )
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))
    opt_state = jax.eval_shape(tx.init, params)

    opt_sh = _like_params(tx, opt_state, param_sh, mesh)
    tokens = jax.ShapeDtypeStruct((batch, seq), jnp.int32)
    tok_sh = NamedSharding(mesh, P(("dp", "fsdp"), None))

    def rms(x: Any, g: Any) -> Any:
        return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g

    def block(x: Any, p: Any) -> Any:
        bs = NamedSharding(mesh, P(("dp", "fsdp"), None, "mp"))
        h = rms(x, p["attn_norm"])
        q = jax.lax.with_sharding_constraint(h @ p["wq"], bs)
        k = jax.lax.with_sharding_constraint(h @ p["wk"], bs)
        v = jax.lax.with_sharding_constraint(h @ p["wv"], bs)
        q, k, v = (t.reshape(batch, seq, heads, hd) for t in (q, k, v))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(hd)
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        s = jnp.where(mask, s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, -1), v).reshape(batch, seq, d)
        x = x + o @ p["wo"]
        h = rms(x, p["mlp_norm"])
        return x + (jax.nn.silu(h @ p["w1"]) * (h @ p["w3"])) @ p["w2"]

    def logits_of(p: Any, tokens: Any) -> Any:
        x = p["embed"][tokens]
        x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P(("dp", "fsdp"), None, None)))
        for lp in p["layers"]:
            x = block(x, lp)
        return rms(x, p["final_norm"]) @ p["lm_head"]

    step = _train_step(logits_of, tx)
    args = (params, opt_state, tokens)
    return step, args, mesh, (param_sh, opt_sh, tok_sh), (param_sh, opt_sh, None)


def _train_step(logits_of: Callable[[Any, Any], Any], tx: Any) -> Callable[..., Any]:
    """A train step: next-token cross-entropy of `logits_of(params, tokens)`, its gradient,
    and the optimizer's update."""
    import jax
    import optax

    def step(params: Any, opt_state: Any, tokens: Any) -> Any:
        def loss_fn(p: Any) -> Any:
            logits = logits_of(p, tokens)
            return optax.softmax_cross_entropy_with_integer_labels(
                logits[:, :-1], tokens[:, 1:]
            ).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


def _like_params(tx: Any, opt_state: Any, param_sh: Any, mesh: Any) -> Any:
    """The optimizer state's shardings: the moments like the parameters, counters replicated."""
    import optax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    return optax.tree_map_params(
        tx,
        lambda _, sh: sh,
        opt_state,
        param_sh,
        transform_non_params=lambda _: NamedSharding(mesh, P()),
    )


STEPS: dict[str, Callable[[], Step]] = {
    "flax_dp": lambda: flax_step("dp"),
    "flax_fsdp": lambda: flax_step("fsdp"),
    "flax_megatron": lambda: flax_step("megatron"),
    "llama_fsdp": llama_fsdp_step,
}


def measure(name: str) -> dict[str, int]:
    """Planned and compiled bytes and memory of step `name`."""
    import shardc
    from shardc.backend.hlo_collectives import total_bytes
    from tests.differential.plan_targets import xla_memory

    fn, args, mesh, ins, outs = STEPS[name]()
    lowered = shardc.jit(fn, mesh=mesh, in_shardings=ins, out_shardings=outs).lower(*args)
    plan = lowered.plan()
    compiled = lowered.compile()
    memory = xla_memory(compiled.memory_analysis())
    m = plan.memory
    return {
        "plan": plan.total_bytes,
        "xla": total_bytes(compiled.as_text()),
        "plan_memory": m.arguments + m.results + m.peak,
        "xla_memory": memory,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated step names")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(STEPS)
    print(
        f"{'step':16} {'plan B':>9} {'xla B':>9} {'ratio':>6}   {'plan mem':>9} {'xla mem':>9} {'ratio':>6}"
    )
    for name in names:
        r = measure(name)
        br = r["plan"] / r["xla"] if r["xla"] else float("nan")
        mr = r["plan_memory"] / r["xla_memory"]
        print(
            f"{name:16} {r['plan']:>9} {r['xla']:>9} {br:>6.2f}   "
            f"{r['plan_memory']:>9} {r['xla_memory']:>9} {mr:>6.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
