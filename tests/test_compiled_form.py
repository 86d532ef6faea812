"""The compiled form (`propagate --pin`, what `shardc.jit` compiles) on random programs of the
differential fuzzer: the module as written plus pins where XLA's own propagation would lay a
value out otherwise. Where shardc's layout is Shardy's it moves what jax.jit's program moves,
no more than shardc's layout with every value pinned, and computes the unsharded numbers."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import shardc
from tests.differential import harness as H
from tests.fuzz import differential as D
from tests.fuzz import programs as G

# (seed, index): programs with collectives, loops and calls, where every value is Shardy's
PROGRAMS = [(8484, 3), (8484, 10), (8484, 12)]


def _every_value_pinned(text: str) -> str:
    from shardc.backend.exporter import export_text
    from shardc.backend.importer import import_text
    from shardc.passes.export import export_module

    module = import_text(shardc.propagate(text, options=shardc.PropagationOptions(keep_open=True)))
    export_module(module, "pin", pin_all=True)
    return export_text(module, "pretty")


@pytest.mark.parametrize("seed,index", PROGRAMS)
def test_compiled_form_moves_what_jax_jit_moves(seed: int, index: int) -> None:
    prog = G.generate(seed, index)
    text = G.lower(prog)
    tagged = H.tag_module(text)
    cmp = H.compare(H.read_shardings(H.run_shardy(tagged)), H.read_shardings(shardc.propagate(tagged)))
    assert cmp.ok, cmp.report()  # (the premise: shardc's layout is Shardy's)
    compiled = shardc.propagate(text, mode="pin")
    everything = _every_value_pinned(text)
    assert compiled.count("sdy.sharding_constraint") < everything.count("sdy.sharding_constraint")
    n = int(np.prod(prog.mesh_shape[0]))
    exe = H.compile_mlir(compiled, n)
    got = H.collective_stats(H.hlo_text(exe)).total_bytes
    jax_jit = H.collective_stats(H.hlo_text(H.compile_mlir(text, n, as_jax_jit=True))).total_bytes
    pinned = H.collective_stats(H.hlo_text(H.compile_mlir(everything, n))).total_bytes
    assert jax_jit > 0
    assert got <= D.above(jax_jit), (got, jax_jit)
    assert got <= pinned, (got, pinned)
    args = G.arguments(prog)
    ref = [np.asarray(o) for o in jax.jit(G.build(prog))(*args)]
    for o, r in zip(H.run_executable(exe, args), ref, strict=True):
        np.testing.assert_allclose(o, r, rtol=2e-3, atol=2e-3)


def test_cli_pin_writes_the_module_compile_hands_xla() -> None:
    """`shardc propagate --pin` on the module shardc.jit traced writes what `.compile()` gives
    XLA: the same ops, annotations and pins (op-level shardings aside, which XLA drops)."""
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardc.api.jax_compile import _module_for_xla
    from shardc.backend.importer import import_text
    from shardc.backend.xla_form import text_for_xla

    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def step(x, w1, w2):
        def loss(w1, w2):
            h = jnp.tanh(x @ w1)
            return jnp.sum((h @ w2) ** 2)

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, np.float32) for s in ((16, 32), (32, 64), (64, 32))]
    sh = (NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y")), None)
    low = shardc.jit(step, mesh=mesh, in_shardings=sh).lower(*args)
    traced = low.origin.jax_module.operation.get_asm(enable_debug_info=False)
    cli = shardc.propagate(traced, mode="pin")
    exported = low.exported("pin", low.jitted.remove_redundant_collectives, for_compile=True)
    for_xla = _module_for_xla(low, exported).operation.get_asm(
        print_generic_op_form=True, enable_debug_info=False
    )
    from shardc.backend import mlir_bridge
    cli_for_xla = mlir_bridge.parse_module(text_for_xla(import_text(cli))).operation.get_asm(
        print_generic_op_form=True, enable_debug_info=False
    )
    assert cli_for_xla == for_xla
    y = low.compile()(*args)
    ref = jax.jit(step)(*args)
    for a, b in zip(y, ref, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)
