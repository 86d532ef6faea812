"""shardc.jit's stage API with jax.jit's meanings: trace -> lower -> compile, eval_shape,
clear_cache, the compiled-program cache, what Lowered and Compiled report, and readable str()
of every object a user prints. 8 virtual CPU devices."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import shardc

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
X = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((16, 4)).astype(np.float32)


def layer(x, w):
    return jnp.tanh(x @ w)


def counting(f):
    """`f` with its lowerings for calls counted (`f.lowerings`)."""
    f.lowerings = 0
    lower = f._lower_for_call

    def spy(args, kwargs):
        f.lowerings += 1
        return lower(args, kwargs)

    f._lower_for_call = spy
    return f


def test_trace_lower_compile_and_eval_shape() -> None:
    f = shardc.jit(layer, mesh=MESH, in_shardings=("x, _", "_, y"), out_shardings="x, y")
    traced = f.trace(X, W)
    assert traced.fun_name == "layer" and "dot_general" in str(traced.jaxpr)
    assert traced.lower().as_text() == f.lower(X, W).as_text()
    assert [a.shape for a in jax.tree.leaves(traced.args_info)] == [(8, 16), (16, 4)]
    (out,) = jax.tree.leaves(f.eval_shape(X, W))
    ref = jax.jit(layer, out_shardings=NamedSharding(MESH, P("x", "y"))).eval_shape(X, W)
    assert (out.shape, out.dtype) == (ref.shape, ref.dtype) == ((8, 4), jnp.float32)
    assert out.sharding.is_equivalent_to(ref.sharding, 2)


def test_lowered_reports_what_compile_hands_xla() -> None:
    f = shardc.jit(layer, mesh=MESH, in_shardings=("x, _", "_, y"))
    low = f.lower(X, W)
    module = low.compiler_ir()
    text = module.operation.get_asm(enable_debug_info=True)
    assert "sdy.sharding" in text
    assert "HloModule" in low.compiler_ir("hlo").as_hlo_text()
    # XLA's pre-optimization cost of shardc's module: the computation jax.jit's is (XLA counts
    # the sharding constraints' custom calls a little differently)
    flops, ref = low.cost_analysis()["flops"], jax.jit(layer).lower(X, W).cost_analysis()["flops"]
    assert ref > 0 and abs(flops - ref) <= 0.01 * ref
    (out,) = jax.tree.leaves(low.out_info)
    assert out.shape == (8, 4) and out.sharding.spec == P("x", "y")
    assert [i.donated for i in jax.tree.leaves(low.args_info)] == [False, False]
    compiled = low.compile()
    # the very module XLA compiled (JAX's lowering object holds it after the compile)
    assert low.jax_lowered._lowering._hlo.operation.get_asm(enable_debug_info=True) == text
    y = compiled(X, W)
    assert y.sharding.is_equivalent_to(out.sharding, 2)
    ins, _ = compiled.input_formats
    assert ins[0].sharding.spec == P("x") and ins[1].sharding.spec == P(None, "y")
    assert jax.tree.leaves(compiled.output_formats)[0].sharding.spec == P("x", "y")


def test_a_call_reuses_what_lower_compile_compiled() -> None:
    f = counting(shardc.jit(layer, mesh=MESH, in_shardings=("x, _", "_, y")))
    compiled = f.lower(jax.ShapeDtypeStruct(X.shape, X.dtype), W).compile()
    np.testing.assert_allclose(np.asarray(f(X, W)), np.tanh(X @ W), rtol=1e-5, atol=1e-5)
    assert f.lowerings == 0  # the call ran the executable .compile() made
    (entry,) = f._cache.values()
    assert entry.compiled is compiled.jax_compiled
    # options make another executable, which calls do not take
    g = counting(shardc.jit(layer, mesh=MESH))
    g.lower(X, W).compile(compiler_options={"xla_embed_ir_in_executable": True})
    g(X, W)
    assert g.lowerings == 1
    # clear_cache forgets them all
    f.clear_cache()
    assert not f._cache
    f(X, W)
    f(X, W)
    assert f.lowerings == 1


def test_every_printed_object_reads() -> None:
    f = shardc.jit(layer, mesh=MESH, in_shardings=("x, _", "_, y"))
    low = f.lower(X, W)
    other = shardc.jit(layer, mesh=MESH, in_shardings=("_, x", "x, _")).lower(X, W)
    plan = str(low.plan())
    assert "total:" in plan and "per device" in plan and "Plan(" not in plan
    diff = str(low.diff(other))
    assert "%arg0" in diff and "PlanDiff(" not in diff
    report = str(low.report)
    assert report.startswith("rounds:") and "PropagationReport(" not in report
    assert str(low) == repr(low) == '<shardc Lowered layer: 2 inputs, 1 outputs on mesh <["x"=4, "y"=2]>>'
    assert repr(f).startswith("<shardc.jit layer, mesh <[")
    assert repr(low.compile()).startswith("<shardc Compiled layer")
    assert str(f.trace(X, W)).startswith("<shardc traced layer")


def test_repeated_calls_take_jaxs_dispatch_without_python() -> None:
    """After the first call of a signature, calls run in JAX's C++ dispatch (as jax.jit's do):
    shardc's Python miss handler runs once per signature, whatever the number of leaves."""
    f = shardc.jit(lambda d, s: jax.tree.map(lambda a: a * s, d), mesh=MESH,
                   in_shardings=(P("x"), None))
    misses = []
    miss = f._miss

    def counted(*args, **kwargs):
        misses.append(1)
        return miss(*args, **kwargs)

    f._miss = counted
    tree = {f"w{i}": jnp.full((8, 4), float(i)) for i in range(50)}
    for _ in range(5):
        out = f(tree, 2.0)
    assert len(misses) == 1
    for _ in range(5):  # committed outputs fed back: one more signature, then no more misses
        out = f(out, 2.0)
    assert len(misses) == 2
    np.testing.assert_allclose(np.asarray(out["w3"]), 3.0 * 2.0 ** 6)
    # keywords that fill positional parameters keep the Python path (its flattening differs)
    g = shardc.jit(lambda a, b: a + b, mesh=MESH)
    g(X, b=X)
    g(X, b=X)
    assert len(g._cache) == 1
