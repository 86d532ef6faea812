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
    from shardc.exporter import export_text
    from shardc.importer import import_text
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
