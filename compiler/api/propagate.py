"""`shardc.propagate` / `shardc.propagate_module`: Shardy's propagation on a text module or IR.

Both run the one pipeline (passes/pipeline.py); `shardc propagate` on the command line calls
`propagate_text` with `caller=CLI`, so fix texts name its flags instead of these keywords.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import Literal

from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.backend.xla_form import ShardyOracle
from shardc.dialect.errors import not_one_of
from shardc.dialect.ir import Module
from shardc.passes.pipeline import Caller, PassContext, PipelineOptions, run_pipeline
from shardc.passes.propagation.driver import PropagationReport
from shardc.passes.propagation.options import PropagationOptions
from shardc.runtime import release_free_heap, suspended_gc

__all__ = [
    "PropagationOptions",
    "PropagationReport",
    "dump_to_stderr",
    "propagate",
    "propagate_module",
    "propagate_text",
]


def dump_to_stderr(name: str, module: Module) -> None:
    """`--dump-after NAME`: the module after pass NAME on stderr, as MLIR's IR dumps look."""
    sys.stderr.write(f"// -----// IR Dump After {name} //----- //\n")
    sys.stderr.write(export_text(module, "pretty"))
    sys.stderr.flush()


@suspended_gc()
def propagate_module(
    module: Module, options: PropagationOptions | None = None
) -> PropagationReport:
    """Propagate shardings through `module` in place (no verify, no export) and report.

    The module is left as Shardy's propagation leaves it: open dims still open, constraints and
    manual computations updated. The report names every op without a sharding rule (`notes()`),
    the rounds run and, with `debug_origins`, one `explanation` line per dim propagation decided
    (its axes, the annotation they trace back to, the round, the op that wrote them); with
    `dump_rounds`, every sharding after every round (`round_dumps`). With `auto`, the
    auto-sharding pass then decides the dims nothing decided (`report.auto` says how).
    """
    pipeline = PipelineOptions(
        verify=False,
        check_manual=False,
        check_replication=False,
        propagation=options or PropagationOptions(),
    )
    ctx = run_pipeline(module, pipeline, Caller(function="shardc.propagate_module"))
    return ctx.require(PropagationReport)


def propagate(
    text: str,
    *,
    options: PropagationOptions | None = None,
    mode: str = "annotate",
    format: str = "pretty",
    source_name: str = "<input>",
    check_replication: bool = True,
) -> str:
    """Import, verify, check, propagate and export an MLIR module; returns the exported text.

    `mode="annotate"` writes the shardings Shardy would choose on every value; `mode="pin"`
    writes what XLA compiles: also a closed `sdy.sharding_constraint` ("pin") after each value
    whose layout XLA's own propagation (jaxlib's Shardy, run on the export) would choose
    otherwise, so that XLA partitions exactly shardc's layout.
    `check_replication=False` skips the check that no shard_map output declared replicated
    along a manual axis varies along it (JAX's `check_vma=False`).
    """
    out, _ = propagate_text(
        text,
        options=options,
        mode=mode,
        format=format,
        source_name=source_name,
        check_replication=check_replication,
    )
    return out


def propagate_text(
    text: str,
    *,
    options: PropagationOptions | None = None,
    mode: str = "annotate",
    format: str = "pretty",
    source_name: str = "<input>",
    verify: bool = True,
    check_replication: bool = True,
    with_locs: bool = False,
    dump_after: tuple[str, ...] = (),
    disable: tuple[str, ...] = (),
    caller: Caller | None = None,
    timings: list[tuple[str, float]] | None = None,
) -> tuple[str, PropagationReport]:
    """`propagate`, also returning the report (the CLI prints its notes and explanations).

    `timings`, when given, gets the wall time of each step appended: `parse` (text to IR),
    every pass of the pipeline, `print` (IR to text)."""
    options = options or PropagationOptions()
    if mode == "pin" and not (options.xla_dead_code and options.xla_dead_constraints):
        # the layout XLA compiles: what XLA deletes before it propagates (unused constraints
        # too) decides nothing
        options = replace(options, xla_dead_code=True, xla_dead_constraints=True)
    pipeline = PipelineOptions(
        verify=verify,
        check_replication=check_replication,
        propagation=options,
        export=_mode(mode),
        dump_after=dump_after,
        disable=disable,
    )
    clock = time.perf_counter
    with suspended_gc():
        start = clock()
        module = import_text(text, source_name)
        parsed = clock()
        ctx = run_pipeline(
            module,
            pipeline,
            caller or Caller(function="shardc.propagate"),
            dump_to_stderr if dump_after else None,
            oracle=ShardyOracle() if mode == "pin" else None,
        )
        fmt = "generic" if format == "generic" else "pretty"
        # propagation's units and rounds are freed by now: their C heap pages go back before
        # the text is printed (at 1000 distinct layers about 24 MiB of the peak). Not in the
        # pass: trimming a process's whole heap takes ~30 ms where jax is loaded, and
        # shardc.jit's lowering has no text to print
        release_free_heap()
        ran = clock()
        # the module is emptied once printed (before the text is joined, where the printer
        # can): freed now by reference counting, not later by a full GC pass
        out = export_text(module, fmt, with_locs=with_locs, release=True)
        if timings is not None:
            timings += [("parse", parsed - start), *ctx.timings, ("print", clock() - ran)]
        module.release()  # (a second release of an emptied module does nothing)
        return out, _report(ctx)


def _mode(mode: str) -> Literal["annotate", "pin"]:
    if mode not in ("annotate", "pin"):
        raise not_one_of("export mode", mode, ("annotate", "pin"))
    return mode  # type: ignore[return-value]


def _report(ctx: PassContext) -> PropagationReport:
    return ctx.require(PropagationReport)
