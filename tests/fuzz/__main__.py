"""`python -m tests.fuzz --count N [--seed S] [--only mutation|programs]`: long fuzz runs."""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--count", type=int, default=100, help="mutants / programs per fuzzer")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100000,
                   help="campaign seed (default: from the clock; printed, so a run reproduces)")
    p.add_argument("--start", type=int, default=0, help="first mutant / program index")
    p.add_argument("--only", choices=("mutation", "programs"), default=None)
    p.add_argument("--no-shrink", action="store_true", help="report failures unshrunk")
    p.add_argument("--verbose", action="store_true",
                   help="also print every program that disagrees with Shardy or moves more bytes")
    args = p.parse_args()
    print(f"seed {args.seed}", flush=True)
    failed = False
    if args.only in (None, "mutation"):
        from .mutation import run_campaign

        res = run_campaign(args.seed, args.count, start=args.start, shrink=not args.no_shrink,
                           log=lambda s: print(s, flush=True))
        print(res.summary(), flush=True)
        failed |= bool(res.failures)
    if args.only in (None, "programs"):
        from .differential import run_programs

        stats = run_programs(args.seed, args.count, start=args.start, shrink=not args.no_shrink,
                             log=lambda s: print(s, flush=True), verbose=args.verbose)
        print(stats.summary(), flush=True)
        failed |= bool(stats.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
