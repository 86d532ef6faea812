"""Two layouts of one program compared: values whose sharding differs, collectives added and
removed, and the change in planned bytes (B minus A).

Values are matched by func and printed name (`@main %3`), which is stable when only
annotations or priorities change; collectives by kind, axes, func, value and op.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from shardc.dialect.ir import Module, func_body
from shardc.dialect.value_names import func_value_names

from . import layout
from .report import Collective, Plan, fmt_bytes


@dataclass(frozen=True)
class ValueChange:
    """One value whose sharding differs between A and B."""

    func: str
    value: str
    a: str
    b: str

    def to_json(self) -> dict[str, str]:
        return {"func": self.func, "value": self.value, "a": self.a, "b": self.b}


@dataclass
class PlanDiff:
    """`values`, `collectives_added`, `collectives_removed`, `bytes_delta` (B - A)."""

    values: list[ValueChange] = field(default_factory=list)
    collectives_added: list[Collective] = field(default_factory=list)
    collectives_removed: list[Collective] = field(default_factory=list)
    bytes_delta: int = 0

    def to_json(self) -> dict[str, Any]:
        """The JSON document: values, collectives added and removed, `bytes_delta`."""
        return {
            "values": [v.to_json() for v in self.values],
            "collectives_added": [c.to_json() for c in self.collectives_added],
            "collectives_removed": [c.to_json() for c in self.collectives_removed],
            "bytes_delta": self.bytes_delta,
        }

    def json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def __str__(self) -> str:
        return self.table()

    def table(self) -> str:
        lines = [f"{len(self.values)} values differ"]
        for v in self.values:
            lines.append(f"  @{v.func} {v.value}: {v.a} -> {v.b}")
        for title, cs, sign in (
            ("added", self.collectives_added, "+"),
            ("removed", self.collectives_removed, "-"),
        ):
            lines.append(f"{len(cs)} collectives {title}")
            for c in cs:
                axes = "{" + ", ".join(c.axes) + "}"
                lines.append(
                    f"  {sign} {c.kind} {axes} {fmt_bytes(c.bytes)}: {c.value} of "
                    f"{c.op} in @{c.func}"
                )
        sign = "+" if self.bytes_delta >= 0 else "-"
        lines.append(f"bytes delta (B - A): {sign}{fmt_bytes(abs(self.bytes_delta))}")
        return "\n".join(lines) + "\n"


def module_shardings(module: Module) -> dict[tuple[str, str], str]:
    """`(func, value name) -> sharding text` for every value and func result of `module`."""
    out: dict[tuple[str, str], str] = {}
    for fname, func in module.funcs.items():
        names = func_value_names(func)
        for op in func.walk():
            values = op.results if op is not func else []
            for v in values:
                out[(fname, names.get(id(v), "?"))] = _text(layout.value_sharding(v), v)
        body = func_body(func)
        if body is None:
            continue
        for a in body.args:
            out[(fname, names.get(id(a), "?"))] = _text(layout.value_sharding(a), a)
        if body.terminator is not None:
            for i, v in enumerate(body.terminator.operands):
                s = layout.result_sharding(func, i)
                out[(fname, f"result {i}")] = _text(s, v)
    return out


def _text(s: Any, v: Any) -> str:
    if s is None:
        return "replicated"
    closed = s.closed()
    return "replicated" if closed.is_fully_replicated() else closed.body()


def diff_plans(a: Plan, b: Plan) -> tuple[list[Collective], list[Collective]]:
    """Collectives in B and not A, and in A and not B (as multisets of `Collective.key`)."""
    ka = Counter(c.key() for c in a.collectives)
    kb = Counter(c.key() for c in b.collectives)
    added, removed = [], []
    for c in b.collectives:
        if ka[c.key()] > 0:
            ka[c.key()] -= 1
        else:
            added.append(c)
    for c in a.collectives:
        if kb[c.key()] > 0:
            kb[c.key()] -= 1
        else:
            removed.append(c)
    return added, removed


def diff_modules(ma: Module, pa: Plan, mb: Module, pb: Plan) -> PlanDiff:
    """The diff of two propagated modules of the same program and their plans."""
    sa, sb = module_shardings(ma), module_shardings(mb)
    values = [
        ValueChange(f, v, sa[(f, v)], sb[(f, v)])
        for (f, v) in sa
        if (f, v) in sb and sa[(f, v)] != sb[(f, v)]
    ]
    added, removed = diff_plans(pa, pb)
    return PlanDiff(values, added, removed, pb.total_bytes - pa.total_bytes)
