"""The plan against the truth, program by program (the full report behind the plan's tests).

    python bench/plan_check.py [--only a,b,...]

For every program of the differential suite (tests/differential/programs.py) and every golden
JAX program (tests/programs.py):

* (a) Shardy: the plan in Shardy's model (`PlanOptions(model="shardy")`) against Shardy's
  explicit pipeline on the same input, as multisets of (kind, mesh axis);
* (b) XLA: the planned total bytes against XLA's compiled collective bytes of shardc's `pin`
  export (within 10% or 256 B), and the plan's memory against XLA's `memory_analysis()`;
* (c) explicit: `shardc propagate --explicit`, each collective written as a sharding
  constraint, compiles and computes the unsharded program's numbers (differential suite only).

Prints one line per program and the totals. Run from the repository root.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def main() -> int:
    import numpy as np

    import shardc
    from shardc.api.plan import explicit
    from shardc.passes.plan.plan import PlanOptions
    from tests import programs as golden
    from tests.differential import harness as H
    from tests.differential import hlo_bytes as HB
    from tests.differential import runs
    from tests.differential import shardy_explicit as SE
    from tests.differential.programs import PROGRAMS, reference_outputs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated program names")
    args = parser.parse_args()
    only = {n for n in args.only.split(",") if n}

    items = [(n, runs.tagged(n), True) for n in runs.program_names()]
    items += [(f"golden:{n}", golden.lowered_text(n), False) for n in golden.PROGRAMS]
    if only:
        items = [it for it in items if it[0] in only]
    shardy_opts = PlanOptions(model="shardy", fixes=False)
    agree = within = explicit_ok = explicit_n = 0
    atoms_both = atoms_all = 0
    for name, text, differential in items:
        mine = shardc.plan(text, plan_options=shardy_opts)
        a = SE.atoms([(c.kind, c.axes) for c in mine.collectives if not c.written])
        b = SE.atoms(SE.shardy_collectives(SE.shardy_output(text)))
        both, either = SE.agreement(a, b)
        atoms_both += both
        atoms_all += either
        agree += a == b
        plan = shardc.plan(text)
        if differential:
            exe = runs.compiled_shardc_pin(name).exe
        else:
            exe = H.compile_mlir(shardc.propagate(text, mode="pin"))
        xla = HB.total_bytes(H.hlo_text(exe))
        ok = abs(plan.total_bytes - xla) <= max(256, xla // 10)
        within += ok
        stats = exe.get_compiled_memory_stats()
        mem = plan.memory
        io = (mem.arguments, mem.results) == (
            stats.argument_size_in_bytes,
            stats.output_size_in_bytes,
        )
        line = (
            f"{name:30} shardy {'=' if a == b else 'x'} {both}/{either}  "
            f"bytes plan {plan.total_bytes:>7} xla {xla:>7} {'ok ' if ok else 'OUT'}  "
            f"memory io {'=' if io else 'x'} peak {mem.peak} xla temp {stats.temp_size_in_bytes}"
        )
        if differential:
            explicit_n += 1
            prog = PROGRAMS[name]
            outs = H.run_executable(H.compile_mlir(explicit(text, constraints=True)), prog.args())
            good = all(
                np.allclose(g, w, rtol=prog.rtol, atol=prog.atol)
                for g, w in zip(outs, reference_outputs(name), strict=True)
            )
            explicit_ok += good
            line += f"  explicit {'ok' if good else 'WRONG'}"
        if a != b:
            line += f"\n    plan only {dict(a - b)}, Shardy only {dict(b - a)}"
        print(line, flush=True)
    n = len(items)
    print(
        f"\n(a) kinds/axes equal to Shardy's explicit pipeline: {agree}/{n} programs, "
        f"{atoms_both}/{atoms_all} (kind, axis) atoms"
    )
    print(f"(b) planned bytes within 10% (or 256 B) of XLA's: {within}/{n}")
    print(f"(c) explicit form compiles to the right numbers: {explicit_ok}/{explicit_n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
