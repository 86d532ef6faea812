"""shardc.propagate against Shardy's `sdy-propagation-pipeline`, value by value, and on XLA.

For every program of `programs.py`:

* `test_shardings_agree_with_shardy`: the same closed sharding on every op result and func
  argument/result as Shardy's pipeline (matched through `shardc.tag` attributes); every mismatch
  is listed with the op, the value and both shardings.
* `test_pinned_output_runs_on_xla`: shardc's `pin` output compiles for 8 CPU devices and computes
  the same numbers as the unsharded `jax.jit(f)`.
* `test_collective_bytes`: where shardc's layout differs from Shardy's (deliberately, see
  `runs.DELIBERATE_DIFFERENCES`, or not), its pinned layout moves no more collective bytes than
  XLA's own Shardy run on the same input.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness as H
from . import runs
from .programs import PROGRAMS, reference_outputs

NAMES = runs.program_names()

# Known disagreements, marked only after the propagation landed and still failed: name -> reason
# (the exact mismatch). strict=True: a fixed program makes the xfail fail, so it must be removed.
XFAIL_AGREE: dict[str, str] = {}
XFAIL_RUN: dict[str, str] = {}
XFAIL_BYTES: dict[str, str] = {}


def _params(xfails: dict[str, str]) -> list[object]:
    out = []
    for n in NAMES:
        marks = [pytest.mark.xfail(strict=True, reason=xfails[n])] if n in xfails else []
        out.append(pytest.param(n, id=n, marks=marks))
    return out


@pytest.mark.parametrize("name", _params(XFAIL_AGREE))
def test_shardings_agree_with_shardy(name: str) -> None:
    cmp = runs.comparison(name)
    assert cmp.compared > 0, f"{name}: nothing to compare"
    if name in runs.DELIBERATE_DIFFERENCES:
        places, why = runs.DELIBERATE_DIFFERENCES[name]
        assert cmp.mismatches, f"{name}: now agrees with Shardy; drop the deliberate difference"
        off = [m for m in cmp.mismatches if not any(p in m.where for p in places)]
        assert not off, f"{name}: differs beyond {places} ({why})\n{cmp.report()}"
        return
    assert cmp.ok, f"{name}: shardc disagrees with Shardy\n{cmp.report()}"


@pytest.mark.parametrize("name", _params(XFAIL_RUN))
def test_pinned_output_runs_on_xla(name: str) -> None:
    prog = PROGRAMS[name]
    compiled = runs.compiled_shardc_pin(name)
    outs = H.run_executable(compiled.exe, prog.args())
    ref = reference_outputs(name)
    assert len(outs) == len(ref), f"{name}: {len(outs)} outputs, expected {len(ref)}"
    for i, (got, want) in enumerate(zip(outs, ref, strict=True)):
        assert got.shape == want.shape, f"{name}: output {i} shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(
            got, want, rtol=prog.rtol, atol=prog.atol, err_msg=f"{name}: output {i}"
        )


@pytest.mark.parametrize("name", _params(XFAIL_BYTES))
def test_collective_bytes(name: str) -> None:
    # Every program: what XLA compiles from shardc's pinned layout moves no more collective
    # bytes than XLA's own Shardy run on the same input.
    cmp = runs.comparison(name)
    mine = runs.compiled_shardc_pin(name).stats
    base = runs.compiled_baseline(name).stats
    assert mine.total_bytes <= base.total_bytes, (
        f"{name}: shardc's layout moves more collective bytes than Shardy's: "
        f"shardc {mine.total_bytes}B [{mine}] vs shardy {base.total_bytes}B [{base}]\n"
        f"{cmp.report()}"
    )


# ---------------------------------------------------------------------------------------------
# The harness itself (independent of shardc's propagation)


def test_harness_finds_a_mismatch() -> None:
    name = "mlp_seed001"
    shardy = runs.shardy_shardings(name)
    assert H.compare(shardy, shardy).ok
    # the input itself (unpropagated) must disagree on the interior values
    cmp = H.compare(shardy, H.read_shardings(runs.tagged(name)))
    assert not cmp.ok and cmp.mismatches
    assert any("stablehlo.dot_general" in str(m) for m in cmp.mismatches), cmp.report()


def test_harness_counts_collectives() -> None:
    hlo = (
        "  %all-reduce.1 = f32[8,16]{1,0} all-reduce(f32[8,16]{1,0} %p), to_apply=%add\n"
        "  %ag = (f32[4]{0}, f32[16]{0}) all-gather-start(f32[4]{0} %q), dimensions={0}\n"
        "  %x = bf16[2,2]{1,0} all-to-all(bf16[2,2]{1,0} %r), dimensions={0}\n"
    )
    st = H.collective_stats(hlo)
    assert st.counts["all-reduce"] == 1 and st.bytes["all-reduce"] == 8 * 16 * 4
    assert st.counts["all-gather"] == 1 and st.bytes["all-gather"] == (16 + 64) // 2
    assert st.counts["all-to-all"] == 1 and st.bytes["all-to-all"] == 8


def test_harness_priority_edit() -> None:
    text = runs.tagged("priority_p0_lhs")
    assert '{"x", ?}p0' in text and '{"y", ?}p1' in text


def test_suite_size() -> None:
    assert len(NAMES) >= 25
