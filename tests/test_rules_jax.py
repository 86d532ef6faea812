"""Every op JAX emits in typical programs has a sharding rule or is deliberately rule-less
(`NO_RULE`, with its reason), and the rules build without error on real lowered modules."""

from __future__ import annotations

import glob
import os

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from shardc.backend.importer import import_text  # noqa: E402
from shardc.dialect.rules import NO_RULE, registered_ops, rule_for  # noqa: E402
from shardc.dialect.rules.custom_call import (  # noqa: E402
    ELEMENTWISE_TARGETS,
    NO_RULE_TARGETS,
    call_target,
)
from shardc.dialect.rules.registry import RULE_ATTR  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mlp(x, w1, w2):  # type: ignore[no-untyped-def]
    return jnp.tanh(jax.nn.relu(x @ w1) @ w2).sum()


def _attention(q, k, v):  # type: ignore[no-untyped-def]
    s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1])
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def _conv(img, ker):  # type: ignore[no-untyped-def]
    y = lax.conv_general_dilated(img, ker, (1, 1), "SAME")
    return lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID").mean()


def _misc(x, idx, m):  # type: ignore[no-untyped-def]
    a = jnp.sort(x, axis=1) + jnp.cumsum(x, axis=1)
    b = x[idx].sum() + x.at[idx].add(1.0).sum() + x.at[idx].set(2.0).sum()
    c = jnp.take_along_axis(x, jnp.zeros((8, 3), jnp.int32), axis=1).sum()
    d = lax.top_k(x, 3)[0].sum() + jnp.fft.rfft(x).real.sum() + jnp.flip(x, 0).sum()
    e = jnp.pad(x, ((1, 2), (0, 0))).sum() + jnp.concatenate([x, x], axis=1).sum()
    f = lax.dynamic_update_slice(x, lax.dynamic_slice(x, (idx[0], 0), (4, 16)), (idx[1], 0))
    g = lax.fori_loop(0, 3, lambda i, y: y * 2.0, x).sum()
    h = lax.cond(x.sum() > 0, lambda y: y + 1.0, lambda y: y - 1.0, x).sum()
    ch = jnp.linalg.cholesky(m @ m.T + 8 * jnp.eye(8)).sum()
    r = jax.random.normal(jax.random.key(0), (4, 4)).sum()
    return a.sum() + b + c + d + e + f.sum() + g + h + ch + r + jax.scipy.special.erf(x).sum()


def _collectives(a):  # type: ignore[no-untyped-def]
    b = lax.psum(a, "y")
    c = lax.all_gather(a, "y", axis=1, tiled=True)
    d = lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)])
    e = lax.all_to_all(a, "x", 0, 1, tiled=True)
    s = lax.psum_scatter(c, "y", scatter_dimension=1, tiled=True)
    return b + d + s + lax.axis_index("x").astype(jnp.float32) + e.sum()


def _programs():  # type: ignore[no-untyped-def]
    f32 = jnp.float32
    S = jax.ShapeDtypeStruct
    yield "mlp", _mlp, (S((16, 32), f32), S((32, 64), f32), S((64, 32), f32))
    yield (
        "mlp_grad",
        jax.grad(_mlp, argnums=(1, 2)),
        (
            S((16, 32), f32),
            S((32, 64), f32),
            S((64, 32), f32),
        ),
    )
    yield "attention", _attention, (S((2, 8, 16), f32),) * 3
    yield (
        "attention_grad",
        jax.grad(lambda q, k, v: _attention(q, k, v).sum()),
        (S((2, 8, 16), f32),) * 3,
    )
    yield "conv_grad", jax.grad(_conv, argnums=(0, 1)), (S((2, 3, 8, 8), f32), S((4, 3, 3, 3), f32))
    if len(jax.devices()) >= 8:
        from jax.sharding import PartitionSpec as P

        auto = (jax.sharding.AxisType.Auto,) * 2
        mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=auto)
        spec = P("x", "y")
        fn = jax.shard_map(_collectives, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
        yield "shard_map_collectives", fn, (S((16, 8), f32),)
    yield "misc", _misc, (S((8, 16), f32), S((4,), jnp.int32), S((8, 8), f32))


def _module_texts():  # type: ignore[no-untyped-def]
    for name, fn, args in _programs():
        yield name, jax.jit(fn).lower(*args).as_text()
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir"))):
        with open(path, encoding="utf-8") as f:
            yield os.path.basename(path), f.read()


@pytest.fixture(scope="module")
def modules():  # type: ignore[no-untyped-def]
    return [(name, import_text(text, name)) for name, text in _module_texts()]


def test_every_emitted_op_has_a_rule_or_is_listed(modules) -> None:  # type: ignore[no-untyped-def]
    known = set(registered_ops())
    missing: dict[str, str] = {}
    seen: set[str] = set()
    for name, module in modules:
        for op in module.op.walk():
            seen.add(op.name)
            if op.name not in known and op.name not in NO_RULE:
                missing.setdefault(op.name, name)
            rule_for(op)  # builds without error
    assert not missing, f"ops with neither a rule nor a NO_RULE entry (op: program): {missing}"
    # the programs do exercise the main families
    for must in (
        "stablehlo.dot_general",
        "stablehlo.gather",
        "stablehlo.scatter",
        "stablehlo.convolution",
        "stablehlo.reduce_window",
        "stablehlo.sort",
        "stablehlo.all_to_all",
    ):
        assert must in seen


def test_custom_calls_are_accounted_for(modules) -> None:  # type: ignore[no-untyped-def]
    for name, module in modules:
        for op in module.op.walk():
            if op.name != "stablehlo.custom_call":
                continue
            target = call_target(op)
            if op.attributes.get(RULE_ATTR) is not None:
                rule = rule_for(op)
                assert rule is not None and rule.is_custom, (name, target)
            elif target in ELEMENTWISE_TARGETS:
                assert rule_for(op) is not None
            else:
                assert rule_for(op) is None or target not in NO_RULE_TARGETS, (name, target)


def test_rule_of_every_op_is_structurally_valid(modules) -> None:  # type: ignore[no-untyped-def]
    from shardc.dialect.rules.builder import shape_of
    from shardc.dialect.rules.syntax import check_rule

    for name, module in modules:
        for op in module.op.walk():
            rule = rule_for(op)
            if rule is None:
                continue
            assert check_rule(rule) is None, (name, op.name, check_rule(rule))
            assert len(rule.operand_dims) == len(op.operands), (name, op.name)
            assert len(rule.result_dims) == len(op.results), (name, op.name)
            shapes = [shape_of(v) for v in list(op.operands) + list(op.results)]
            maps = list(rule.operand_dims) + list(rule.result_dims)
            for shape, m in zip(shapes, maps, strict=True):
                assert len(shape) == len(m), (name, op.name)
