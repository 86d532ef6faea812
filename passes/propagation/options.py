"""`PropagationOptions`: every switch of the propagation pass, in one frozen object.

CLI flags of `shardc propagate` are derived from these fields (tools/cmd_propagate.py), so the API
and the command line behave the same.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

Strategy = Literal["aggressive", "basic"]


@dataclass(frozen=True)
class PropagationOptions:
    """Options of the propagation pass (defaults reproduce Shardy's `sdy-propagation-pipeline`)."""

    strategy: Strategy = "aggressive"
    """Factor strategy: `aggressive` (Shardy's default) or `basic` (only conflict-free axes)."""
    keep_open: bool = False
    """Keep open-dim markers (`?`) and replicated lists on export instead of closing everything."""
    user_priorities: bool = True
    """Propagate user priorities (`{...}pN`) in rounds p0, p1, ...; off: all at once."""
    op_priorities: bool = True
    """Run the op-priority schedule (pass-through ops first, broadcasts forward last)."""
    conservative: bool = False
    """Never propagate along permutation factors (Shardy's conservative-propagation)."""
    debug_origins: bool = False
    """Record where every dim sharding came from (annotation, op and round): `explain`."""
    dump_rounds: bool = False
    """Dump every value's sharding after import and after every round (a debugging aid)."""
    split_constants: bool = True
    """Give every use of a constant expression its own view, as Shardy's constant splitter does."""
    max_steps: int = 0
    """Safety cap on worklist steps per run (0 = no cap beyond the monotonicity bound)."""


STRATEGIES: tuple[str, ...] = ("aggressive", "basic")


def option_fields() -> list[str]:
    return [f.name for f in fields(PropagationOptions)]
