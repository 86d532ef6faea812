"""Shared pieces of the benchmarks: N-layer transformer stacks lowered from JAX, and timing.

The stack follows seed 003's GSPMD "2D finalized" sharding on a 2x4 mesh (X=2, Y=4; `Auto` axes
so propagation has work to do): activations [batch.X, seq, embed.Y], attention weights
[embed.X, heads.Y, head_dim], output projection [heads.Y, head_dim, embed.X], W_in [embed.X,
hidden.Y], W_out [hidden.Y, embed.X], with `with_sharding_constraint` on the hidden activation and
on each sublayer output. Each layer: layer norm, multi-head self-attention, residual, layer norm,
GELU MLP, residual. Shapes are small: the benchmarks measure the compilers, not the math.
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import functools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

BATCH, SEQ, D_MODEL, HEADS, HEAD_DIM, HIDDEN = 8, 16, 32, 4, 8, 128


@functools.cache
def mesh() -> jax.sharding.Mesh:
    return jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)


def _wsc(x: jax.Array, *spec: Any) -> jax.Array:
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh(), P(*spec)))


def _layernorm(x: jax.Array, g: jax.Array) -> jax.Array:
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g


def _layer(x: jax.Array, p: dict[str, jax.Array]) -> jax.Array:
    head_dim = p["wq"].shape[-1]
    h = _layernorm(x, p["g1"])
    q = jnp.einsum("bse,ehd->bshd", h, p["wq"])
    k = jnp.einsum("bse,ehd->bshd", h, p["wk"])
    v = jnp.einsum("bse,ehd->bshd", h, p["wv"])
    s = jnp.einsum("bshd,bthd->bhst", q, k) * (head_dim**-0.5)
    a = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhst,bthd->bshd", a, v)
    x = x + _wsc(jnp.einsum("bshd,hde->bse", o, p["wo"]), "X", None, "Y")
    h = _layernorm(x, p["g2"])
    h = _wsc(jnp.einsum("bse,ef->bsf", h, p["w_in"]), "X", None, "Y")
    h = jax.nn.gelu(h)
    return x + _wsc(jnp.einsum("bsf,fe->bse", h, p["w_out"]), "X", None, "Y")


def _param_specs(head_dim: int = HEAD_DIM, hidden: int = HIDDEN) -> dict[str, Any]:
    """Each parameter's shape and seed 003's 2D spec, for one layer of the given sizes."""
    return {
        "g1": ((D_MODEL,), P("Y")),
        "wq": ((D_MODEL, HEADS, head_dim), P("X", "Y", None)),
        "wk": ((D_MODEL, HEADS, head_dim), P("X", "Y", None)),
        "wv": ((D_MODEL, HEADS, head_dim), P("X", "Y", None)),
        "wo": ((HEADS, head_dim, D_MODEL), P("Y", None, "X")),
        "g2": ((D_MODEL,), P("Y")),
        "w_in": ((D_MODEL, hidden), P("X", "Y")),
        "w_out": ((hidden, D_MODEL), P("Y", "X")),
    }


def layer_sizes(n_layers: int, distinct: bool) -> list[tuple[int, int]]:
    """(head_dim, hidden) per layer: all equal, or distinct (head_dim 8+i, hidden 128+4i), so
    that no two layers share shapes and a per-shape memo cannot reuse one layer's work."""
    if not distinct:
        return [(HEAD_DIM, HIDDEN)] * n_layers
    return [(HEAD_DIM + i, HIDDEN + 4 * i) for i in range(n_layers)]


@functools.cache
def transformer_stack_text(n_layers: int, distinct: bool = False) -> str:
    """MLIR text (StableHLO + sdy, as `Lowered.as_text()` prints) of an `n_layers` stack; with
    `distinct`, every layer has its own head_dim and hidden size (see `layer_sizes`)."""
    m = mesh()

    def f(x: jax.Array, params: list[dict[str, jax.Array]]) -> jax.Array:
        for p in params:
            x = _layer(x, p)
        return x

    specs = [_param_specs(hd, hid) for hd, hid in layer_sizes(n_layers, distinct)]
    x = jax.ShapeDtypeStruct((BATCH, SEQ, D_MODEL), jnp.float32)
    params = [
        {k: jax.ShapeDtypeStruct(shape, jnp.float32) for k, (shape, _) in spec.items()}
        for spec in specs
    ]
    param_sh = [{k: NamedSharding(m, ps) for k, (_, ps) in spec.items()} for spec in specs]
    x_sh = NamedSharding(m, P("X", None, "Y"))
    jitted = jax.jit(f, in_shardings=(x_sh, param_sh), out_shardings=x_sh)
    return jitted.lower(x, params).as_text()


def workloads(layers: str, stack: str) -> list[tuple[str, int, str]]:
    """(label, layers, text) for each requested depth and stack kind (identical/distinct/both)."""
    kinds = ("identical", "distinct") if stack == "both" else (stack,)
    out = []
    for n in (int(s) for s in layers.split(",")):
        for kind in kinds:
            label = f"{n}" if kind == "identical" else f"{n}d"
            out.append((label, n, transformer_stack_text(n, distinct=kind == "distinct")))
    return out


def best_of(fn: Callable[[], Any], k: int) -> tuple[float, float]:
    """(best, median) wall time of `k` runs of `fn`, in seconds."""
    times = []
    for _ in range(k):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def jaxlib_parse_print(text: str, generic: bool) -> str:
    """jaxlib's own parse + print of `text` (the reference for shardc's import + export)."""
    from jax._src.lib.mlir import ir

    with _ctx():
        module = ir.Module.parse(text)
        return module.operation.get_asm(print_generic_op_form=generic)


def shardy_pipeline(text: str) -> str:
    """Shardy's `sdy-propagation-pipeline` through jaxlib: parse, run, print."""
    from jax._src.lib.mlir import ir, passmanager

    with _ctx():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)").run(
            module.operation
        )
        return str(module)


@functools.cache
def _ctx() -> Any:
    from jax._src.interpreters import mlir as jmlir

    return jmlir.make_ir_context()


def describe(text: str) -> str:
    n_ops = sum(1 for line in text.splitlines() if "=" in line and "stablehlo." in line)
    return f"{len(text) / 1e6:.2f} MB, ~{n_ops} stablehlo ops"


def rng_note() -> str:
    return f"jax {jax.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs"
