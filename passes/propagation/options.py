"""`PropagationOptions`: every switch of the propagation pass, in one frozen object.

CLI flags of `shardc propagate` are derived from these fields (tools/cmd_propagate.py), so the API
and the command line behave the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shardc.dialect.errors import ShardcError, not_one_of

from .factor_propagation import STRATEGIES as _STRATEGY_TABLE

# the factor strategies by name (the table in factor_propagation.py is the one list)
STRATEGIES: tuple[str, ...] = tuple(_STRATEGY_TABLE)
Strategy = str  # one of STRATEGIES


def _option(default: object, help: str) -> Any:
    """A field whose `help` is both its documentation and its `shardc propagate` flag's help."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class PropagationOptions:
    """Options of the propagation pass (defaults reproduce Shardy's `sdy-propagation-pipeline`).

    Each field's help is in its metadata (`field.metadata["help"]`), which the CLI shows."""

    strategy: Strategy = _option(
        "aggressive",
        "factor strategy: " + " or ".join(STRATEGIES) + " (aggressive is Shardy's default; basic "
        "moves only conflict-free axes)",
    )
    keep_open: bool = _option(
        False, "keep open dims (`?`) in the output instead of closing every sharding"
    )
    user_priorities: bool = _option(
        True, "propagate user priorities p0, p1, ... in rounds (off: all at once)"
    )
    op_priorities: bool = _option(
        True, "run the op-priority schedule (pass-through ops first, broadcasts forward last)"
    )
    conservative: bool = _option(
        False,
        "Shardy's conservative-propagation: no axis is split into sub-axes, and the rules of "
        "`shardc rules --conservative` (no factor along a concatenate's dim or a "
        "convolution's spatial dims; pad, slice, reduce_window and select_and_scatter "
        "propagate nothing along the dims they change)",
    )
    debug_origins: bool = _option(
        False,
        "explain where each dim sharding came from: value, dim, axes, the annotation they trace "
        "back to, the round, and the op that wrote them",
    )
    dump_rounds: bool = _option(
        False, "print every value's sharding after import and after every round"
    )
    split_constants: bool = _option(
        True,
        "give each use of a constant expression its own copy while propagating, as Shardy's "
        "splitter does (passes split-constants and merge-constants; off: both left out)",
    )
    dedup_functions_fully: bool = _option(
        False,
        "keep one callee per function, shared by all its call sites and propagated through "
        "all of them (Shardy's dedup-functions-fully=true); default: each call site gets its "
        "own copy of the callee",
    )
    max_steps: int = _option(0, "cap on worklist steps per run (0: none)")
    xla_dead_code: bool = _option(
        False,
        "let nothing XLA deletes before its own propagation decide a layout: besides what "
        "Shardy erases as dead, unused calls, loops and conditionals without side effects "
        "(what --pin and shardc.jit compile; off: Shardy's pipeline on the module as written)",
    )
    xla_dead_constraints: bool = _option(
        False,
        "with xla_dead_code: an unused sharding constraint decides no layout either (XLA "
        "deletes it before its own propagation; --pin, shardc.jit and the plan set it)",
    )
    auto: bool = _option(
        False,
        "after propagation, give mesh axes to the dims nothing decided, minimizing planned "
        "collective bytes within --memory-budget (annotations, closed dims and priorities stay)",
    )
    memory_budget: int | str = _option(
        "", "with --auto: per-device memory budget, bytes or with KiB/MiB/GiB (empty: none)"
    )
    axis_cost: str = _option(
        "", "with --auto: weight of a collective's bytes per mesh axis, e.g. data=4,model=1"
    )
    auto_time_limit: int = _option(
        0,
        "with --auto: wall-clock seconds for the exact solve, then the best found (0: none; the "
        "solvers stop on deterministic limits, so the layout does not depend on the load)",
    )
    auto_headroom: float = _option(
        0.0,
        "with --auto: percent of the budget auto's solve keeps free (its memory estimate is "
        "checked by the plan's after each solve, and by XLA's memory_analysis in shardc.jit)",
    )
    auto_solver: str = _option(
        "highs",
        "with --auto: solver, highs (scipy's milp; a binding budget is priced into the "
        "objective first), highs-rows (highs with every memory row, never "
        "priced) or cp-sat (OR-tools)",
    )
    auto_keep_propagated: bool = _option(
        False,
        "with --auto: also keep every dim propagation decided (default: only the annotations "
        "stay and auto chooses every other layout; with priorities in the annotations, what "
        "propagation decided always stays)",
    )

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise not_one_of("strategy", self.strategy, STRATEGIES)
        if self.max_steps < 0:
            raise ShardcError(
                f"max_steps = {self.max_steps} is negative", hint="use 0 (no cap) or a positive cap"
            )
