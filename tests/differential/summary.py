"""Print the differential suite's figures: agreement with Shardy per program, XLA numerics of the
pinned output, collective bytes of shardc's pinned layout against XLA's own Shardy run.

    python -m differential.summary [NAME ...]      (from tests/, XLA_FLAGS set by this script)
"""

from __future__ import annotations

import os
import sys
import traceback

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main(argv: list[str]) -> int:
    import numpy as np

    from . import harness as H
    from . import runs
    from .programs import PROGRAMS, reference_outputs

    names = argv or runs.program_names()
    tot_vals = tot_agree = progs_ok = runs_ok = 0
    for name in names:
        prog = PROGRAMS[name]
        line = f"{name:28s}"
        try:
            cmp = runs.comparison(name)
            tot_vals += cmp.compared
            tot_agree += cmp.agreed
            progs_ok += cmp.ok
            line += f" agree {cmp.agreed:3d}/{cmp.compared:3d}"
        except Exception as e:  # noqa: BLE001 - a summary reports every failure and goes on
            cmp = None
            line += f" propagate FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        try:
            c = runs.compiled_shardc_pin(name)
            outs = H.run_executable(c.exe, prog.args())
            ref = reference_outputs(name)
            err = max(
                (float(np.max(np.abs(o.astype(np.float64) - r))) if o.size else 0.0)
                for o, r in zip(outs, ref, strict=True)
            )
            ok = all(
                np.allclose(o, r, rtol=prog.rtol, atol=prog.atol)
                for o, r in zip(outs, ref, strict=True)
            )
            runs_ok += ok
            base = runs.compiled_baseline(name).stats
            line += f" | xla max|err| {err:.1e} {'ok' if ok else 'WRONG'}"
            line += f" | bytes shardc {c.stats.total_bytes} vs shardy {base.total_bytes}"
        except Exception as e:  # noqa: BLE001
            line += f" | xla FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        print(line)
        if cmp is not None and not cmp.ok:
            print("    " + cmp.report().replace("\n", "\n    "))
    print(
        f"# programs agreeing: {progs_ok}/{len(names)}; values agreeing: {tot_agree}/{tot_vals}; "
        f"pinned outputs numerically right: {runs_ok}/{len(names)}"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
