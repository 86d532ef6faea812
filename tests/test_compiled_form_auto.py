"""One compiled form for an `auto` layout: the program `.compile()` builds moves what
`Lowered.plan(check=True)` compiles (and plans within the plan's accuracy), and `shardc propagate --auto --pin`'s output
compiles to the bytes its own check says. With a budget, `.compile()` returns the compile that
shardc.jit's XLA check of the budget made of that program (not compiled twice), and the memory
the check reported is that program's. Auto's reshards are constraints for their own
reader only: on a call's result the call's other readers keep the call's layout (XLA inlines
calls before its own propagation, so nothing sends them through the constraint)."""

from __future__ import annotations

import jax
import numpy as np

import shardc
from shardc.api.auto_fit import analysed_memory
from shardc.api.plan import plan
from shardc.api.plan_check import compiled_hlo
from shardc.api.propagate import propagate
from shardc.backend.exporter import export_text
from shardc.passes.propagation.options import PropagationOptions
from tests.auto_programs import MESH, collective_bytes, fresh, programs, reference

BUDGET = "1MB"


def test_auto_compile_moves_what_its_plan_check_compiles() -> None:
    prog = programs()[0]  # the MLP SGD step, only the batch annotated
    f = shardc.jit(fresh(prog.fun), mesh=MESH, in_shardings=prog.batch_only, auto=True,
                   memory_budget=BUDGET)  # fmt: skip
    lowered = f.lower(*prog.args())
    checked = lowered.checked
    compiled = lowered.compile()
    # the XLA check's compile of the layout kept is the program `.compile()` returns, and the
    # memory the check reported is that program's; it computes the unsharded numbers
    assert checked is not None and compiled.jax_compiled is checked.compiled
    assert lowered.checked is None
    used = analysed_memory(compiled.memory_analysis())
    assert any(f"({used} bytes;" in n for n in lowered.report.auto.notes), lowered.report.auto.notes
    for got, want in zip(jax.tree.leaves(compiled(*prog.args())), reference(prog), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4)
    ran = collective_bytes(compiled.executable.as_text())
    checked = lowered.plan(check=True)
    assert checked.check is not None
    assert ran == checked.check.total_compiled, (ran, checked.check.total_compiled)
    assert _within_plan_target(checked.total_bytes, ran), (checked.total_bytes, ran)
    # the oracle starts from auto's entry layouts: every pin checked by a last round
    report = lowered.exported("pin").pin_report
    assert report is not None and report.unverified == 0 and report.last_checked, str(report)

    # the command line's compiled form of the same traced module (auto without XLA's memory
    # figures, so its own layout): compiled, it moves what its plan says and its check measures
    text = export_text(lowered.plan_source[0](), "generic")
    options = PropagationOptions(auto=True, memory_budget=BUDGET)
    pinned = propagate(text, options=options, mode="pin")
    assert "shardc.per_use" not in pinned
    cli = plan(text, options=options, check=True)
    assert cli.check is not None
    assert collective_bytes(compiled_hlo(pinned, 8)) == cli.check.total_compiled
    assert _within_plan_target(cli.total_bytes, cli.check.total_compiled), (
        cli.total_bytes, cli.check.total_compiled)  # fmt: skip


def _within_plan_target(planned: int, compiled: int) -> bool:
    """The plan issue's accuracy: within max(10%, 256 B) of the compiled program's bytes."""
    return abs(planned - compiled) <= max(0.1 * compiled, 256)
