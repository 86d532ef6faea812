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

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from shardc.dialect.errors import ShardingError
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh

from .specs import Spec

Rules = tuple[tuple[str, Any], ...]
_LOCAL = threading.local()


def _normalize(rules: Sequence[tuple[str, Any]]) -> Rules:
    out = []
    for rule in rules:
        if not isinstance(rule, tuple | list) or len(rule) != 2 or not isinstance(rule[0], str):
            raise ShardingError(
                f"axis rule {rule!r} is not a (logical name, mesh axes) pair",
                hint='write rules like [("batch", "X"), ("embed", "Y"), ("seq", None)]',
            )
        name, target = rule
        if target is None:
            axes: tuple[str, ...] = ()
        elif isinstance(target, str):
            axes = (target,)
        else:
            axes = tuple(str(a) for a in target)
        out.append((name, axes))
    return tuple(out)


@contextlib.contextmanager
def axis_rules(rules: Sequence[tuple[str, Any]]) -> Iterator[Rules]:
    """Use `rules` for logical specs resolved inside the block (thread-local, nestable)."""
    previous = getattr(_LOCAL, "rules", None)
    _LOCAL.rules = _normalize(rules)
    try:
        yield _LOCAL.rules
    finally:
        _LOCAL.rules = previous


def current_rules() -> Rules | None:
    """shardc's innermost `axis_rules`, else Flax's (`nn.logical_axis_rules` /
    `nn.set_logical_axis_rules`) when Flax is in use, else None."""
    rules = getattr(_LOCAL, "rules", None)
    if rules is not None:
        return rules  # type: ignore[no-any-return]
    return flax_rules()


def flax_rules() -> Rules | None:
    """The logical axis rules Flax has in effect, normalized; None without Flax or rules."""
    import sys

    if "flax" not in sys.modules:
        return None  # nobody set Flax rules without importing Flax
    try:
        from flax.core import spmd
    except ImportError:  # pragma: no cover - a Flax without flax.core.spmd
        return None
    rules = spmd.get_logical_axis_rules()
    return _normalize(rules) if rules else None


def resolve_pspec_entries(entries: Sequence[Any], mesh: Mesh) -> list[Any] | None:
    """A `PartitionSpec`'s entries with logical names (not mesh axes) mapped through the rules
    in effect (shardc's or Flax's), as `nn.get_partition_spec` results need; None if every name
    is a mesh axis already or no rules are in effect."""
    names = set(mesh.axis_names)
    flat = [e for entry in entries for e in (entry if isinstance(entry, tuple | list) else (entry,))]
    logical = [e for e in flat if isinstance(e, str) and e not in names]
    if not logical:
        return None
    rules = current_rules()
    if rules is None:
        return None
    used: set[str] = {e for e in flat if isinstance(e, str) and e in names}
    out: list[Any] = []
    for entry in entries:
        parts = entry if isinstance(entry, tuple | list) else (entry,)
        axes: list[str] = []
        for part in parts:
            if part is None:
                continue
            if part in names:
                axes.append(part)
                continue
            (resolved,) = resolve_names([part], rules, mesh.axis_names, used)
            axes.extend(resolved or ())
            used.update(resolved or ())
        out.append(None if not axes else tuple(axes))
    return out


def resolve_names(
    names: Sequence[str | None],
    rules: Rules,
    mesh_axes: Sequence[str] | None = None,
    used: set[str] | None = None,
) -> list[tuple[str, ...] | None]:
    """Mesh axes of each logical name (`None` for unsharded dims); `ShardingError` if unmapped."""
    used = set() if used is None else set(used)
    out: list[tuple[str, ...] | None] = []
    for name in names:
        if name is None or name == "?":
            out.append(None)
            continue
        candidates = [axes for rule_name, axes in rules if rule_name == name]
        if not candidates:
            raise ShardingError(
                f"logical axis {name!r} in {tuple(names)} has no rule "
                f"(rules name: {', '.join(sorted({r for r, _ in rules})) or 'nothing'})",
                hint=f"add a rule ({name!r}, <mesh axis>), or ({name!r}, None) to replicate it",
            )
        chosen: tuple[str, ...] = ()
        for axes in candidates:
            if not axes or not (set(axes) & used):
                chosen = axes
                break
        if mesh_axes is not None:
            for a in chosen:
                if a not in mesh_axes:
                    raise ShardingError(
                        f"rule ({name!r}, {a!r}) maps to mesh axis {a!r}, which is not in the "
                        f"mesh (axes: {', '.join(mesh_axes)})",
                        hint=f"map {name!r} to one of the mesh axes, or to None to replicate it",
                    )
        used.update(chosen)
        out.append(chosen)
    return out


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
        _normalize(rules) if rules is not None else None,
        tuple(priorities) if priorities is not None else None,
    )


def logical_to_spec(names: Sequence[str | None], rules: Sequence[tuple[str, Any]]) -> Any:
    """The `jax.sharding.PartitionSpec` of logical `names` under `rules`."""
    from jax.sharding import PartitionSpec

    entries: list[Any] = []
    for axes in resolve_names(names, _normalize(rules)):
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return PartitionSpec(*entries)
