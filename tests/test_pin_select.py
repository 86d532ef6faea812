"""The pin selection by neighbours (passes/pin_select.py) on random programs of the differential
fuzzer: what it leaves unpinned, XLA lays out as shardc chose, so the compiled program moves
what shardc's layout moves with every value pinned (the differential fuzzer checks the same
against Shardy's layout fully pinned, on many more programs)."""

from __future__ import annotations

import numpy as np
import pytest

import shardc
from tests.differential import harness as H
from tests.fuzz import programs as G

# (seed, index): programs with collectives where the selection leaves about a third unpinned
PROGRAMS = [(8484, 2), (5151, 56)]


def _every_value_pinned(tagged: str) -> str:
    from shardc.exporter import export_text
    from shardc.importer import import_text
    from shardc.passes.export import export_module

    module = import_text(shardc.propagate(tagged, options=shardc.PropagationOptions(keep_open=True)))
    export_module(module, "pin", pin_all=True)
    return export_text(module, "pretty")


@pytest.mark.parametrize("seed,index", PROGRAMS)
def test_selection_moves_the_bytes_of_every_value_pinned(seed: int, index: int) -> None:
    prog = G.generate(seed, index)
    tagged = H.tag_module(G.lower(prog))
    chosen = shardc.propagate(tagged, mode="pin")
    everything = _every_value_pinned(tagged)
    assert chosen.count("sdy.sharding_constraint") < everything.count("sdy.sharding_constraint")
    n = int(np.prod(prog.mesh_shape[0]))
    got = H.collective_stats(H.hlo_text(H.compile_mlir(chosen, n)))
    want = H.collective_stats(H.hlo_text(H.compile_mlir(everything, n)))
    assert want.total_bytes > 0
    assert got.total_bytes == want.total_bytes
    assert got.counts == want.counts and got.bytes == want.bytes
