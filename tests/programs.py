"""Small JAX programs that tests lower to StableHLO + sdy (the shapes JAX really emits)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


@functools.cache
def mesh(shape: tuple[int, ...] = (4, 2), names: tuple[str, ...] = ("x", "y")) -> jax.sharding.Mesh:
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))


def ns(*spec: Any) -> NamedSharding:
    return NamedSharding(mesh(), P(*spec))


def sds(shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def _mlp() -> tuple[Callable, tuple, dict]:
    def f(x, w1, w2):
        return jax.nn.relu(x @ w1) @ w2

    return f, (sds((16, 32)), sds((32, 64)), sds((64, 32))), dict(
        in_shardings=(ns("x", None), ns(None, "y"), None), out_shardings=ns("x", None)
    )


def _wsc() -> tuple[Callable, tuple, dict]:
    def f(x, w):
        h = jnp.tanh(x @ w)
        h = jax.lax.with_sharding_constraint(h, ns(("x", "y"), P.UNCONSTRAINED))
        return h * 2.0

    return f, (sds((16, 32)), sds((32, 16))), dict(in_shardings=(ns("x"), None))


def _transformer() -> tuple[Callable, tuple, dict]:
    def f(x, wq, wk, wv, wo, w1, w2):
        q, k, v = x @ wq, x @ wk, x @ wv
        s = jnp.einsum("bsd,btd->bst", q, k) / 4.0
        a = jax.nn.softmax(s, axis=-1)
        x = x + jnp.einsum("bst,btd->bsd", a, v) @ wo
        x = x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)
        return x + jax.nn.gelu(x @ w1) @ w2

    d = 16
    args = (sds((4, 8, d)), *[sds((d, d))] * 4, sds((d, 4 * d)), sds((4 * d, d)))
    return f, args, dict(in_shardings=(ns("x"), *[ns(None, "y")] * 3, ns("y"), ns(None, "y"), ns("y")))


def _grad() -> tuple[Callable, tuple, dict]:
    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

    return jax.grad(loss), (sds((8, 4)), sds((16, 8)), sds((16, 4))), dict(
        in_shardings=(None, ns("x"), ns("x"))
    )


def _fori() -> tuple[Callable, tuple, dict]:
    def f(x):
        return jax.lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) + i, x)

    return f, (sds((8, 8)),), dict(in_shardings=(ns("x", "y"),))


def _cond() -> tuple[Callable, tuple, dict]:
    def f(p, x):
        return jax.lax.cond(p > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)

    return f, (sds((), jnp.float32), sds((8, 8))), dict(in_shardings=(None, ns("x")))


def _scan() -> tuple[Callable, tuple, dict]:
    def f(xs, c0):
        def step(c, x):
            c = jnp.tanh(c + x)
            return c, c.sum()

        return jax.lax.scan(step, c0, xs)

    return f, (sds((5, 8, 4)), sds((8, 4))), dict(in_shardings=(ns(None, "x"), ns("x")))


def _shard_map(body: Callable, in_specs: Any, out_specs: Any, args: tuple) -> tuple:
    sm = jax.shard_map(body, mesh=mesh(), in_specs=in_specs, out_specs=out_specs, check_vma=False)
    return sm, args, {}


def _sm_psum() -> tuple:
    def body(a, b):
        return jax.lax.psum(a @ b, "y")

    return _shard_map(body, (P("x", "y"), P("y", None)), P("x", None), (sds((8, 16)), sds((16, 8))))


def _sm_all_gather() -> tuple:
    def body(a):
        return jax.lax.all_gather(a, "x", tiled=True)

    return _shard_map(body, (P("x", None),), P(None, None), (sds((8, 4)),))


def _sm_psum_scatter() -> tuple:
    def body(a, b):
        return jax.lax.psum_scatter(a @ b, "y", scatter_dimension=1, tiled=True)

    return _shard_map(body, (P("x", "y"), P("y", None)), P("x", "y"), (sds((8, 16)), sds((16, 8))))


def _sm_all_to_all() -> tuple:
    def body(a):
        return jax.lax.all_to_all(a, "x", 0, 1, tiled=True)

    return _shard_map(body, (P("x", None),), P(None, "x"), (sds((16, 16)),))


def _sm_ppermute() -> tuple:
    def body(a):
        return jax.lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)])

    return _shard_map(body, (P("x"),), P("x"), (sds((8, 4)),))


def _gather_scatter() -> tuple[Callable, tuple, dict]:
    def f(table, idx, upd):
        g = table[idx]
        return g, table.at[idx].add(upd)

    return f, (sds((16, 8)), sds((4,), jnp.int32), sds((4, 8))), dict(
        in_shardings=(ns(None, "y"), None, None)
    )


def _conv() -> tuple[Callable, tuple, dict]:
    def f(x, k):
        return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    return f, (sds((8, 8, 8, 4)), sds((3, 3, 4, 8))), dict(in_shardings=(ns("x"), None))


def _sort() -> tuple[Callable, tuple, dict]:
    def f(x):
        return jnp.sort(x, axis=0), jnp.argsort(x, axis=1)

    return f, (sds((8, 16)),), dict(in_shardings=(ns(None, "x"),))


def _reduce_window() -> tuple[Callable, tuple, dict]:
    def f(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    return f, (sds((8, 8, 8, 4)),), dict(in_shardings=(ns("x"),))


def _iota_rng() -> tuple[Callable, tuple, dict]:
    def f(x):
        return x + jnp.arange(16, dtype=jnp.float32)[None, :] + jnp.cumsum(x, axis=1)

    return f, (sds((8, 16)),), dict(in_shardings=(ns("x"),))


def _nested_jit() -> tuple[Callable, tuple, dict]:
    @jax.jit
    def inner(a):
        return jnp.exp(a) * 3.0

    def f(x):
        return inner(x) + inner(x * 2.0)

    return f, (sds((8, 8)),), dict(in_shardings=(ns("x"),))


PROGRAMS: dict[str, Callable[[], tuple]] = {
    "mlp": _mlp,
    "wsc_unconstrained": _wsc,
    "transformer_layer": _transformer,
    "grad": _grad,
    "fori_loop": _fori,
    "cond": _cond,
    "scan": _scan,
    "shard_map_psum": _sm_psum,
    "shard_map_all_gather": _sm_all_gather,
    "shard_map_psum_scatter": _sm_psum_scatter,
    "shard_map_all_to_all": _sm_all_to_all,
    "shard_map_ppermute": _sm_ppermute,
    "gather_scatter": _gather_scatter,
    "conv": _conv,
    "sort": _sort,
    "reduce_window": _reduce_window,
    "iota_cumsum": _iota_rng,
    "nested_jit": _nested_jit,
}


@functools.cache
def lowered_text(name: str) -> str:
    """The `as_text()` of program `name`, lowered once per test session."""
    f, args, kw = PROGRAMS[name]()
    return jax.jit(f, **kw).lower(*args).as_text()


def random_args(name: str, seed: int = 0) -> list[np.ndarray]:
    _, args, _ = PROGRAMS[name]()
    rng = np.random.default_rng(seed)
    out = []
    for a in args:
        if np.issubdtype(a.dtype, np.integer):
            out.append(rng.integers(0, 4, size=a.shape).astype(a.dtype))
        else:
            out.append(rng.standard_normal(a.shape).astype(a.dtype))
    return out


def reference_outputs(name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    f, _, _ = PROGRAMS[name]()
    out = jax.jit(f)(*args)
    return [np.asarray(o) for o in jax.tree_util.tree_leaves(out)]


def lit_inputs() -> list[tuple[str, str]]:
    """Every `// -----` chunk of the lit suite's .mlir files that has a func, named
    `file#chunk`: the inputs the printer and parser tests run both ways."""
    from pathlib import Path

    lit = Path(__file__).parent / "lit"
    cases = []
    for path in sorted(lit.rglob("*.mlir")):
        for i, chunk in enumerate(path.read_text().split("// -----")):
            if "func.func" in chunk:
                cases.append((f"{path.relative_to(lit)}#{i}", chunk))
    return cases
