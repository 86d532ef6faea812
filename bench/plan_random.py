"""The plan against XLA on random JAX programs as JAX lowers them (the differential fuzzer's
generator, `tests/fuzz/programs.py`), at a fixed seed never used to tune the plan.

    python bench/plan_random.py [--seed 4242] [--count 300] [--explicit] [--verbose]

Per program (`tests/differential/plan_targets.py`): the planned total bytes within max(10%,
256 B) of the collective bytes of XLA's compiled program, the planned memory (arguments +
results + peak temporaries) within 20% of XLA's `memory_analysis` (arguments + outputs + temps -
aliased), and with `--explicit` whether `shardc propagate --explicit` verifies and writes the
collectives Shardy's explicit pipeline writes. Prints the counts against the plan's
targets (bytes >= 90%, memory >= 80%, explicit >= 95%). Run from the repository root.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

SEED = 4242  # fixed, and never used while tuning the plan


def main() -> int:
    import numpy as np

    from tests.differential import plan_targets as T
    from tests.fuzz import programs as G

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--explicit", action="store_true", help="also check --explicit")
    parser.add_argument("--verbose", action="store_true", help="one line per program")
    args = parser.parse_args()

    n = bytes_ok = memory_ok = valid = agrees = 0
    for index in range(args.count):
        prog = G.generate(args.seed, index)
        try:
            text = G.lower(prog)
        except Exception:  # noqa: BLE001 - the generator made something JAX refuses
            continue
        devices = int(np.prod(prog.mesh_shape[0]))
        try:
            r = T.measure(text, devices, explicit=args.explicit)
        except Exception as e:  # noqa: BLE001 - reported, and counted as a miss
            print(f"#{index}: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
            n += 1
            continue
        n += 1
        bytes_ok += r.bytes_ok
        memory_ok += r.memory_ok
        valid += bool(r.explicit_valid)
        agrees += bool(r.explicit_agrees)
        if args.verbose or not (r.bytes_ok and r.memory_ok):
            print(
                f"#{index}: bytes plan {r.plan_bytes} xla {r.xla_bytes} "
                f"{'ok' if r.bytes_ok else 'OUT'}; memory plan {r.plan_memory} "
                f"xla {r.xla_memory} {'ok' if r.memory_ok else 'OUT'}",
                flush=True,
            )
    pct = lambda k: f"{k}/{n} ({100 * k / max(n, 1):.0f}%)"  # noqa: E731
    print(f"\nseed {args.seed}, {n} programs")
    print(f"bytes within max(10%, 256 B): {pct(bytes_ok)}  (target >= 90%)")
    print(f"memory within 20%:            {pct(memory_ok)}  (target >= 80%)")
    if args.explicit:
        print(f"--explicit verifies:          {pct(valid)}  (target 100%)")
        print(f"--explicit equals Shardy's:   {pct(agrees)}  (target >= 95%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
