"""The logical axis rules in effect and the mesh axes they map logical names to.

The rules come from the innermost `with shardc.axis_rules(rules):`, else from Flax's
`nn.logical_axis_rules`; each logical name takes the first rule whose mesh axes are not already
used by an earlier dim of the same tensor. Both logical specs (logical_axes.py) and
`PartitionSpec`s written with logical names (specs.py) resolve through here.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from shardc.dialect.errors import ShardingError, unknown_axis
from shardc.dialect.shardings import Mesh

Rules = tuple[tuple[str, Any], ...]
_LOCAL = threading.local()


def normalize_rules(rules: Sequence[tuple[str, Any]]) -> Rules:
    """The rules as a tuple of (logical name, mesh axes) pairs; `ShardingError` if malformed."""
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
    _LOCAL.rules = normalize_rules(rules)
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
    return normalize_rules(rules) if rules else None


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
                    raise unknown_axis(
                        a, ", ".join(mesh_axes), mesh_axes, given=f"axis rule ({name!r}, {a!r})",
                        hint=f"map {name!r} to one of the mesh axes, or to None to replicate it",
                    )
        used.update(chosen)
        out.append(chosen)
    return out
