"""The plan's accuracy targets at a small budget (the full measurement: bench/plan_random.py and
bench/plan_steps.py), on programs at a seed fixed here and never used to tune the plan.

Random JAX programs as JAX lowers them (the fuzzer's generator), against XLA's compiled
program: the planned bytes within max(10%, 256 B) on at least 90% of programs, the planned
memory within 20% of XLA's memory_analysis on at least 80%, `--explicit` verifying with jaxlib
on all.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from ..fuzz import programs as G
from . import plan_targets as T

SEED = 1717
COUNT = 24
BYTES_TARGET = 0.9
MEMORY_TARGET = 0.8


@functools.cache
def _measured() -> list[T.Measured]:
    out = []
    for index in range(COUNT):
        prog = G.generate(SEED, index)
        text = G.lower(prog)
        out.append(T.measure(text, int(np.prod(prog.mesh_shape[0])), explicit=index < 8))
    return out


def _misses(ok: str, planned: str, compiled: str) -> list[str]:
    return [
        f"#{i}: plan {getattr(r, planned)} B, XLA {getattr(r, compiled)} B"
        for i, r in enumerate(_measured())
        if not getattr(r, ok)
    ]


def test_random_programs_bytes() -> None:
    misses = _misses("bytes_ok", "plan_bytes", "xla_bytes")
    assert COUNT - len(misses) >= BYTES_TARGET * COUNT, "\n".join(misses)


def test_random_programs_memory() -> None:
    misses = _misses("memory_ok", "plan_memory", "xla_memory")
    assert COUNT - len(misses) >= MEMORY_TARGET * COUNT, "\n".join(misses)


@pytest.mark.parametrize("index", range(8))
def test_explicit_form_verifies(index: int) -> None:
    assert _measured()[index].explicit_valid
