"""Shared pieces of the benchmarks: N-layer transformer stacks (and other model shapes: a
scanned stack, a convnet, a mixture of experts, an MLP-Mixer) lowered from JAX, and timing.

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


# ---------------------------------------------------------------------------------------------
# Model shapes other than the transformer stack (each a grad step lowered from JAX, 2x4 mesh)


def _ns(*spec: Any) -> NamedSharding:
    return NamedSharding(mesh(), P(*spec))


def _f32(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


@functools.cache
def scanned_stack_text(n_layers: int) -> str:
    """The stack's layer under `jax.lax.scan` over `n_layers` stacked parameters (MaxText's and
    t5x's `scan_layers=True`), grad: two while loops whose bodies call JAX's
    dynamic_(update_)index_in_dim helpers (~80 call sites); about 500 ops at any depth."""

    def f(x: jax.Array, ps: dict[str, jax.Array]) -> jax.Array:
        def body(h: jax.Array, p: dict[str, jax.Array]) -> tuple[jax.Array, None]:
            return _layer(h, p), None

        h, _ = jax.lax.scan(body, x, ps)
        return jnp.mean(h * h)

    specs = _param_specs()
    ps = {k: _f32(n_layers, *shape) for k, (shape, _) in specs.items()}
    psh = {k: NamedSharding(mesh(), P(None, *spec)) for k, (_, spec) in specs.items()}
    x = _f32(BATCH, SEQ, D_MODEL)
    g = jax.grad(f, argnums=1)
    return jax.jit(g, in_shardings=(_ns("X", None, "Y"), psh)).lower(x, ps).as_text()


@functools.cache
def convnet_text(n_layers: int) -> str:
    """`n_layers` 3x3 convolutions (NHWC, batch on X, output channels of the kernels on Y), each
    normalized by its batch statistics with a ReLU residual, grad (~56 ops per layer)."""

    def f(x: jax.Array, ws: list[jax.Array]) -> jax.Array:
        for w in ws:
            y = jax.lax.conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )
            mu = y.mean(axis=(0, 1, 2))
            var = y.var(axis=(0, 1, 2))
            x = x + jax.nn.relu((y - mu) * jax.lax.rsqrt(var + 1e-5))
        return jnp.mean(x * x)

    ws = [_f32(3, 3, 32, 32) for _ in range(n_layers)]
    shardings = (_ns("X", None, None, None), [_ns(None, None, None, "Y")] * n_layers)
    g = jax.grad(f, argnums=1)
    return jax.jit(g, in_shardings=shardings).lower(_f32(16, 16, 16, 32), ws).as_text()


@functools.cache
def moe_text(n_layers: int, experts: int = 8) -> str:
    """`n_layers` mixture-of-experts layers: a softmax router, top-1 one-hot dispatch, expert
    einsums (experts on Y, the dispatched batch constrained to X), combine, residual; grad
    (~100 ops per layer)."""

    def layer(x: jax.Array, p: dict[str, jax.Array]) -> jax.Array:
        top = jax.nn.softmax(x @ p["router"], -1)
        disp = jax.nn.one_hot(jnp.argmax(top, -1), experts) * top
        xe = jnp.einsum("bte,btd->ebd", disp, x)
        xe = jax.lax.with_sharding_constraint(xe, _ns("Y", "X", None))
        h = jax.nn.gelu(jnp.einsum("ebd,edh->ebh", xe, p["w1"]))
        ye = jnp.einsum("ebh,ehd->ebd", h, p["w2"])
        return x + jnp.einsum("bte,ebd->btd", disp, ye)

    def f(x: jax.Array, ps: list[dict[str, jax.Array]]) -> jax.Array:
        for p in ps:
            x = layer(x, p)
        return jnp.mean(x * x)

    ps = [
        {"router": _f32(32, experts), "w1": _f32(experts, 32, 64), "w2": _f32(experts, 64, 32)}
        for _ in range(n_layers)
    ]
    psh = [{"router": _ns(), "w1": _ns("Y", None, None), "w2": _ns("Y", None, None)}] * n_layers
    g = jax.grad(f, argnums=1)
    return jax.jit(g, in_shardings=(_ns("X", None, None), psh)).lower(_f32(8, 16, 32), ps).as_text()


@functools.cache
def mixer_text(n_layers: int) -> str:
    """`n_layers` MLP-Mixer blocks: a token-mixing MLP (across the sequence, transposed) and a
    channel-mixing MLP, each a GELU residual; grad (~100 ops per layer)."""

    def f(x: jax.Array, ws: list[tuple[jax.Array, jax.Array]]) -> jax.Array:
        for w1, w2 in ws:
            x = x + jnp.swapaxes(jax.nn.gelu(jnp.swapaxes(x, 1, 2) @ w1), 1, 2)
            x = x + jax.nn.gelu(x @ w2)
        return jnp.mean(x * x)

    ws = [(_f32(16, 16), _f32(32, 32)) for _ in range(n_layers)]
    shardings = (_ns("X", None, "Y"), [(_ns(None, "Y"), _ns("Y", None))] * n_layers)
    g = jax.grad(f, argnums=1)
    return jax.jit(g, in_shardings=shardings).lower(_f32(8, 16, 32), ws).as_text()


@functools.cache
def decode_text(n_layers: int) -> str:
    """A decode step over `n_layers` KV caches f32[8, 32, 64] laid out [batch.X, seq.Y, -]: each
    layer a dense layer of the running state and a one-row `dynamic_update_slice` of its cache
    at the step's position, the entry's scalar argument (a start `pin_hazards.value_bounds`
    cannot bound: every update is a pin hazard the export asks about; ~10 ops per layer)."""

    def f(caches: list[jax.Array], x: jax.Array, pos: jax.Array) -> tuple[Any, jax.Array]:
        out = []
        for c in caches:
            x = jnp.tanh(x @ jnp.ones((64, 64), jnp.float32))
            c = jax.lax.dynamic_update_slice(c, x[:, None, :], (0, pos, 0))
            out.append(c)
            x = x + c.sum(1)
        return out, x

    caches = [_f32(8, 32, 64) for _ in range(n_layers)]
    shardings = ([_ns("X", "Y", None)] * n_layers, _ns("X"), _ns())
    scalar = jax.ShapeDtypeStruct((), jnp.int32)
    return jax.jit(f, in_shardings=shardings).lower(caches, _f32(8, 64), scalar).as_text()


# kind -> (row label suffix, text of an N-layer module)
STACK_KINDS: dict[str, tuple[str, Callable[[int], str]]] = {
    "identical": ("", lambda n: transformer_stack_text(n)),
    "distinct": ("d", lambda n: transformer_stack_text(n, distinct=True)),
    "scan": ("s", scanned_stack_text),
    "conv": ("c", convnet_text),
    "moe": ("m", moe_text),
    "mixer": ("x", mixer_text),
    "decode": ("k", decode_text),
}
# names for several kinds at once
STACK_GROUPS = {
    "both": ("identical", "distinct"),
    "shapes": ("scan", "conv", "moe", "mixer"),
    "all": tuple(STACK_KINDS),
}


def stack_kinds(stack: str) -> tuple[str, ...]:
    """The kinds a `--stack` value names: a kind, a group (both, shapes, all) or a comma list."""
    out: list[str] = []
    for name in stack.split(","):
        kinds = STACK_GROUPS.get(name, (name,))
        for kind in kinds:
            if kind not in STACK_KINDS:
                known = ", ".join([*STACK_KINDS, *STACK_GROUPS])
                raise SystemExit(f"error: --stack {name}: not one of {known}")
            if kind not in out:
                out.append(kind)
    return tuple(out)


def workloads(layers: str, stack: str) -> list[tuple[str, int, str]]:
    """(label, layers, text) for each requested depth and model kind (`stack_kinds`): the
    label is the layer count and the kind's suffix (`96d`, `16s`, `16c`, `16m`, `16x`)."""
    out = []
    for n in (int(s) for s in layers.split(",")):
        for kind in stack_kinds(stack):
            suffix, text_of = STACK_KINDS[kind]
            out.append((f"{n}{suffix}", n, text_of(n)))
    return out


def best_of(
    fn: Callable[[], Any], k: int, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, float]:
    """(best, median) time of `k` runs of `fn`, in seconds (wall time, or `clock`'s)."""
    times = []
    for _ in range(k):
        t0 = clock()
        fn()
        times.append(clock() - t0)
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
