"""Benchmark: the per-call overhead of a compiled `shardc.jit` function against `jax.jit`'s.

The workload is what dominates a training loop's dispatch: a function of a pytree of N small
arrays (a dict of N f32[8, 16] leaves, each plus one), called with committed arrays that live
on the 2x4 mesh of 8 virtual CPU devices, both wrappers given the same in/out shardings (each
leaf on X), so both run the same executable and what differs is the work around it.

Method: the functions are compiled and warmed up first (a few calls each). Then, for R
rounds, each side runs a batch of B calls back to back, timed with `time.perf_counter` from
the first call to `jax.block_until_ready` on the last result; the sides take turns within each
round (each of them first, second and third equally often over the rounds), so that all see
the same machine load over time. Per round, the per-call time of each side is batch time / B
and the ratio is shardc's over jax.jit's; the table gives the median per-call times and the
median of the per-round ratios (so one round disturbed by the shared machine moves it little).
A third side, a second `jax.jit` wrapper of the same function, gives the noise floor: its
ratio to the first is what the same code measures against itself in the same run.

    python bench/bench_call.py [--leaves 1,50,200,1000] [--rounds 42] [--calls 2000]
                               [--clock wall|thread]

`--clock thread` times the calling thread's CPU seconds instead of wall-clock: the work of
flattening, checking, placing and dispatching, which is what the two wrappers can differ in,
without the executable's run on XLA's own threads or the waits of a loaded machine.

A batch is `--calls` / (N + 10) calls, at least 3: short batches, many rounds, so that the
median sees through a shared machine's load (which moves each call's time by far more than the
difference being measured: both sides run the same executable through the same dispatch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402  (sets XLA_FLAGS for 8 devices before jax is imported)


def _time_batch(f, args, batch: int, clock) -> float:
    import jax

    start = clock()
    out = None
    for _ in range(batch):
        out = f(args)
    jax.block_until_ready(out)
    return (clock() - start) / batch


def measure(n_leaves: int, rounds: int, batch: int, clock=time.perf_counter
            ) -> tuple[float, float, float, float]:
    """(jax.jit's median seconds per call, shardc.jit's, the median of per-round ratios
    shardc / jax.jit, and the same for a second jax.jit wrapper of the same function: the
    noise floor of the measurement)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import shardc

    mesh = common.mesh()
    sharding = NamedSharding(mesh, P("X"))
    args = {f"w{i:04d}": jax.device_put(np.full((8, 16), i, np.float32), sharding)
            for i in range(n_leaves)}

    def step(params):
        return jax.tree.map(lambda a: a + jnp.float32(1), params)

    def step_again(params):  # the same function, for a second jax.jit wrapper
        return step(params)

    j = jax.jit(step, in_shardings=(sharding,), out_shardings=sharding)
    j2 = jax.jit(step_again, in_shardings=(sharding,), out_shardings=sharding)
    s = shardc.jit(step, mesh=mesh, in_shardings=P("X"), out_shardings=P("X"))
    for f in (j, j2, s):  # compile and warm up
        for _ in range(3):
            jax.block_until_ready(f(args))
    for a, b in zip(jax.tree.leaves(j(args)), jax.tree.leaves(s(args)), strict=True):
        assert a.sharding == b.sharding, (a.sharding, b.sharding)
    sides = [(j, []), (s, []), (j2, [])]
    for r in range(rounds):
        k = r % 3  # each side first, second and third equally often
        for f, times in sides[k:] + sides[:k]:
            times.append(_time_batch(f, args, batch, clock))
    (_, jt), (_, st), (_, j2t) = sides
    ratio = statistics.median(b / a for a, b in zip(jt, st, strict=True))
    floor = statistics.median(b / a for a, b in zip(jt, j2t, strict=True))
    return statistics.median(jt), statistics.median(st), ratio, floor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", default="1,50,200,1000")
    parser.add_argument("--rounds", type=int, default=42)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    print(f"clock: {args.clock}")
    print("| leaves | jax.jit us/call | shardc.jit us/call | ratio (median of rounds) | "
          "jax.jit again / jax.jit |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n in (int(x) for x in args.leaves.split(",")):
        batch = max(3, args.calls // (n + 10))
        jt, st, ratio, floor = measure(n, args.rounds, batch, clock)
        print(f"| {n} | {jt * 1e6:.1f} | {st * 1e6:.1f} | {ratio:.3f} | {floor:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
