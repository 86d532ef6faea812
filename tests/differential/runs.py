"""Per-program results, computed once per process and shared by the differential tests.

`SHARDC_DIFF_STANDIN=shardy` replaces `shardc.propagate` by Shardy's own pipeline (output made
compilable); it exists only to develop the harness before shardc's propagation lands and must
not be set for real runs.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from . import harness as H
from .programs import PROGRAMS, lowered_text

STANDIN = os.environ.get("SHARDC_DIFF_STANDIN", "")

# Programs where shardc deliberately chooses another layout than Shardy, with the reason. For
# these the tests require shardc's pinned layout to move no more collective bytes than XLA's own
# run of Shardy on the same input, instead of requiring equal shardings. Empty until the
# propagation's author documents a deliberate difference.
# Programs where shardc decides differently on purpose: name -> (where the differences may be, as
# substrings of the mismatch locations, and why). The agreement test checks that they are there
# only; the bytes test checks that XLA's compiled module for shardc's layout moves no more
# collective bytes than XLA's own Shardy run.
DELIBERATE_DIFFERENCES: dict[str, tuple[tuple[str, ...], str]] = {
    "top_k": (
        ("chlo.top_k", "func @main result"),
        "the standalone pipeline has no rule for chlo.top_k, so it leaves the results replicated; "
        "XLA converts chlo.top_k to mhlo.topk before its own Shardy run and shards them along "
        "the batch dim, as shardc's rule does. Pinning shardc's layout compiles to XLA's own "
        "6144 B; pinning the standalone pipeline's would add an all-gather (6400 B)",
    ),
}


def _propagate(text: str, mode: str) -> str:
    if STANDIN == "shardy":
        return H.shardy_output_for_xla(H.run_shardy(text))
    import shardc

    return shardc.propagate(text, mode=mode)


@functools.cache
def tagged(name: str) -> str:
    return H.tag_module(lowered_text(name))


@functools.cache
def shardy_shardings(name: str) -> H.ModuleShardings:
    return H.read_shardings(H.run_shardy(tagged(name)))


@functools.cache
def shardc_annotate(name: str) -> str:
    return _propagate(tagged(name), "annotate")


@functools.cache
def shardc_pin(name: str) -> str:
    return _propagate(tagged(name), "pin")


@functools.cache
def comparison(name: str) -> H.Comparison:
    return H.compare(shardy_shardings(name), H.read_shardings(shardc_annotate(name)))


@dataclass
class Compiled:
    exe: object
    stats: H.CollectiveStats


@functools.cache
def compiled_shardc_pin(name: str) -> Compiled:
    exe = H.compile_mlir(shardc_pin(name))
    return Compiled(exe, H.collective_stats(H.hlo_text(exe)))


@functools.cache
def compiled_baseline(name: str) -> Compiled:
    """XLA on the untouched input: its internal Shardy run decides the layout (what JAX does)."""
    exe = H.compile_mlir(lowered_text(name))
    return Compiled(exe, H.collective_stats(H.hlo_text(exe)))


def program_names() -> list[str]:
    return list(PROGRAMS)
