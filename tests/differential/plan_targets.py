"""The plan's accuracy on one program, as the plan's accuracy targets measure it.

* bytes: the planned total against the collective bytes of XLA's compiled program (the `pin`
  export, `shardc.propagate(text, mode="pin")`, compiled for the mesh's CPU devices; the one
  measure of `shardc.backend.hlo_collectives`), within max(10%, 256 B);
* memory: planned arguments + results + peak temporaries - aliased against XLA's `memory_analysis`
  arguments + outputs + temps - aliased, within 20%;
* explicit: `shardc propagate --explicit` verifies with jaxlib, and its collectives (kind and
  axes, per op) are Shardy's explicit pipeline's on the same module.

Used by `tests/differential/test_plan_targets.py` (a few programs) and `bench/plan_random.py`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import shardc
from shardc.backend.hlo_collectives import total_bytes
from shardc.passes.plan.plan import PlanOptions

from . import harness as H
from . import shardy_explicit as SE


@dataclass
class Measured:
    plan_bytes: int
    xla_bytes: int
    plan_memory: int
    xla_memory: int
    explicit_valid: bool | None = None
    explicit_agrees: bool | None = None

    @property
    def bytes_ok(self) -> bool:
        return abs(self.plan_bytes - self.xla_bytes) <= max(256, self.xla_bytes // 10)

    @property
    def memory_ok(self) -> bool:
        return abs(self.plan_memory - self.xla_memory) <= 0.2 * self.xla_memory


def xla_memory(stats: Any) -> int:
    """XLA's memory per device, the one measure: arguments + outputs + temps - aliased."""
    return int(
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        + stats.temp_size_in_bytes
        - stats.alias_size_in_bytes
    )


def _collectives(text: str) -> Counter[tuple[str, tuple[str, ...]]]:
    return Counter(
        (kind, tuple(sorted(a.replace('"', "") for a in axes)))
        for kind, axes in SE.shardy_collectives(text)
    )


def measure(text: str, num_devices: int, explicit: bool = False) -> Measured:
    """Plan `text`, compile its pin export with XLA and compare (see the module docstring)."""
    plan = shardc.plan(text, plan_options=PlanOptions(fixes=False))
    exe = H.compile_mlir(shardc.propagate(text, mode="pin"), num_devices)
    m = plan.memory
    out = Measured(
        plan.total_bytes,
        total_bytes(H.hlo_text(exe)),
        m.total,
        xla_memory(exe.get_compiled_memory_stats()),
    )
    if explicit:
        from shardc.api.plan import explicit as explicit_text
        from shardc.backend import mlir_bridge

        written = explicit_text(text)
        try:
            mlir_bridge.verify(mlir_bridge.parse_module(written, "<explicit>"), "<explicit>")
            out.explicit_valid = True
        except shardc.ShardcError:
            out.explicit_valid = False
        theirs = _collectives(SE.shardy_output(text))
        out.explicit_agrees = out.explicit_valid and _collectives(written) == theirs
    return out
