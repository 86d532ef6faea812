"""The plan's kinds and axes against Shardy's explicit pipeline on the same input.

Shardy's `sdy-propagation-pipeline` followed by `sdy-insert-explicit-reshards{enable-full-
version=true}` and `sdy-reshard-to-collectives` writes its communication as `sdy.all_gather`,
`sdy.all_slice`, `sdy.all_reduce`, `sdy.all_to_all` and `sdy.collective_permute` ops. The plan
in Shardy's model (`PlanOptions(model="shardy")`: every op at Shardy's explicit-reshard choice,
a reshard per use, constants resharded too) must list the same multiset of (kind, mesh axis)
on every program of the differential suite and every golden program, but those in
`KNOWN_DIFFERENCES`, each with its reason. The collectives a shard_map body writes itself are
the program's own and not compared (Shardy's pass leaves them as they are).
"""

from __future__ import annotations

import pytest

import shardc
from shardc.passes.plan.plan import PlanOptions

from .. import programs as golden
from . import runs
from . import shardy_explicit as SE

SHARDY = PlanOptions(model="shardy", fixes=False)

KNOWN_DIFFERENCES: dict[str, str] = {
    "top_k": (
        "the standalone pipeline has no rule for chlo.top_k (runs.DELIBERATE_DIFFERENCES): it "
        "inserts nothing there, where shardc's rule (mhlo.topk's, as inside XLA) moves the "
        "top-k dim's axis to the batch dim with all-to-alls"
    ),
}

PROGRAMS = [(n, lambda n=n: runs.tagged(n)) for n in runs.program_names()] + [
    (f"golden:{n}", lambda n=n: golden.lowered_text(n)) for n in golden.PROGRAMS
]


def _atoms(text: str) -> tuple[object, object]:
    plan = shardc.plan(text, plan_options=SHARDY)
    mine = SE.atoms([(c.kind, c.axes) for c in plan.collectives if not c.written])
    theirs = SE.atoms(SE.shardy_collectives(SE.shardy_output(text)))
    return mine, theirs


@pytest.mark.parametrize("name,text", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_kinds_and_axes_agree_with_shardy(name: str, text) -> None:  # noqa: ANN001
    mine, theirs = _atoms(text())
    if name in KNOWN_DIFFERENCES:
        assert mine != theirs, f"{name} now agrees with Shardy: drop it from KNOWN_DIFFERENCES"
        return
    assert mine == theirs, (
        f"{name}: plan only {dict(mine - theirs)}, Shardy only {dict(theirs - mine)}"  # type: ignore[operator]
    )


def test_explicit_collectives_are_read() -> None:
    text = (
        '%1 = sdy.all_gather [{}, {"y"}] %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>\n'
        '%2 = sdy.all_reduce {"x":(1)2} %1 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>\n'
        "%3 = sdy.collective_permute %2 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>\n"
    )
    got = SE.shardy_collectives(text)
    assert got == [("all-gather", ("y",)), ("all-reduce", ("x:(1)2",)), ("collective-permute", ())]
    assert SE.atoms([("reduce-scatter", ("x",))]) == SE.atoms(
        [("all-reduce", ("x",)), ("all-slice", ("x",))]
    )
