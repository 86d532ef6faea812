"""Collective bytes of XLA's partitioned HLO, by the plan's measure (`shardc.backend.hlo_collectives`:
per collective the larger of its operand and result local bytes, times the known trip count of
every enclosing while loop and the calls of its computation). One measure, shared by the plan's
`--check`, its tests and its benchmarks."""

from __future__ import annotations

from shardc.backend.hlo_collectives import CompiledCollective, read_collectives
from shardc.backend.hlo_collectives import total_bytes as total_bytes


def collectives(hlo: str) -> list[tuple[CompiledCollective, int]]:
    """Every collective with how many times it runs per execution of the entry."""
    return [(c, c.runs) for c in read_collectives(hlo)]


def per_kind(hlo: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in read_collectives(hlo):
        out[c.kind] = out.get(c.kind, 0) + c.total_bytes
    return out
