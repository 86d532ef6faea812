"""`shardc propagate --explicit`: the plan written as explicit sdy collectives parses with
jaxlib, and the same module with each collective written as a sharding constraint to its
out_sharding compiles with XLA to the numbers of the unsharded program (docs/xla_boundary.md
§2: XLA 0.10.2 rejects the collectives themselves). A few representative
programs (dots with reduce-scatters, conflicts, a loop, a sort, a gradient); all 50 of the
differential suite pass the same check in `bench/plan_check.py`."""

from __future__ import annotations

import numpy as np
import pytest

from shardc.api.plan import explicit

from . import harness as H
from . import runs
from .programs import PROGRAMS, reference_outputs

NAMES = ["ffn_2d_finalized", "priority_p0_rhs", "fori_loop", "argsort_cumsum", "grad_mlp"]


@pytest.mark.parametrize("name", NAMES)
def test_explicit_collectives_compile_to_the_same_numbers(name: str) -> None:
    text = runs.tagged(name)
    shown = explicit(text)
    assert H.read_shardings(shown).values  # jaxlib parses the explicit module
    assert "sdy.all_" in shown or "sdy.collective_permute" in shown, shown
    exe = H.compile_mlir(explicit(text, constraints=True))
    prog = PROGRAMS[name]
    outs = H.run_executable(exe, prog.args())
    for got, want in zip(outs, reference_outputs(name), strict=True):
        np.testing.assert_allclose(got, want, rtol=prog.rtol, atol=prog.atol)
