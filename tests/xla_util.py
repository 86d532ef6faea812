"""Compile MLIR text with XLA on the virtual CPU devices (through shardc's backend) and read
back what XLA did."""

from __future__ import annotations

import re
from typing import Any

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")


def compile_text(text: str, num_partitions: int = 8) -> Any:
    """Compile StableHLO + sdy text for the first `num_partitions` CPU devices."""
    from .differential.harness import compile_mlir

    return compile_mlir(text, num_partitions)


def collective_counts(exe: Any) -> dict[str, int]:
    hlo = exe.hlo_modules()[0].to_string()
    return {c: len(re.findall(r"\s" + c + r"(-start)?\(", hlo)) for c in COLLECTIVES}
