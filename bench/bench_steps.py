"""Benchmark: the real training steps of tests/steps at realistic sizes, shardc.jit against
jax.jit with the same function, in/out shardings and donation, on 8 virtual CPU devices.

Per model: collective bytes per device (tests/differential/hlo_bytes.py's measure on the
compiled HLO: per collective the larger of operand and result local bytes, times loop trip
counts) and XLA's memory per device (`memory_analysis()`: arguments + outputs + temps -
aliased), both from compiles on `jax.ShapeDtypeStruct`s at a realistic size (nothing is
allocated); then the step time at a smaller size that runs in seconds on the CPU devices: each
side's compiled step called k times in turn (after one warm-up call each), the parameters and
optimizer state fed back as training does, best of k. Ratios are shardc.jit / jax.jit.

    python bench/bench_steps.py [--models llama,lora,scan,flax_dp,flax_fsdp,flax_megatron,moe,vit]
                                [--k 3] [--clock wall|cpu] [--no-time]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import fields
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import common  # noqa: E402

from tests.steps import flax_transformer, llama, lora, moe, scan_decoder, vit  # noqa: E402
from tests.steps.catalog import MODELS  # noqa: E402
from tests.steps.harness import Step, memory_bytes  # noqa: E402

# (size whose bytes and memory are measured, size whose step is timed)
SIZES: dict[str, tuple[Any, Any]] = {
    "llama": (llama.Size(vocab=32000, dim=1024, heads=16, ffn=2816, layers=4, seq=1024, batch=8),
              llama.Size(vocab=4096, dim=256, heads=4, ffn=704, layers=2, seq=128, batch=8)),
    "lora": (lora.Size(vocab=32000, dim=1024, heads=8, head_dim=128, ffn=4096, layers=4, rank=16,
                       seq=1024, batch=8),
             lora.Size(vocab=4096, dim=256, heads=4, head_dim=64, ffn=1024, layers=2, rank=8,
                       seq=128, batch=8)),
    "scan": (scan_decoder.Size(vocab=32000, dim=1024, heads=16, kv_heads=4, head_dim=64,
                               ffn=2816, layers=8, seq=1024, batch=8),
             scan_decoder.Size(vocab=4096, dim=256, heads=4, kv_heads=2, head_dim=64, ffn=704,
                               layers=4, seq=128, batch=8)),
    **{f"flax_{layout}": (
        flax_transformer.Size(vocab=32000, dim=1024, heads=16, ffn=4096, layers=4, seq=512,
                              batch=8),
        flax_transformer.Size(vocab=4096, dim=256, heads=4, ffn=1024, layers=2, seq=128,
                              batch=8))
       for layout in flax_transformer.LAYOUTS},
    "moe": (moe.Size(experts=8, top_k=2, dim=1024, ffn=4096, groups=8, group_size=1024),
            moe.Size(experts=8, top_k=2, dim=256, ffn=1024, groups=8, group_size=256)),
    "vit": (vit.Size(image=224, patch=16, dim=768, heads=12, ffn=3072, layers=4, classes=1000,
                     batch=8),
            vit.Size(image=64, patch=8, dim=256, heads=4, ffn=1024, layers=2, classes=100,
                     batch=8)),
}


def _size_text(size: Any) -> str:
    return ", ".join(f"{f.name}={getattr(size, f.name)}" for f in fields(size))


def _mb(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def compiled_figures(step: Step) -> dict[str, tuple[float, float]]:
    """(jax.jit, shardc.jit) collective bytes and memory per device, from compiles on the
    step's abstract arguments (bench_jit.py times compiles)."""
    from tests.differential.hlo_bytes import total_bytes

    out: dict[str, list[float]] = {"bytes": [], "memory": []}
    for wrapper in (step.jax_jit(), step.shardc_jit()):
        compiled = wrapper.lower(*step.abstract).compile()
        out["bytes"].append(total_bytes(compiled.as_text()))
        out["memory"].append(memory_bytes(compiled))
    return {k: (v[0], v[1]) for k, v in out.items()}


def step_times(step: Step, k: int, clock: Any) -> tuple[float, float]:
    """Best of `k` calls of each side's compiled step (state fed back; calls alternate between
    the two sides so that both see the same machine)."""
    import jax

    compiled = [w.lower(*step.abstract).compile() for w in (step.jax_jit(), step.shardc_jit())]
    states = [list(jax.device_put(step.init(), step.in_shardings)) for _ in compiled]

    def call(i: int) -> float:
        t0 = clock()
        out = jax.block_until_ready(compiled[i](*states[i]))
        elapsed = clock() - t0
        states[i][:2] = out[:2]  # parameters and optimizer state, as the next step takes them
        return elapsed

    best = [float("inf"), float("inf")]
    for round_ in range(k + 1):  # round 0 warms up
        for i in (0, 1):
            t = call(i)
            if round_:
                best[i] = min(best[i], t)
    return best[0], best[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    ap.add_argument("--k", type=int, default=3, help="timed calls per side (best is reported)")
    ap.add_argument("--clock", default="wall", choices=("wall", "cpu"),
                    help="wall-clock seconds, or the process's CPU seconds (all threads)")
    ap.add_argument("--no-time", action="store_true", help="bytes and memory only")
    args = ap.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown models {unknown}; choose from {', '.join(MODELS)}")

    print(f"# real training steps, shardc.jit / jax.jit ({common.rng_note()}, 8 CPU devices, "
          f"step time best of {args.k}, {args.clock} clock)")
    summary = []
    for name in names:
        model = MODELS[name]
        big, small = SIZES[name]
        mesh = model.mesh()
        step = model.make(big)(mesh)
        fig = compiled_figures(step)
        mesh_text = ",".join(f"{a}={n}" for a, n in model.mesh_axes.items())
        print(f"\n## {step.name} on ({mesh_text})")
        print(f"bytes and memory at {_size_text(big)}")
        rows = [("collective bytes / device", *fig["bytes"], _mb),
                ("memory / device", *fig["memory"], _mb)]
        if not args.no_time:
            print(f"step time at {_size_text(small)}")
            times = step_times(model.make(small)(mesh), args.k, clock)
            rows.append(("step time", *times, lambda s: f"{s * 1e3:.1f} ms"))
        print(f"| {'measure':<26} | {'jax.jit':>12} | {'shardc.jit':>12} | ratio |")
        print(f"| {'-' * 26} | {'-' * 11}: | {'-' * 11}: | ----: |")
        ratios = []
        for label, ref, mine, fmt in rows:
            ratio = mine / ref if ref else float("nan")
            ratios.append(ratio)
            print(f"| {label:<26} | {fmt(ref):>12} | {fmt(mine):>12} | {ratio:5.2f} |", flush=True)
        summary.append((step.name, ratios))
    print("\n| step | bytes | memory | step time |")
    print("| --- | ---: | ---: | ---: |")
    for name, ratios in summary:
        cells = [f"{r:.2f}" for r in ratios] + ["-"] * (3 - len(ratios))
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
