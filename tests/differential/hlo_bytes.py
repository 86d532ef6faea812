"""Collective bytes of XLA's partitioned HLO, by the plan's measure.

Per collective: the larger of its operand and result local bytes (async `-start` forms: the
tuple holds operands and results), times the known trip count of every enclosing while loop
(`backend_config={"known_trip_count":{"n":"N"}}`) and times the calls of its computation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .harness import COLLECTIVES, _shape_bytes

_HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+[\w\-]+\(")
_NAME = re.compile(r"%([\w.\-]+)")
_OP = re.compile(r"=\s*(.+?)\s+(" + "|".join(COLLECTIVES) + r")(-start)?\((.*)")
_WHILE = re.compile(r"\bwhile\(.*condition=%?([\w.\-]+).*body=%?([\w.\-]+)")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"')
_CALLS = re.compile(r"(?:calls|to_apply|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")


@dataclass
class HloCollective:
    kind: str
    bytes: int  # per execution
    computation: str


def _operand_text(rest: str) -> str:
    depth = 1
    for i, c in enumerate(rest):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return rest[:i]
    return rest


def parse(hlo: str) -> tuple[str, dict[str, list[str]]]:
    """The entry computation's name and every computation's op lines."""
    comps: dict[str, list[str]] = {}
    entry = ""
    cur: list[str] | None = None
    for line in hlo.splitlines():
        if cur is None:
            m = _HEADER.match(line)
            if m and "=" not in line.split("(")[0]:
                cur = comps.setdefault(m.group(2), [])
                if m.group(1):
                    entry = m.group(2)
            continue
        if line.strip() == "}":
            cur = None
            continue
        cur.append(line)
    return entry, comps


def collectives(hlo: str) -> list[tuple[HloCollective, int]]:
    """Every collective with how many times it runs per execution of the entry."""
    entry, comps = parse(hlo)
    mult: dict[str, int] = {}

    def visit(name: str, n: int, depth: int = 0) -> None:
        if name not in comps or depth > 50:
            return
        mult[name] = mult.get(name, 0) + n
        for line in comps[name]:
            w = _WHILE.search(line)
            if w:
                t = _TRIP.search(line)
                trips = int(t.group(1)) if t else 1
                visit(w.group(2), n * trips, depth + 1)
                continue
            for c in _CALLS.findall(line):
                visit(c, n, depth + 1)
            b = _BRANCHES.search(line)
            if b:
                for c in b.group(1).split(","):
                    visit(c.strip().lstrip("%"), n, depth + 1)

    visit(entry, 1)
    out = []
    for name, lines in comps.items():
        shapes: dict[str, str] = {}
        for line in lines:
            d = _DEF.match(line)
            if d:
                shapes[d.group(1)] = d.group(2)
        for line in lines:
            m = _OP.search(line)
            if not m:
                continue
            result = _shape_bytes(m.group(1))
            text = _operand_text(m.group(4))
            operand = _shape_bytes(text)
            if not operand:  # operands printed by name only: look their shapes up
                operand = sum(_shape_bytes(shapes.get(n, "")) for n in _NAME.findall(text))
            if m.group(3):
                result = max(result - operand, 0)
            out.append((HloCollective(m.group(2), max(result, operand), name), mult.get(name, 0)))
    return out


def total_bytes(hlo: str) -> int:
    """The plan's measure over a whole HLO module."""
    return sum(c.bytes * n for c, n in collectives(hlo))


def per_kind(hlo: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for c, n in collectives(hlo):
        out[c.kind] = out.get(c.kind, 0) + c.bytes * n
    return out
