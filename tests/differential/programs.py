"""The JAX programs of the differential suite, lowered once per process.

Every program is lowered with `jax.jit(f, in_shardings=..., out_shardings=...).lower(...)` on a
`jax.make_mesh(..., axis_types=(AxisType.Auto,) * n)` mesh, so that propagation has work to do.
Some programs edit the lowered text afterwards (user priorities on argument shardings), which is
recorded in `Program.edit`. Shapes are small: the whole suite must run in a few minutes on two
cores.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

U = P.UNCONSTRAINED


@functools.cache
def mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> jax.sharding.Mesh:
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(names))


def mesh42() -> jax.sharding.Mesh:
    """The seed 001 mesh: data=4, model=2."""
    return mesh((4, 2), ("data", "model"))


def mesh24() -> jax.sharding.Mesh:
    """The seed 003 mesh: X=2, Y=4 (batch on X, hidden/heads on Y)."""
    return mesh((2, 4), ("X", "Y"))


def mesh_xy() -> jax.sharding.Mesh:
    return mesh((4, 2), ("x", "y"))


@dataclass
class Program:
    name: str
    fn: Callable[..., Any]
    args: Callable[[], list[np.ndarray]]
    mesh: Callable[[], jax.sharding.Mesh]
    in_specs: tuple[Any, ...]  # PartitionSpec or None per argument
    out_specs: Any = None  # PartitionSpec, tuple of them, or None (open)
    edit: Callable[[str], str] | None = None  # text rewrite after lowering
    rtol: float = 2e-4
    atol: float = 2e-4
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(*shape: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    return (_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _args(*specs: tuple[int, ...], scale: float = 1.0) -> Callable[[], list[np.ndarray]]:
    return lambda: [_f32(*s, seed=i, scale=scale) for i, s in enumerate(specs)]


def _ns(m: jax.sharding.Mesh, spec: Any) -> Any:
    if spec is None:
        return None
    if isinstance(spec, tuple) and not isinstance(spec, P):
        return tuple(_ns(m, s) for s in spec)
    return NamedSharding(m, spec)


@functools.cache
def lowered_text(name: str) -> str:
    """The program's lowered MLIR text (after its text edit, if any), cached per process."""
    p = PROGRAMS[name]
    m = p.mesh()
    args = p.args()
    in_sh = tuple(_ns(m, s) for s in p.in_specs)
    kwargs: dict[str, Any] = {"in_shardings": in_sh}
    if p.out_specs is not None:
        kwargs["out_shardings"] = _ns(m, p.out_specs)
    text = jax.jit(p.fn, **kwargs).lower(*args).as_text()
    if p.edit is not None:
        text = p.edit(text)
    return text


@functools.cache
def reference_outputs(name: str) -> tuple[np.ndarray, ...]:
    """The unsharded `jax.jit(f)` run on the program's inputs."""
    p = PROGRAMS[name]
    out = jax.jit(p.fn)(*p.args())
    return tuple(np.asarray(o) for o in jax.tree.leaves(out))


# ---------------------------------------------------------------------------------------------
# Text edits


def with_arg_priorities(prios: dict[int, int], open_dims: bool = True) -> Callable[[str], str]:
    """Put user priority `pN` on every non-empty dim of the given `@main` arguments' shardings
    (Shardy rejects a priority on an empty closed dim); with `open_dims`, every dim of those
    arguments is made open (`{"x", ?}pN`, `{?}`), so that the priorities decide the conflicts."""

    def edit(text: str) -> str:
        for idx, prio in prios.items():
            pat = re.compile(
                r"(%arg"
                + str(idx)
                + r": tensor<[^>]*> \{[^}]*?sdy\.sharding = #sdy\.sharding<@\w+, \[)(.*?)(\]>)"
            )
            m = pat.search(text)
            assert m, f"argument {idx} has no sharding to prioritise"
            dims = m.group(2)
            if open_dims:
                dims = re.sub(r"\{\}", "{?}", dims)
                dims = re.sub(r'(")\}', r"\1, ?}", dims)
            dims = re.sub(r'(["?])\}(?=,|$)', r"\1}p" + str(prio), dims)
            dims = dims.replace("{?}p" + str(prio), "{?}")
            text = text[: m.start(2)] + dims + text[m.end(2) :]
        return text

    return edit


# ---------------------------------------------------------------------------------------------
# Building blocks


def layernorm(x: jax.Array) -> jax.Array:
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5)


def wsc(x: jax.Array, *spec: Any, m: Callable[[], jax.sharding.Mesh] = mesh24) -> jax.Array:
    return jax.lax.with_sharding_constraint(x, NamedSharding(m(), P(*spec)))


# seed 001: tanh, two matmuls, sin
def mlp_seed001(x, w1, w2):
    x = jnp.tanh(x)
    z1 = jnp.einsum("ij,jk->ik", x, w1)
    z2 = jnp.einsum("ij,jk->ik", z1, w2)
    return jnp.sin(z2)


# seed 003: "2D finalized" FFN sublayer (batch.X, embed.Y activations; W_in X,Y; W_out Y,X)
def ffn_2d(x, w_in, w_out):
    residual = x
    x = layernorm(x)
    h = jnp.einsum("bse,eh->bsh", x, w_in)
    h = wsc(h, "X", None, "Y")
    h = jax.nn.gelu(h, approximate=False)
    y = jnp.einsum("bsh,he->bse", h, w_out)
    y = wsc(y, "X", None, "Y")
    return residual + y


# attention sublayer: heads on Y, batch on X, embed kernel on X
def attention_2d(x, wq, wk, wv, wo):
    xn = layernorm(x)
    q = jnp.einsum("bse,ehd->bshd", xn, wq)
    k = jnp.einsum("bse,ehd->bshd", xn, wk)
    v = jnp.einsum("bse,ehd->bshd", xn, wv)
    q = wsc(q, "X", None, "Y", None)
    s = jnp.einsum("bshd,bthd->bhst", q, k) / np.sqrt(q.shape[-1]).astype(np.float32)
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhst,bthd->bshd", p, v)
    y = jnp.einsum("bshd,hde->bse", o, wo)
    y = wsc(y, "X", None, "Y")
    return x + y


def transformer_layer(x, wq, wk, wv, wo, w_in, w_out):
    x = attention_2d(x, wq, wk, wv, wo)
    return ffn_2d(x, w_in, w_out)


B, S, E, H, D, F = 4, 8, 16, 4, 4, 32

_ATT_SHAPES = [(B, S, E), (E, H, D), (E, H, D), (E, H, D), (H, D, E)]
_ATT_SPECS = (
    P("X", None, "Y"),
    P("X", "Y", None),
    P("X", "Y", None),
    P("X", "Y", None),
    P("Y", None, "X"),
)
_FFN_SHAPES = [(E, F), (F, E)]
_FFN_SPECS = (P("X", "Y"), P("Y", "X"))


def stacked_layers(x, *ws):
    for i in range(0, len(ws), 6):
        x = transformer_layer(x, *ws[i : i + 6])
    return x


def grad_mlp(x, y, w1, w2):
    def loss(w1, w2):
        h = jax.nn.relu(x @ w1)
        return jnp.mean((h @ w2 - y) ** 2)

    return jax.grad(loss, argnums=(0, 1))(w1, w2)


def grad_ffn(x, w_in, w_out):
    return jax.grad(lambda a, b: jnp.sum(ffn_2d(x, a, b) ** 2))(w_in, w_out)


def adam_step(w, g, m, v):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    return w - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v


# shard_map (seed 000): psum matmul, fully manual
def shmap_psum_matmul(a, b):
    def body(a_blk, b_blk):
        return jax.lax.psum(a_blk @ b_blk, "y")

    f = jax.shard_map(
        body, mesh=mesh_xy(), in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None)
    )
    return jnp.tanh(f(a, b))


# partial-manual: only "x" is manual, "y" stays automatic inside
def shmap_partial_manual(a, w):
    def body(a_blk, w_blk):
        h = a_blk @ w_blk
        return jax.lax.psum(h, "x")

    f = jax.shard_map(
        body,
        mesh=mesh_xy(),
        in_specs=(P(None, "x"), P("x", None)),
        out_specs=P(),
        axis_names={"x"},
        check_vma=False,
    )
    return f(jnp.sin(a), w) * 2.0


def shmap_all_gather(x):
    f = jax.shard_map(
        lambda b: jax.lax.all_gather(b, "x", tiled=True) + 1.0,
        mesh=mesh_xy(),
        in_specs=P("x", "y"),
        out_specs=P(None, "y"),
        check_vma=False,
    )
    return f(x) * 3.0


def reshape_split(x):
    # (8, 16) with dim 0 on x=4 -> (2, 4, 16): needs x:(1)2 and x:(2)2
    return jnp.cos(x.reshape(2, 4, 16)) * 2.0


def reshape_merge(x):
    return jnp.exp(x.reshape(4 * 8, 16) * 0.1)


def reshape_subaxis_out(x):
    # (16, 4) on ("x","y") -> (4, 4, 4) -> sum over the last
    return jnp.sum(x.reshape(4, 4, 4), axis=-1)


def fori(x, w):
    def body(i, c):
        return jnp.tanh(c @ w) + c

    return jax.lax.fori_loop(0, 3, body, x)


def cond_prog(p, x, w):
    return jax.lax.cond(p > 0, lambda: jnp.sin(x @ w), lambda: jnp.cos(x) @ w)


def scan_layers(x, ws):
    def body(c, w):
        return jax.nn.relu(c @ w), jnp.sum(c, axis=-1)

    return jax.lax.scan(body, x, ws)


def gather_prog(table, idx):
    return jnp.take(table, idx, axis=0) * 2.0


def scatter_prog(x, idx, upd):
    return x.at[idx].add(upd)


def conv_prog(img, k):
    y = jax.lax.conv_general_dilated(
        img, k, window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    return jax.nn.relu(y)


def non_divisible(x, w):
    # dim of size 6 after the slice: "data"=4 does not divide it
    return jnp.tanh(x[:6] @ w)


def non_divisible_arg(x):
    return jnp.sin(x) + 1.0


def conflict_add(a, b):
    return jnp.tanh(a + b)


def conflict_matmul(a, b):
    return a @ b


def wsc_unconstrained(x, w):
    h = x @ w
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh_xy(), P("x", U)))
    return jnp.exp(h * 0.1) @ w.T


def wsc_unconstrained_2(x):
    h = jnp.sin(x)
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh_xy(), P(U, "y")))
    return jnp.sum(h, axis=0)


def nested_calls(x, w):
    g = jax.jit(lambda a, b: jnp.tanh(a @ b))
    return g(g(x, w), w.T @ w)


def reduce_softmax(x):
    return jax.nn.softmax(x, axis=-1).sum(axis=0)


def concat_pad_slice(a, b):
    c = jnp.concatenate([a, b], axis=1)
    c = jnp.pad(c, ((0, 0), (2, 2)))
    return c[:, 1:-1] * 2.0


def dyn_slice(x, i):
    s = jax.lax.dynamic_slice_in_dim(x, i, 4, axis=1)
    return jax.lax.dynamic_update_slice_in_dim(x, s * 2.0, 0, axis=1)


def batched_einsum(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


def causal_mask(q, k):
    s = q @ k.T
    n = s.shape[0]
    mask = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    return jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1)


def argmax_prog(x):
    return jnp.argmax(x, axis=1), jnp.max(x, axis=0)


def broadcast_prog(x, b):
    return x * b[None, :] + jnp.mean(x, axis=1, keepdims=True)


def _int_args(*arrays: Callable[[], np.ndarray]) -> Callable[[], list[np.ndarray]]:
    return lambda: [a() for a in arrays]


_PROGRAM_LIST: list[Program] = [
    Program(
        "mlp_seed001",
        mlp_seed001,
        _args((16, 128), (128, 256), (256, 10)),
        mesh42,
        (P("data", None), P(None, "model"), None),
        notes="seed 001: megatron w1, w2 left to propagation",
        rtol=1e-3,
        atol=1e-3,
    ),
    Program(
        "ffn_2d_finalized",
        ffn_2d,
        _args((B, S, E), *_FFN_SHAPES),
        mesh24,
        (P("X", None, "Y"), *_FFN_SPECS),
        out_specs=P("X", None, "Y"),
        notes="seed 003 FFN, GSPMD 2D finalized",
    ),
    Program(
        "attention_2d",
        attention_2d,
        _args(*_ATT_SHAPES),
        mesh24,
        _ATT_SPECS,
        out_specs=P("X", None, "Y"),
    ),
    Program(
        "ffn_2d_unannotated_weights",
        ffn_2d,
        _args((B, S, E), *_FFN_SHAPES),
        mesh24,
        (P("X", None, "Y"), None, None),
        notes="weights left to propagation; activations constrained",
    ),
    Program(
        "stacked_layers_2",
        stacked_layers,
        _args((B, S, E), *(_ATT_SHAPES[1:] + _FFN_SHAPES) * 2),
        mesh24,
        (P("X", None, "Y"), *(_ATT_SPECS[1:] + _FFN_SPECS) * 2),
        out_specs=P("X", None, "Y"),
    ),
    Program(
        "grad_mlp",
        grad_mlp,
        _args((16, 32), (16, 8), (32, 64), (64, 8)),
        mesh42,
        (P("data", None), P("data", None), P(None, "model"), None),
    ),
    Program(
        "grad_ffn_2d",
        grad_ffn,
        _args((B, S, E), *_FFN_SHAPES),
        mesh24,
        (P("X", None, "Y"), *_FFN_SPECS),
        rtol=1e-3,
        atol=1e-3,
    ),
    Program(
        "adam_step",
        adam_step,
        lambda: [
            _f32(32, 16, seed=0),
            _f32(32, 16, seed=1),
            _f32(32, 16, seed=2),
            np.abs(_f32(32, 16, seed=3)),
        ],
        mesh_xy,
        (P("x", "y"), None, None, None),
    ),
    Program(
        "shmap_psum_matmul",
        shmap_psum_matmul,
        _args((16, 8), (8, 12)),
        mesh_xy,
        (None, None),
        notes="seed 000 psum matmul, fully manual",
    ),
    Program(
        "shmap_partial_manual",
        shmap_partial_manual,
        _args((8, 16), (16, 12)),
        mesh_xy,
        (P(None, None), None),
    ),
    Program("shmap_all_gather", shmap_all_gather, _args((16, 8)), mesh_xy, (None,)),
    Program("reshape_split_subaxes", reshape_split, _args((8, 16)), mesh_xy, (P("x", None),)),
    Program("reshape_merge", reshape_merge, _args((4, 8, 16)), mesh_xy, (P("x", "y", None),)),
    Program(
        "reshape_subaxis_out", reshape_subaxis_out, _args((16, 4)), mesh_xy, (P(("x", "y"), None),)
    ),
    Program(
        "fori_loop",
        fori,
        _args((8, 16), (16, 16), scale=0.3),
        mesh_xy,
        (P("x", None), P(None, "y")),
    ),
    Program(
        "cond",
        cond_prog,
        lambda: [np.float32(1.0), _f32(8, 16, seed=1), _f32(16, 8, seed=2)],
        mesh_xy,
        (None, P("x", None), P(None, "y")),
    ),
    Program(
        "scan_stacked",
        scan_layers,
        _args((8, 16), (3, 16, 16), scale=0.3),
        mesh_xy,
        (P("x", None), P(None, None, "y")),
    ),
    Program(
        "gather_take",
        gather_prog,
        lambda: [_f32(32, 16, seed=0), _rng(1).integers(0, 32, size=(8,)).astype(np.int32)],
        mesh_xy,
        (P(None, "y"), P("x")),
    ),
    Program(
        "scatter_add",
        scatter_prog,
        lambda: [
            _f32(32, 16, seed=0),
            _rng(1).permutation(32)[:8].astype(np.int32),
            _f32(8, 16, seed=2),
        ],
        mesh_xy,
        (P(None, "y"), None, P(None, "y")),
    ),
    Program(
        "conv_nhwc",
        conv_prog,
        _args((8, 8, 8, 4), (3, 3, 4, 8)),
        mesh_xy,
        (P("x", None, None, None), P(None, None, None, "y")),
    ),
    Program(
        "non_divisible_slice",
        non_divisible,
        _args((8, 16), (16, 8)),
        mesh42,
        (P("data", None), None),
        notes="a 6-row intermediate and result on data=4",
    ),
    Program(
        "non_divisible_wsc",
        lambda x: jnp.sin(
            jax.lax.with_sharding_constraint(x[:6] * 2.0, NamedSharding(mesh_xy(), P("x", U)))
        ),
        _args((8, 16)),
        mesh_xy,
        (None,),
    ),
    Program(
        "conflict_add",
        conflict_add,
        _args((16, 16), (16, 16)),
        mesh_xy,
        (P("x", None), P("y", None)),
        notes="two closed argument shardings disagree on dim 0",
    ),
    Program(
        "conflict_matmul",
        conflict_matmul,
        _args((16, 16), (16, 16)),
        mesh_xy,
        (P("x", "y"), P("x", "y")),
        notes="lhs and rhs both use x on different factors",
    ),
    Program(
        "wsc_unconstrained",
        wsc_unconstrained,
        _args((16, 8), (8, 16)),
        mesh_xy,
        (None, P(None, "y")),
    ),
    Program("wsc_unconstrained_2", wsc_unconstrained_2, _args((16, 8)), mesh_xy, (None,)),
    Program(
        "priority_p0_lhs",
        conflict_add,
        _args((16, 16), (16, 16)),
        mesh_xy,
        (P("x", None), P("y", None)),
        edit=with_arg_priorities({0: 0, 1: 1}),
        notes="user priorities: arg0 p0, arg1 p1",
    ),
    Program(
        "priority_p0_rhs",
        conflict_add,
        _args((16, 16), (16, 16)),
        mesh_xy,
        (P("x", None), P("y", None)),
        edit=with_arg_priorities({0: 1, 1: 0}),
        notes="user priorities: arg0 p1, arg1 p0",
    ),
    Program(
        "priority_mlp",
        mlp_seed001,
        _args((16, 128), (128, 256), (256, 16)),
        mesh42,
        (P("data", None), P(None, "model"), P("data", None)),
        edit=with_arg_priorities({0: 1, 1: 0, 2: 2}),
        rtol=1e-3,
        atol=1e-3,
    ),
    Program(
        "nested_calls",
        nested_calls,
        _args((16, 16), (16, 16), scale=0.3),
        mesh_xy,
        (P("x", None), P(None, "y")),
    ),
    Program("softmax_reduce", reduce_softmax, _args((16, 32)), mesh_xy, (P("x", "y"),)),
    Program(
        "concat_pad_slice",
        concat_pad_slice,
        _args((16, 8), (16, 8)),
        mesh_xy,
        (P("x", None), P(None, "y")),
    ),
    Program(
        "dynamic_slice_update",
        dyn_slice,
        lambda: [_f32(16, 16, seed=0), np.int32(3)],
        mesh_xy,
        (P("x", "y"), None),
    ),
    Program(
        "batched_einsum",
        batched_einsum,
        _args((8, 8, 16), (8, 16, 8)),
        mesh_xy,
        (P("x", None, "y"), None),
    ),
    Program(
        "causal_mask_softmax", causal_mask, _args((16, 8), (16, 8)), mesh_xy, (P("x", None), None)
    ),
    Program("argmax_max", argmax_prog, _args((16, 8)), mesh_xy, (P("x", "y"),)),
    Program(
        "broadcast_mean", broadcast_prog, _args((16, 8), (8,)), mesh_xy, (P("x", None), P("y"))
    ),
]

# -- more real-program shapes (remat, custom_vjp, caches, embeddings, sorting, linalg, FFT) ----


def remat_mlp_grad(x, w1, w2):
    def loss(w1, w2):
        f = jax.checkpoint(lambda x: jax.nn.gelu(x @ w1) @ w2)
        return jnp.sum(f(x) ** 2)

    return jax.grad(loss, argnums=(0, 1))(w1, w2)


@jax.custom_vjp
def _clip_grad(x):
    return x


_clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))


def custom_vjp_grad(x, w):
    return jax.grad(lambda w: jnp.sum(_clip_grad(x @ w) ** 2))(w)


def kv_cache_update(cache, new, pos):
    return jax.lax.dynamic_update_slice(cache, new, (0, pos, 0))


def embed_xent_grad(tokens, table, labels):
    def loss(table):
        logits = table[tokens] @ table.T
        lp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(lp, labels[..., None], axis=-1))

    return jax.grad(loss)(table)


def top_k_prog(x):
    return jax.lax.top_k(x, 4)


def rfft_prog(x):
    return jnp.abs(jnp.fft.rfft(x, axis=-1))


def cholesky_solve(a):
    s = a @ a.T + 8 * jnp.eye(a.shape[0])
    return jnp.linalg.cholesky(s), jnp.linalg.solve(s, a)


def scan_over_layers(x, ws):
    return jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0]


def adam_update(p, g, m, v):
    m = 0.9 * m + 0.1 * g
    v = 0.99 * v + 0.01 * g * g
    return p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v


def while_dynamic_slices(x):
    def body(c):
        i, acc = c
        return i + 1, acc + jax.lax.dynamic_slice_in_dim(x, i * 2, 2, axis=0).sum(0)

    return jax.lax.while_loop(lambda c: c[0] < 4, body, (0, jnp.zeros(x.shape[1])))[1]


def vmap_matmul(x, w):
    return jax.vmap(lambda r: jnp.tanh(r @ w))(x)


def argsort_cumsum(x):
    return jnp.argsort(x, axis=0), jnp.cumsum(x, axis=1)


def pad_strided_conv(x, k):
    x = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return jax.lax.conv_general_dilated(
        x, k, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def _ints(shape: tuple[int, ...], high: int, seed: int) -> np.ndarray:
    return _rng(seed).integers(0, high, size=shape).astype(np.int32)


_MORE_PROGRAMS: list[Program] = [
    Program(
        "remat_mlp_grad",
        remat_mlp_grad,
        _args((16, 32), (32, 64), (64, 32), scale=0.3),
        mesh24,
        (P("X"), P(None, "Y"), P("Y")),
        rtol=1e-3,
        atol=1e-3,
    ),
    Program(
        "custom_vjp_grad",
        custom_vjp_grad,
        _args((16, 32), (32, 16), scale=0.3),
        mesh24,
        (P("X"), P(None, "Y")),
        rtol=1e-3,
        atol=1e-3,
    ),
    Program(
        "kv_cache_update",
        kv_cache_update,
        lambda: [_f32(8, 64, 16, seed=0), _f32(8, 1, 16, seed=1), np.int32(5)],
        mesh24,
        (P("X", None, "Y"), P("X"), None),
    ),
    Program(
        "embed_xent_grad",
        embed_xent_grad,
        lambda: [_ints((8, 16), 64, 0), _f32(64, 32, seed=1, scale=0.3), _ints((8, 16), 64, 2)],
        mesh24,
        (P("X"), P(None, "Y"), P("X")),
        rtol=1e-3,
        atol=1e-3,
    ),
    Program("top_k", top_k_prog, _args((16, 64)), mesh24, (P("X", "Y"),)),
    Program("rfft", rfft_prog, _args((16, 64)), mesh24, (P("X"),), rtol=1e-3, atol=1e-3),
    Program(
        "cholesky_solve", cholesky_solve, _args((16, 16)), mesh24, (P("X"),), rtol=1e-3, atol=1e-3
    ),
    Program(
        "scan_over_layers",
        scan_over_layers,
        _args((16, 32), (6, 32, 32), scale=0.3),
        mesh24,
        (P("X"), P(None, None, "Y")),
    ),
    Program(
        "adam_update",
        adam_update,
        lambda: [
            _f32(32, 64, seed=0),
            _f32(32, 64, seed=1),
            _f32(32, 64, seed=2),
            np.abs(_f32(32, 64, seed=3)),
        ],
        mesh24,
        (P("X", "Y"), None, None, None),
    ),
    Program("while_dynamic_slices", while_dynamic_slices, _args((8, 16)), mesh24, (P(None, "Y"),)),
    Program("vmap_matmul", vmap_matmul, _args((16, 32), (32, 8)), mesh24, (P("X"), P(None, "Y"))),
    Program(
        "argsort_cumsum",
        argsort_cumsum,
        _args((16, 32)),
        mesh24,
        (P("X", "Y"),),
        rtol=1e-3,
        atol=1e-3,
    ),
    Program(
        "pad_strided_conv",
        pad_strided_conv,
        _args((8, 16, 16, 4), (3, 3, 4, 8)),
        mesh24,
        (P("X"), None),
        rtol=1e-3,
        atol=1e-3,
    ),
]


PROGRAMS: dict[str, Program] = {p.name: p for p in [*_PROGRAM_LIST, *_MORE_PROGRAMS]}
