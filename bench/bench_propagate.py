"""Benchmark: `shardc.propagate` end to end against Shardy's `sdy-propagation-pipeline`.

Both sides start from the same MLIR text and end with MLIR text, in one run:

* shardc: `shardc.propagate(text)` = parse (jaxlib) + import + propagate + export (pretty),
* Shardy: jaxlib parse + `sdy-propagation-pipeline` through jaxlib's PassManager + print,

on 8-, 32- and 96-layer transformer stacks (bench/common.py, seed 003's 2D sharding on a 2x4 mesh)
and, with `--stack`, other model shapes (a scanned stack, a convnet, a mixture of experts, an
MLP-Mixer, a KV-cache decode step), best of k runs each, printing both times and the ratio
shardc / Shardy per size. `--mode pin` times shardc's compiled form instead (`propagate --pin`:
the export with its pins, Shardy's own propagation asked where XLA would derive otherwise), still
against Shardy's pipeline on the same module.

    python bench/bench_propagate.py [--k 3] [--layers 8,32,96] [--stack both|shapes|all|scan,..]
        [--format pretty|generic] [--mode annotate|pin] [--breakdown]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=3, help="runs per measurement (best is reported)")
    ap.add_argument("--layers", default="8,32,96", help="comma-separated stack depths")
    ap.add_argument("--format", default="pretty", choices=("pretty", "generic"))
    ap.add_argument(
        "--mode",
        default="annotate",
        choices=("annotate", "pin"),
        help="shardc's export: Shardy's layout on every value, or the compiled form (--pin)",
    )
    ap.add_argument(
        "--stack",
        default="both",
        help="model kinds, comma-separated: identical, distinct (head_dim 8+i, hidden 128+4i), "
        "scan (the layer under jax.lax.scan), conv, moe, mixer, decode (KV-cache updates at "
        "the step's position); or both (identical,distinct), shapes (scan,conv,moe,mixer), all",
    )
    ap.add_argument(
        "--clock",
        default="wall",
        choices=("wall", "cpu"),
        help="wall-clock seconds, or the process's CPU seconds (steadier on a loaded machine)",
    )
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="also print where shardc's time goes: parse, each pipeline pass, print "
        "(best of k per step, as `shardc propagate --timing` measures them)",
    )
    args = ap.parse_args(argv)
    common.stack_kinds(args.stack)  # (an unknown kind: an error before any lowering)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    try:
        import shardc

        propagate = functools.partial(shardc.propagate, mode=args.mode)
    except (ImportError, AttributeError) as e:
        print(f"# shardc.propagate is not available ({e}); timing Shardy alone")
        propagate = None

    print(
        f"# shardc.propagate (mode {args.mode}) vs sdy-propagation-pipeline "
        f"({common.rng_note()}, best of {args.k}, {args.clock} clock)"
    )
    print(f"{'layers':>6} {'shardy s':>9} {'shardc s':>9} {'ratio':>6} {'shardc ms/layer':>16}")
    print(
        "# a layer count ending in d: every layer has its own shapes; s: the layer scanned "
        "(jax.lax.scan), c: convnet, m: mixture of experts, x: MLP-Mixer, k: KV-cache decode "
        "step (bench/common.py)"
    )
    for label, n, text in common.workloads(args.layers, args.stack):
        print(f"# {label} layers: {common.describe(text)}")
        common.shardy_pipeline(text)  # warm up
        ref, _ = common.best_of(functools.partial(common.shardy_pipeline, text), args.k, clock)
        if propagate is None:
            print(f"{label:>6} {ref:>9.3f} {'-':>9} {'-':>6} {'-':>16}")
            continue
        out = propagate(text, format=args.format)  # warm up and check
        assert "sdy.sharding" in out, "shardc.propagate returned no shardings"
        mine, _ = common.best_of(
            functools.partial(propagate, text, format=args.format), args.k, clock
        )
        print(f"{label:>6} {ref:>9.3f} {mine:>9.3f} {mine / ref:>6.2f} {1e3 * mine / n:>16.2f}")
        if args.breakdown:
            print(f"#   {label} steps (best of {args.k}, s): " + _breakdown(text, args))
    return 0


def _breakdown(text: str, args: argparse.Namespace) -> str:
    """shardc's best time per step (parse, each pass, print) over k runs."""
    from shardc.api.propagate import propagate_text

    best: dict[str, float] = {}
    for _ in range(args.k):
        timings: list[tuple[str, float]] = []
        propagate_text(text, format=args.format, mode=args.mode, timings=timings)
        for name, seconds in timings:
            best[name] = min(best.get(name, seconds), seconds)
    return ", ".join(f"{name} {sec:.3f}" for name, sec in best.items() if sec >= 0.0005)


if __name__ == "__main__":
    sys.exit(main())
