"""Shardy's explicit collectives for a module, to compare with the plan's kinds and axes.

`EXPLICIT` is the pipeline that makes Shardy's communication explicit (docs/xla_boundary.md
§2); `shardy_collectives` reads the `sdy.all_gather`, `sdy.all_slice`,
`sdy.all_reduce`, `sdy.all_to_all` and `sdy.collective_permute` ops of its output; `atoms`
puts both sides in one comparable form: a multiset of (kind, mesh axis) pairs, a
reduce-scatter counted as the all-reduce plus all-slice Shardy writes for it, a
collective-permute as one atom without axes (Shardy's op names none).
"""

from __future__ import annotations

import re
from collections import Counter

from . import harness as H

EXPLICIT = (
    "sdy-propagation-pipeline, "
    "func.func(sdy-insert-explicit-reshards{enable-full-version=true}), "
    "func.func(sdy-reshard-to-collectives)"
)

_OP = re.compile(
    r"=\s*sdy\.(all_gather|all_slice|all_reduce|all_to_all|collective_permute)\s(.*?)%"
)
_AXIS = re.compile(r'"([^"]+)"(:\(\d+\)\d+)?')


def shardy_output(text: str) -> str:
    return H.run_shardy(text, EXPLICIT)


def shardy_collectives(explicit_text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(kind, axes) of every explicit collective in Shardy's output, in program order."""
    out = []
    for line in explicit_text.splitlines():
        m = _OP.search(line)
        if not m:
            continue
        kind = m.group(1).replace("_", "-")
        axes = tuple(n + (sub or "") for n, sub in _AXIS.findall(m.group(2)))
        out.append((kind, axes))
    return out


def _axis_key(axis: str) -> str:
    """`x`, `"x":(1)2` and `x:(1)2` spelled one way."""
    return axis.replace('"', "")


def atoms(collectives: list[tuple[str, tuple[str, ...]]]) -> Counter[tuple[str, str]]:
    """The multiset of (kind, axis) pairs of a list of (kind, axes)."""
    out: Counter[tuple[str, str]] = Counter()
    for kind, axes in collectives:
        if kind == "collective-permute":
            out[(kind, "*")] += 1
            continue
        kinds = ("all-reduce", "all-slice") if kind == "reduce-scatter" else (kind,)
        for k in kinds:
            for a in axes:
                out[(k, _axis_key(a))] += 1
    return out


def agreement(a: Counter[tuple[str, str]], b: Counter[tuple[str, str]]) -> tuple[int, int]:
    """(atoms in both, atoms in either) of two multisets."""
    both = sum((a & b).values())
    either = sum((a | b).values())
    return both, either
