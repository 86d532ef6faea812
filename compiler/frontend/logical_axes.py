"""Logical axis names mapped to mesh axes by rules (the flax `axis_rules` style).

    rules = [("batch", "X"), ("hidden", "Y"), ("heads", "Y"), ("embed_kernel", "X"), ("embed", "Y")]
    shardc.logical("batch", None, "embed")            # a spec, resolved when used
    shardc.logical_to_spec(("batch", None, "embed"), rules)   # -> P("X", None, "Y")

Each logical name takes the first rule whose mesh axes are not already used by an earlier dim
of the same tensor (so ("embed_kernel", "hidden") with the rules above is X, Y); a rule's
value may be one axis, a tuple of axes, or None (replicated). `None` dims stay replicated.
The rules come from `rules=` or from the innermost `with shardc.axis_rules(rules):`.
A logical spec may end with "?" entries (open dims) and carry per-dim priorities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shardc.dialect.errors import ShardingError
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh
from shardc.frontend.logical_rules import (
    Rules,
    axis_rules,
    current_rules,
    normalize_rules,
    resolve_names,
)
from shardc.frontend.specs import Spec

# `axis_rules` is defined beside the rules it sets (logical_rules.py), exported from here
__all__ = ["LogicalSpec", "axis_rules", "logical", "logical_to_spec"]


@dataclass(frozen=True)
class LogicalSpec:
    """A spec written with logical axis names; resolved against rules when it is used."""

    names: tuple[str | None, ...]
    rules: Rules | None = None
    priorities: tuple[int | None, ...] | None = None

    def to_dim_shardings(self, mesh: Mesh, rank: int) -> Spec:
        rules = self.rules if self.rules is not None else current_rules()
        if rules is None:
            raise ShardingError(
                f"logical spec {self.names} used without axis rules",
                hint="pass rules=, or wrap the call in `with shardc.axis_rules(rules):` or "
                "Flax's `with nn.logical_axis_rules(rules):`",
            )
        resolved = resolve_names(self.names, rules, mesh.axis_names)
        prios = self.priorities or (None,) * len(self.names)
        dims = []
        for name, axes, prio in zip(self.names, resolved, prios, strict=True):
            is_open = name == "?"
            dims.append(DimSharding(tuple(AxisRef(a) for a in axes or ()), not is_open, prio))
        return Spec(tuple(dims), text=f"logical{self.names}")

    def __str__(self) -> str:
        return f"logical{self.names}"


def logical(
    *names: str | None,
    rules: Sequence[tuple[str, Any]] | None = None,
    priorities: Sequence[int | None] | None = None,
) -> LogicalSpec:
    """A spec in logical names: `shardc.logical("batch", None, "embed")`; "?" is an open dim."""
    if priorities is not None and len(priorities) != len(names):
        raise ShardingError(f"priorities {tuple(priorities)} do not match names {names}")
    return LogicalSpec(
        tuple(names),
        normalize_rules(rules) if rules is not None else None,
        tuple(priorities) if priorities is not None else None,
    )


def logical_to_spec(names: Sequence[str | None], rules: Sequence[tuple[str, Any]]) -> Any:
    """The `jax.sharding.PartitionSpec` of logical `names` under `rules`."""
    from jax.sharding import PartitionSpec

    entries: list[Any] = []
    for axes in resolve_names(names, normalize_rules(rules)):
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return PartitionSpec(*entries)
