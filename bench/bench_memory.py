"""Benchmark: peak memory of `shardc.propagate` against Shardy's `sdy-propagation-pipeline`.

Each measurement runs in a fresh process that first imports jax, shardc and jaxlib's MLIR, builds
the context and reads the module text; it then resets its peak resident set size to the current
one (Linux `/proc/self/clear_refs`), runs one side (shardc: parse, import, propagate, export;
Shardy: parse, run the pipeline, print) once, and reports how far the peak rose above the
resident size before the run. Both sides start from the same baseline, so the ratio compares
what each pipeline itself needs. Sizes as in bench_propagate.py (the 2x4 transformer stacks).

    python bench/bench_memory.py [--layers 32,96,1000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r"""
import json, sys
sys.path.insert(0, {here!r})
import common  # imports jax, sets the 8 virtual devices
import shardc
from shardc.backend import mlir_bridge
text = open({path!r}).read()
mlir_bridge.context()
shardc.propagate  # resolve the lazy import
from shardc.api.propagate import propagate
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])  # KiB
    raise RuntimeError(field)
def peak():
    return status("VmHWM")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak to the current resident size (Linux)
before = status("VmRSS")
if {side!r} == "shardc":
    out = propagate(text)
else:
    out = common.shardy_pipeline(text)
print(json.dumps({{"before_kib": before, "after_kib": peak(), "chars": len(out)}}))
"""


def measure(side: str, path: str) -> dict[str, int]:
    code = _CHILD.format(here=HERE, path=path, side=side)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", default="32,96", help="comma-separated stack depths")
    ap.add_argument(
        "--stack",
        default="both",
        help="identical layers, distinct layers (head_dim 8+i, hidden 128+4i), both, or the "
        "other model shapes as bench_propagate.py takes them (scan, conv, moe, mixer, shapes, "
        "all, a comma list)",
    )
    args = ap.parse_args(argv)
    sys.path.insert(0, HERE)
    import common

    print("# peak RSS growth of one run over the same baseline, fresh process per measurement")
    print(f"{'layers':>6} {'Shardy MiB':>11} {'shardc MiB':>11} {'ratio':>6}")
    for label, _n, text in common.workloads(args.layers, args.stack):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
            f.write(text)
            path = f.name
        try:
            grown = {}
            for side in ("shardy", "shardc"):
                m = measure(side, path)
                grown[side] = max(m["after_kib"] - m["before_kib"], 1) / 1024
            ratio = grown["shardc"] / grown["shardy"]
            print(f"{label:>6} {grown['shardy']:>11.1f} {grown['shardc']:>11.1f} {ratio:>6.2f}")
        finally:
            os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
