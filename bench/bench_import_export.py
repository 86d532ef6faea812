"""Benchmark: shardc import + export against jaxlib's own parse + print, in one run.

For 8-, 32- and 96-layer transformer stacks (bench/common.py), times

* jaxlib: `ir.Module.parse(text)` + print (generic form, and pretty form),
* shardc: `shardc.import_text(text)` (jaxlib parse + shardc IR) + `shardc.export_text(module,
  fmt)` (generic: shardc's own printer; pretty: through jaxlib),

best of k runs each, and prints the times and the ratio shardc / jaxlib per size and format, plus
the time per layer, so that linear growth can be read off.

    python bench/bench_import_export.py [--k 5] [--layers 8,32,96]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=5, help="runs per measurement (best is reported)")
    ap.add_argument("--layers", default="8,32,96", help="comma-separated stack depths")
    ap.add_argument(
        "--stack",
        default="identical",
        choices=("identical", "distinct", "both"),
        help="identical layers, distinct layers (head_dim 8+i, hidden 128+4i), or both",
    )
    args = ap.parse_args(argv)

    import shardc

    print(f"# shardc import+export vs jaxlib parse+print ({common.rng_note()}, best of {args.k})")
    header = f"{'layers':>6} {'format':>8} {'jaxlib s':>9} {'shardc s':>9} {'ratio':>6} {'shardc ms/layer':>16}"
    print(header)
    for label, n, text in common.workloads(args.layers, args.stack):
        print(f"# {label} layers: {common.describe(text)}")
        for fmt in ("generic", "pretty"):
            generic = fmt == "generic"
            ref, _ = common.best_of(
                functools.partial(common.jaxlib_parse_print, text, generic), args.k
            )

            def run_shardc(text: str = text, fmt: str = fmt) -> str:
                module = shardc.import_text(text)
                return shardc.export_text(module, fmt)

            out = run_shardc()  # warm up and check
            assert "func.func" in out, "shardc exported no function"
            mine, _ = common.best_of(run_shardc, args.k)
            ratio = mine / ref
            print(f"{label:>6} {fmt:>8} {ref:>9.3f} {mine:>9.3f} {ratio:>6.2f} {1e3 * mine / n:>16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
