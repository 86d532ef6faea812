"""Real training steps for the plan's accuracy: the planned collective bytes and memory of
`shardc.jit(step).lower(...)` against what `.compile()` builds (XLA's partitioned HLO and
`memory_analysis`), on 8 virtual CPU devices.

The steps are the training-step suite's own (`tests/steps/catalog.py`: the models at the
tests' small sizes, each on its mesh): the plan issue's targets name `flax_dp`, `flax_fsdp`,
`flax_megatron` (a Flax linen transformer with optax AdamW under data parallel, FSDP and
Megatron layouts) and `llama` (the EasyLM-style FSDP LLaMA step); `--all` adds the suite's
other steps (LoRA, scan decoder, mixture of experts, ViT).

    python bench/plan_steps.py [--only flax_dp,...] [--all]

Prints per step the planned and compiled bytes and memory and their ratios (target: bytes
within 10%), and where shardc's layout differs from XLA's own, that line of the plan. The plan
is of the layout that runs: where XLA's own Shardy, on the module as XLA's import makes it
(through HLO), lays values out otherwise without a pin, XLA's layout (docs/xla_boundary.md §5).
Run from the repository root.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

TARGETS = ("flax_dp", "flax_fsdp", "flax_megatron", "llama")  # the plan issue's steps


def measure(name: str) -> tuple[dict[str, int], str | None]:
    """Planned and compiled bytes and memory of the suite's step `name`, and the plan's line
    on XLA's own layout (None where shardc's is XLA's)."""
    from shardc.backend.hlo_collectives import total_bytes
    from tests.steps.catalog import MODELS
    from tests.steps.harness import memory_bytes

    model = MODELS[name]
    step = model.make()(model.mesh())
    lowered = step.shardc_jit().lower(*step.abstract)
    plan = lowered.plan()
    compiled = lowered.compile()
    out = {
        "plan": plan.total_bytes,
        "xla": total_bytes(compiled.as_text()),
        "plan_memory": plan.memory.total,
        "xla_memory": memory_bytes(compiled),
    }
    own = plan.xla_own.line(plan.total_bytes) if plan.xla_own is not None else None
    return out, own


def main() -> int:
    from tests.steps.catalog import MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated step names")
    parser.add_argument("--all", action="store_true", help="every step of the suite")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or (list(MODELS) if args.all else TARGETS)
    print(
        f"{'step':16} {'plan B':>9} {'xla B':>9} {'ratio':>6}   {'plan mem':>9} {'xla mem':>9} "
        f"{'ratio':>6}"
    )
    for name in names:
        r, own = measure(name)
        br = r["plan"] / r["xla"] if r["xla"] else float("nan")
        mr = r["plan_memory"] / r["xla_memory"]
        print(
            f"{name:16} {r['plan']:>9} {r['xla']:>9} {br:>6.2f}   "
            f"{r['plan_memory']:>9} {r['xla_memory']:>9} {mr:>6.2f}",
            flush=True,
        )
        if own is not None:
            print(f"  {own}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
