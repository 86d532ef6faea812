"""`.compile()` writes the `pin` export onto a copy of JAX's own module through jaxlib's bindings
(compiler/backend/xla_module.py) instead of printing it and parsing it again: the module XLA gets must be
the one the text route parses, op for op and attribute for attribute."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback
from jax.sharding import PartitionSpec as P

import shardc
from shardc.backend.xla_form import text_for_xla
from shardc.backend.xla_module import build_xla_module

from . import programs


def _both_routes(low: shardc.Lowered) -> tuple[str | None, str]:
    """The generic print (no locations) of the module the bindings build, or None where they
    decline, and of the text route's module."""
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir

    exported = low.exported("pin", low.jitted.remove_redundant_collectives, for_compile=True)
    built = build_xla_module(low.origin, exported.module)
    with jmlir.make_ir_context(), ir.Location.unknown():
        parsed = ir.Module.parse(text_for_xla(exported.module))
        text = parsed.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)
    if built is None:
        return None, text
    return built.operation.get_asm(print_generic_op_form=True, enable_debug_info=False), text


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_bindings_build_the_module_the_text_route_parses(name: str) -> None:
    f, args, kw = programs.PROGRAMS[name]()
    low = shardc.jit(f, mesh=programs.mesh(), **kw).lower(*args)
    built, text = _both_routes(low)
    # every program here is JAX's module plus shardc's constraints, boundary shardings and
    # rewritten attributes: nothing sends it to the text route
    assert built is not None
    assert built == text


def test_callbacks_keep_their_op_sharding_on_the_bindings_route() -> None:
    def f(x):
        jax.debug.callback(lambda v: None, x[0, 0])
        y = jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        io_callback(lambda a: None, None, y, ordered=True)
        return y * 2

    x = np.linspace(0, 1, 32, dtype=np.float32).reshape(8, 4)
    low = shardc.jit(f, mesh=programs.mesh(), in_shardings="x, _").lower(x)
    built, text = _both_routes(low)
    assert "xla_ffi_python_cpu_callback" in text and "sdy.sharding" in text
    assert built == text
    np.testing.assert_allclose(np.asarray(low.compile()(x)), np.sin(x) * 2, rtol=1e-6)
    assert low.xla_route == "bindings"


def test_an_export_that_changes_ops_takes_the_text_route() -> None:
    def f(w, x):
        def body(w, x):  # w is replicated: its psum over "x" is redundant (rewritten away)
            return x * jax.lax.psum(jnp.sum(w * w), "x")

        return jax.shard_map(body, in_specs=(P(), P("x")), out_specs=P("x"), check_vma=False)(w, x)

    w = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    low = shardc.jit(f, mesh=programs.mesh(), in_shardings=(None, "x, _")).lower(w, x)
    built, _ = _both_routes(low)
    assert built is None and low.removed_collectives
    compiled = low.compile()
    assert low.xla_route == "text"
    np.testing.assert_allclose(np.asarray(compiled(w, x)), x * 4 * np.sum(w * w), rtol=1e-5)


def test_ir_handed_out_before_compile_takes_the_text_route() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 4), np.float32)
    f = shardc.jit(lambda x, w: jnp.tanh(x @ w), mesh=programs.mesh(), in_shardings=("x, _", None))
    low = f.lower(x, w)
    assert low.ir is not None  # the export is then made on a copy, whose ops are not JAX's
    compiled = low.compile()
    assert low.xla_route == "text"
    np.testing.assert_allclose(np.asarray(compiled(x, w)), np.tanh(x @ w), rtol=1e-5, atol=1e-5)


def test_ops_added_erased_or_moved_send_the_export_to_the_text_route() -> None:
    f, args, kw = programs.PROGRAMS["mlp"]()
    low = shardc.jit(f, mesh=programs.mesh(), **kw).lower(*args)
    module = low.exported("pin", True, for_compile=True).module
    assert build_xla_module(low.origin, module) is not None
    block = module.funcs["main"].regions[0].entry
    first = block.ops[0]
    extra = first.clone()  # an op of shardc's own (not a constraint)
    extra.parent = block
    block.ops.insert(1, extra)
    assert build_xla_module(low.origin, module) is None
    block.ops.remove(extra)
    block.ops.remove(first)  # an op of JAX's module missing
    assert build_xla_module(low.origin, module) is None
    block.ops.insert(0, first)
    assert build_xla_module(low.origin, module) is not None
