"""What a propagation run reports: ops without rules, warnings, rounds, origins when recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shardc.dialect.rules.registry import RuleProblems

from .origins import OriginRecorder


@dataclass
class PropagationReport:
    """What a propagation run did: ops without rules, rounds run, origins when recorded.

    `explanation` (with `debug_origins`) has one line per dim propagation decided;
    `round_dumps` (with `dump_rounds`) every sharding after every round."""

    ops_without_rules: dict[str, int] = field(default_factory=dict)
    # op names whose rule could not be used (raised, or the wrong arity): each named once
    rule_problems: RuleProblems = field(default_factory=RuleProblems)
    rounds: list[str] = field(default_factory=list)
    steps: int = 0
    updates: int = 0
    warnings: list[str] = field(default_factory=list)
    origins: OriginRecorder | None = None
    explanation: list[str] = field(default_factory=list)
    round_dumps: list[str] = field(default_factory=list)
    auto: Any = None  # the auto-sharding pass's AutoReport when options.auto

    def notes(self) -> list[str]:
        """What a user should hear about: one line per op kind without a rule or with an unusable
        one, then warnings."""
        out = []
        for name, n in sorted(self.ops_without_rules.items()):
            out.append(
                f"no sharding rule for {name} ({n} op{'s' if n != 1 else ''}): "
                "nothing propagates through it"
            )
        out.extend(self.rule_problems.lines())
        out.extend(self.warnings)
        return out

    def summary(self) -> str:
        return f"rounds: {', '.join(self.rounds)}; {self.steps} steps, {self.updates} updates"

    def lines(self) -> list[str]:
        """Notes, the summary and the explanation: the whole report as text."""
        return [*self.notes(), self.summary(), *self.explanation]

    def __str__(self) -> str:
        return "\n".join(self.lines())
