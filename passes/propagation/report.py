"""What a propagation run reports: ops without rules, warnings, rounds, origins when recorded."""

from __future__ import annotations

from dataclasses import dataclass, field

from .origins import OriginRecorder


@dataclass
class PropagationReport:
    """What a propagation run did: ops without rules, rounds run, origins when recorded."""

    ops_without_rules: dict[str, int] = field(default_factory=dict)
    rounds: list[str] = field(default_factory=list)
    steps: int = 0
    updates: int = 0
    warnings: list[str] = field(default_factory=list)
    origins: OriginRecorder | None = None

    def lines(self) -> list[str]:
        out = []
        for name, n in sorted(self.ops_without_rules.items()):
            out.append(
                f"no sharding rule for {name} ({n} op{'s' if n != 1 else ''}): "
                "nothing propagates through it"
            )
        out.extend(self.warnings)
        out.append(f"rounds: {', '.join(self.rounds)}; {self.steps} steps, {self.updates} updates")
        if self.origins is not None:
            out.extend(self.origins.lines())
        return out
