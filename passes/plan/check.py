"""The plan against the program XLA compiled: each planned collective matched to the compiled
ones by source op, kind and mesh axes (pure: plan entries and compiled records in).

A compiled collective is matched to the planned ones at the same op (its HLO `op_name` is the
op's location name, `Collective.source`), or at the planned value's producer (a reshard XLA
does where the value is made), or on the same source line, and finally anywhere, by kind and
axes alone. At one op, one compiled collective may stand for several planned ones (XLA gathers
`{x}` and `{y}` of one value in one all-gather over `{x, y}`); otherwise a match is one to one.
A planned all-slice is a local slice, not a collective: it is neither matched nor missing.

JSON (a fixed schema): `{"planned": [plan entries], "compiled": [{"kind", "axes", "bytes",
"op_name", "loc"}], "matched": [[planned_index, compiled_index]], "planned_only":
[planned_index], "compiled_only": [compiled_index], "total_planned": int, "total_compiled":
int}`; a compiled entry's bytes are per run of the program (times loop trip counts), as the
plan's are.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cost import ALL_SLICE
from .report import Collective, axis_name, fmt_bytes


@dataclass(frozen=True)
class CompiledEntry:
    """One collective of the compiled program: kind, mesh axes, bytes per run, where from."""

    kind: str
    axes: tuple[str, ...]
    bytes: int
    op_name: str
    loc: str | None
    # the ops it came from (one, or several XLA combined): what it is matched by
    sources: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "axes": list(self.axes),
            "bytes": self.bytes,
            "op_name": self.op_name,
            "loc": self.loc,
        }


@dataclass
class PlanCheck:
    """Planned and compiled collectives and how they pair up (see the module docstring)."""

    planned: list[Collective]
    compiled: list[CompiledEntry]
    matched: list[tuple[int, int]] = field(default_factory=list)
    planned_only: list[int] = field(default_factory=list)
    compiled_only: list[int] = field(default_factory=list)

    @property
    def total_planned(self) -> int:
        return sum(c.bytes for c in self.planned)

    @property
    def total_compiled(self) -> int:
        return sum(c.bytes for c in self.compiled)

    def to_json(self) -> dict[str, Any]:
        """The JSON document (schema above)."""
        return {
            "planned": [c.to_json() for c in self.planned],
            "compiled": [c.to_json() for c in self.compiled],
            "matched": [[p, c] for p, c in self.matched],
            "planned_only": list(self.planned_only),
            "compiled_only": list(self.compiled_only),
            "total_planned": self.total_planned,
            "total_compiled": self.total_compiled,
        }

    def json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def table(self) -> str:
        """Each compiled collective with the planned ones it matched, then what is left."""
        lines = [
            f"check against XLA's compiled program: planned {fmt_bytes(self.total_planned)}, "
            f"compiled {fmt_bytes(self.total_compiled)} per device"
        ]
        by_compiled: dict[int, list[int]] = {}
        for p, c in self.matched:
            by_compiled.setdefault(c, []).append(p)
        for c, ps in sorted(by_compiled.items()):
            lines.append(f"  = {_compiled_text(self.compiled[c])}")
            for p in ps:
                lines.append(f"      planned #{p + 1}: {_planned_text(self.planned[p])}")
        for p in self.planned_only:
            lines.append(f"  - planned only #{p + 1}: {_planned_text(self.planned[p])}")
        for c in self.compiled_only:
            lines.append(f"  + compiled only: {_compiled_text(self.compiled[c])}")
        return "\n".join(lines) + "\n"


def _axes(axes: tuple[str, ...]) -> str:
    return "{" + ", ".join(axes) + "}"


def _compiled_text(c: CompiledEntry) -> str:
    where = " ".join(x for x in (c.op_name, f"at {c.loc}" if c.loc else "") if x)
    return f"{c.kind} {_axes(c.axes)} {fmt_bytes(c.bytes)}" + (f" ({where})" if where else "")


def _planned_text(c: Collective) -> str:
    where = f" at {c.loc}" if c.loc else ""
    return f"{c.kind} {_axes(c.axes)} {fmt_bytes(c.bytes)}: {c.value} of {c.op}{where}"


def _sources(c: CompiledEntry) -> tuple[str, ...]:
    return c.sources or ((c.op_name,) if c.op_name else ())


def _names(axes: tuple[str, ...]) -> set[str]:
    return {axis_name(a) for a in axes}


def _line(loc: str | None) -> str | None:
    """`file:line` of a `file:line[:col]` location."""
    if not loc:
        return None
    parts = loc.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return f"{parts[0]}:{parts[1]}"
    return loc


def match(planned: list[Collective], compiled: list[CompiledEntry]) -> PlanCheck:
    """Pair planned and compiled collectives (see the module docstring)."""
    out = PlanCheck(planned, compiled)
    todo = [i for i, p in enumerate(planned) if p.kind != ALL_SLICE]
    owner: dict[int, Collective] = {}  # compiled index -> the planned it first matched
    used: dict[int, int] = {}  # compiled index -> planned bytes it stands for
    done: set[int] = set()

    def same_kind(p: Collective, c: CompiledEntry) -> bool:
        return p.kind == c.kind and _names(p.axes) <= _names(c.axes)

    tiers: list[tuple[bool, Callable[[Collective, CompiledEntry], bool]]] = [
        (True, lambda p, c: p.source is not None and p.source in _sources(c)),
        (True, lambda p, c: p.producer is not None and p.producer in _sources(c)),
        (True, lambda p, c: _line(p.loc) is not None and _line(p.loc) == _line(c.loc)),
        (False, lambda p, c: _names(p.axes) == _names(c.axes)),
    ]
    for shared, where in tiers:
        for i in todo:
            if i in done:
                continue
            p = planned[i]
            best: int | None = None
            for j, c in enumerate(compiled):
                if not same_kind(p, c) or not where(p, c):
                    continue
                first = owner.get(j)
                # a compiled collective stands for several planned ones only at their ops, and
                # for no more bytes than it moves (XLA combines; it does not invent)
                if first is not None and (not shared or used[j] + p.bytes > c.bytes * 1.1):
                    continue
                if best is None or abs(c.bytes - p.bytes) < abs(compiled[best].bytes - p.bytes):
                    best = j
            if best is not None:
                out.matched.append((i, best))
                owner.setdefault(best, p)
                used[best] = used.get(best, 0) + p.bytes
                done.add(i)
    out.matched.sort()
    out.planned_only = [i for i in todo if i not in done]
    out.compiled_only = [j for j in range(len(compiled)) if j not in owner]
    return out
