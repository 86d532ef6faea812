"""shardc.jit on meshes with Explicit axes (jax.make_mesh's default), Auto axes and both, and
with the mesh `jax.set_mesh` sets: results typed exactly as jax.jit's (`jax.typeof`), the same
numbers, reshard / auto_axes / explicit_axes / unreduced as JAX lowers them, and errors for
what only propagation could do on an Explicit axis. 8 virtual CPU devices."""

import contextlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, auto_axes, explicit_axes, reshard
from jax.sharding import PartitionSpec as P

import shardc

EXPLICIT = jax.make_mesh((4, 2), ("x", "y"))
AUTO = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
MIXED = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
MESHES = {"explicit": EXPLICIT, "auto": AUTO, "mixed": MIXED}
RNG = np.random.default_rng(5)
A_NP = RNG.standard_normal((8, 16)).astype(np.float32)
W_NP = (RNG.standard_normal((16, 4)) * 0.1).astype(np.float32)


def arrays(mesh):
    return (jax.device_put(A_NP, NamedSharding(mesh, P("x"))),
            jax.device_put(W_NP, NamedSharding(mesh, P(None, "y"))))


def same_as_jax_jit(f, args, *, ctx=None, jit_kw=None, shardc_kw=None):
    """Run `f` through jax.jit and shardc.jit; the results' types and numbers must agree."""
    with jax.set_mesh(ctx) if ctx is not None else contextlib.nullcontext():
        ref = jax.jit(f, **(jit_kw or {}))(*args)
        got = shardc.jit(f, **(shardc_kw or {}))(*args)
    assert jax.tree.map(jax.typeof, got) == jax.tree.map(jax.typeof, ref)
    for g, r in zip(jax.tree.leaves(got), jax.tree.leaves(ref), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-5, atol=1e-5)
        assert g.sharding.mesh.axis_types == r.sharding.mesh.axis_types
    return got, ref


@pytest.mark.parametrize("kind", sorted(MESHES))
def test_results_typed_as_jax_jits(kind: str) -> None:
    mesh = MESHES[kind]
    a, w = arrays(mesh)
    got, _ = same_as_jax_jit(lambda a, w: (jnp.tanh(a @ w), (a * 2).sum(0)), (a, w),
                             shardc_kw={"mesh": mesh})
    expected = {"explicit": "float32[8@x,4@y]", "auto": "float32[8,4]", "mixed": "float32[8@x,4]"}
    assert str(jax.typeof(got[0])) == expected[kind]
    # the mesh from jax.set_mesh, no mesh= (the arrays' own layouts, bare PartitionSpecs)
    same_as_jax_jit(lambda a, w: jnp.tanh(a @ w), (a, w), ctx=mesh)
    f = shardc.jit(lambda v: v * 2, in_shardings=P("x"), out_shardings=P(None, "x"))
    with jax.set_mesh(mesh):
        out = f(A_NP)
        ref = jax.jit(lambda v: v * 2, in_shardings=P("x"), out_shardings=P(None, "x"))(A_NP)
        assert jax.typeof(out) == jax.typeof(ref)
        # and they mix with the user's arrays on the next line
        b = jax.device_put(A_NP, P(None, "x"))
        assert jax.typeof(out + b) == jax.typeof(ref + b)
        np.testing.assert_allclose(np.asarray(out + b), 3 * A_NP, rtol=1e-6)


@pytest.mark.parametrize("kind", ["explicit", "mixed"])
def test_reshard_auto_axes_and_unreduced(kind: str) -> None:
    mesh = MESHES[kind]
    a, w = arrays(mesh)
    # reshard to a bare PartitionSpec under jax.set_mesh, and to a NamedSharding without it
    got, _ = same_as_jax_jit(lambda v: reshard(v * 2, P(None, "x")), (a,), ctx=mesh)
    assert str(jax.typeof(got)) == "float32[8,16@x]"
    same_as_jax_jit(lambda v: reshard(v * 2, NamedSharding(mesh, P(None, "x"))), (a,),
                    shardc_kw={"mesh": mesh})

    def partly_auto(v):
        return auto_axes(lambda u: jnp.sin(u) * 2, axes=("x",), out_sharding=P("x"))(v)

    same_as_jax_jit(partly_auto, (a,), ctx=mesh)

    def back_to_explicit(v):
        return explicit_axes(lambda u: u * 3, axes=("x",), in_sharding=P("x"))(v)

    with jax.set_mesh(mesh):
        u = reshard(a, P())
    same_as_jax_jit(lambda v: auto_axes(back_to_explicit, axes=("x",), out_sharding=P())(v), (u,),
                    ctx=mesh)
    with jax.set_mesh(mesh):
        a2 = reshard(a, P(None, "x"))
        w2 = reshard(w, P("x"))

    def partial_sums(p, q):  # x-sharded contraction kept unreduced, then reduced by reshard
        return reshard(jnp.dot(p, q, out_sharding=P(None, None, unreduced={"x"})), P())

    got, _ = same_as_jax_jit(partial_sums, (a2, w2), ctx=mesh)
    text = shardc.jit(partial_sums, mesh=mesh).lower(a2, w2).as_text()
    assert 'unreduced={"x"}' in text
    np.testing.assert_allclose(np.asarray(got), A_NP @ W_NP, rtol=1e-5, atol=1e-5)


def test_explicit_types_are_kept_and_only_auto_axes_propagate() -> None:
    a, w = arrays(MIXED)
    low = shardc.jit(lambda a, w: jnp.tanh(a @ w), mesh=MIXED).lower(a, w)
    # JAX's constraints carry the types: x on dim 0 of the dot as typed, nothing else may
    # take x (an Explicit axis unused by a type is replicated), y left to propagation
    assert low.ir.op.attributes["shardc.explicit_axes"] == '["x"]'
    for v in low.values():
        if v.op == "sdy.sharding_constraint":
            assert v.sharding.dims[0].axes[0].name == "x"
    (out,) = low.out_shardings
    assert out.dims[0].axes[0].name == "x"
    assert all(a.name != "x" for d in out.dims[1:] for a in d.axes)


@pytest.mark.parametrize("spec,message", [
    ("x?, _", r"dim 0 is open \(\?\), but every axis of mesh .* is Explicit \(x\)"),
    ("{x}p1, _", r"dim 0 has priority p1 on Explicit axis x"),
    ("?p0, _", r"dim 0 has priority p0 on Explicit axis x, y"),
])
def test_propagation_requests_on_explicit_axes_raise(spec: str, message: str) -> None:
    with pytest.raises(shardc.ShardcError, match=message) as info:
        shardc.jit(lambda v: v * 2, mesh=EXPLICIT, in_shardings=spec)(A_NP)
    assert isinstance(info.value, ValueError)
    assert "AxisType.Auto" in info.value.hint and "auto_axes" in info.value.hint
    # on a mesh with an Auto axis an open dim is propagation's (over y), a priority on y too
    out = shardc.jit(lambda v: v * 2, mesh=MIXED, in_shardings="x?, {y}p1")(A_NP)
    np.testing.assert_allclose(np.asarray(out), 2 * A_NP)
    with pytest.raises(shardc.ShardcError, match="priority p1 on Explicit axis x"):
        shardc.jit(lambda v: v * 2, mesh=MIXED, in_shardings="{x}p1")(A_NP)


def test_auto_and_constraints_on_explicit_axes_raise() -> None:
    with pytest.raises(shardc.ShardcError, match=r"auto=True on mesh .* every axis is Explicit"):
        shardc.jit(lambda v: v * 2, mesh=EXPLICIT, auto=True)(A_NP)
    with pytest.raises(shardc.ShardcError, match=r"(?s)names Explicit axis x.*reshard") as info:
        shardc.jit(lambda v: shardc.constrain(v * 2, "x, _"), mesh=EXPLICIT)(A_NP)
    assert "reshard" in info.value.hint
    # the same constraint on an Auto axis is propagation's
    out = shardc.jit(lambda v: shardc.constrain(v * 2, "_, y"), mesh=MIXED)(A_NP)
    np.testing.assert_allclose(np.asarray(out), 2 * A_NP)


def test_mesh_from_jax_set_mesh() -> None:
    f = shardc.jit(lambda v: jnp.sin(v).sum(1), in_shardings=P("x"))
    for mesh in (AUTO, EXPLICIT):
        with jax.set_mesh(mesh):
            out = f(A_NP)
            assert out.sharding.mesh.axis_types == mesh.axis_types
        np.testing.assert_allclose(np.asarray(out), np.sin(A_NP).sum(1), rtol=1e-5, atol=1e-5)
    assert len(f._cache) == 2  # one compile per context mesh
    other = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    with jax.set_mesh(other), pytest.raises(shardc.ShardcError, match=r"is on mesh .*, but the jax.set_mesh block it runs under is on mesh"):
        shardc.jit(lambda v: v, mesh=AUTO)(A_NP)


def test_explanations_say_explicit_shardings_come_from_the_type() -> None:
    a, w = arrays(MIXED)
    options = shardc.PropagationOptions(debug_origins=True)

    def f(a, w):
        return jnp.tanh(a @ w).sum(1)

    lines = shardc.jit(f, mesh=MIXED, options=options).lower(a, w).report.explanation
    line = next(ln for ln in lines if ln.startswith("%2 = stablehlo.tanh") and "dim 0" in ln)
    # x on the tanh traces to the type of the dot's result, with the dot's own source line
    assert re.search(r'dim 0 \{"x"\} <- the type stablehlo.dot_general \(.*test_jit_explicit.py:'
                     r'\d+:\d+\) gave its result \(Explicit axes\)', line), line
    # y (Auto) is propagation's, from the argument's annotation
    assert any(ln.startswith("%2 = stablehlo.tanh") and 'dim 1 {"y"} <- %arg1 (annotation' in ln
               for ln in lines)


def test_plan_causes_say_explicit_shardings_come_from_the_type() -> None:
    a, w = arrays(MIXED)

    def f(a, w):
        return jnp.tanh(a @ w).sum(0)

    plan = shardc.jit(f, mesh=MIXED).lower(a, w).plan()
    (c,) = [c for c in plan.collectives if c.kind == "all-reduce"]
    # the summed dim is on x (Explicit): its axes come from the tanh's type, named with its line
    assert re.search(r'dim 0 \{"x"\} <- the type tanh at test_jit_explicit.py:\d+ gave its '
                     r'result \(Explicit axes\)', c.cause), c.cause
    auto = shardc.jit(f, mesh=AUTO).lower(*arrays(AUTO)).plan()
    assert not any("Explicit" in c.cause for c in auto.collectives)
