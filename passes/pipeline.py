"""The pass pipeline: built in one place from the options; every entry point runs it.

`shardc.propagate`, `shardc.propagate_module`, `shardc.check`, `shardc.jit` (lower and export)
and `shardc propagate / opt / check / compile` each say what they want with a
`PipelineOptions` and call `run_pipeline`; none assembles passes of its own.

    options = PipelineOptions(propagation=PropagationOptions(strategy="basic"), export="annotate")
    ctx = run_pipeline(module, options, Caller(function="shardc.propagate"))
    ctx.report                  # the propagate pass's PropagationReport

Order (design.md): verify -> manual-region checks (local shapes, partition_id placement,
replication) -> Shardy's import steps (passes/import_steps/, run with propagation) -> propagate
-> sink-func-data-flow-edges -> merge-constants -> insert-call-result-reshards (with an export) (folds split-constants' copies back) -> auto (with `PropagationOptions.auto`) -> plan -> remove-redundant-collectives -> export.
A pass is a small frozen dataclass with a `name` and `run(module, ctx)` (passes/context.py);
to add one, write its module and add it to `build_pipeline`. `dump_after` names passes after which the module is printed (`--dump-after
NAME`; `all` for every pass); `disable` names passes to leave out (`--disable-pass NAME`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module

from .auto.auto_pass import AutoPass, AutoSnapshot
from .context import CLI, Caller, Pass, PassContext
from .export import ExportPass
from .import_steps.call_sites import SplitCallSites
from .import_steps.constants import MergeConstants, SplitConstants
from .import_steps.constraints import ApplyShardingConstraints
from .import_steps.data_flow_edges import (
    AbsorbDataFlowEdges,
    AddFuncDataFlowEdges,
    SinkFuncDataFlowEdges,
)
from .import_steps.manual_axes import ManualAxesCleanup
from .import_steps.meshes import DedupMeshes
from .import_steps.sharding_groups import ImportShardingGroups
from .import_steps.size_one_axes import RemoveSizeOneAxes
from .manual.partition_id import PartitionIdCheck
from .manual.redundant import RemoveRedundantCollectives
from .manual.replication import ReplicationCheck
from .manual.shapes import ManualShapesCheck
from .pin import Written, XlaOracle
from .plan.plan import PlanOptions
from .plan.plan_pass import PlanPass
from .propagation.call_results import InsertCallResultReshards
from .propagation.driver import PropagatePass
from .propagation.options import PropagationOptions
from .verify import VerifyPass

__all__ = [
    "CLI",
    "PASS_NAMES",
    "Caller",
    "PassContext",
    "PipelineOptions",
    "build_pipeline",
    "format_timing",
    "run_pipeline",
]

ExportMode = Literal["annotate", "pin"]

# Shardy's import pipeline, in its order: what propagation expects the IR to look like
IMPORT_STEPS: tuple[Pass, ...] = (
    AbsorbDataFlowEdges(),
    SplitCallSites(),
    AddFuncDataFlowEdges(),
    DedupMeshes(),
    RemoveSizeOneAxes(),
    SplitConstants(),
    ManualAxesCleanup(),
    ApplyShardingConstraints(),
    ImportShardingGroups(),
)

# every pass a pipeline may hold, in pipeline order (what --dump-after accepts)
PASS_NAMES: tuple[str, ...] = (
    VerifyPass.name,
    ManualShapesCheck.name,
    PartitionIdCheck.name,
    ReplicationCheck.name,
    AutoSnapshot.name,
    *(p.name for p in IMPORT_STEPS),
    PropagatePass.name,
    SinkFuncDataFlowEdges.name,
    MergeConstants.name,
    InsertCallResultReshards.name,
    AutoPass.name,
    PlanPass.name,
    RemoveRedundantCollectives.name,
    ExportPass.name,
)


@dataclass(frozen=True)
class PipelineOptions:
    """Which passes run, and their options."""

    verify: bool = True
    # local shapes and partition_id placement of shard_map regions (errors XLA would hit later)
    check_manual: bool = True
    # no output declared replicated along a manual axis varies along it (JAX's check_vma)
    check_replication: bool = True
    propagate: bool = True
    propagation: PropagationOptions = field(default_factory=PropagationOptions)
    # the communication plan of the propagated layout (ctx.plan); propagation records origins
    plan: PlanOptions | None = None
    remove_redundant_collectives: bool = False
    export: ExportMode | None = None  # None: leave the propagated IR as it is (no export)
    # `pin`: what XLA's own propagation derives (passes/pin.py); None pins every value
    oracle: XlaOracle | None = None
    written: Written | None = None  # `pin`: the module's annotations as written (pin.py)
    dump_after: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()  # passes to leave out, by name

    def __post_init__(self) -> None:
        if self.export not in (None, "annotate", "pin"):
            raise ShardcError(f"unknown export mode {self.export!r}", hint="use 'annotate' or 'pin'")
        for flag, names, extra in (
            ("--dump-after", self.dump_after, ("all",)),
            ("--disable-pass", self.disable, ()),
        ):
            unknown = [n for n in names if n not in PASS_NAMES and n not in extra]
            if unknown:
                raise ShardcError(
                    f"{flag} {unknown[0]}: no pass of that name",
                    hint="name one of " + ", ".join(PASS_NAMES) + "".join(f", or {e}" for e in extra),
                )


def build_pipeline(options: PipelineOptions) -> tuple[Pass, ...]:
    """The passes `options` ask for, in order."""
    passes: list[Pass] = []
    if options.verify:
        # dynamic dims: propagated around (annotate export, opt); what compiles, plans or
        # chooses layouts by cost needs static shapes
        dynamic = options.plan is None and not options.propagation.auto and options.export != "pin"
        passes.append(VerifyPass(dynamic))
    if options.check_manual:
        passes += [ManualShapesCheck(), PartitionIdCheck()]
    if options.check_replication:
        passes.append(ReplicationCheck())
    if options.propagate:
        propagation = options.propagation
        if propagation.auto:
            passes.append(AutoSnapshot(propagation))
        split = propagation.split_constants  # off: each constant is one value to propagation
        # callees shared by their call sites (func data-flow edges), or a copy per call site
        skip = {SplitCallSites.name if propagation.dedup_functions_fully else AddFuncDataFlowEdges.name}
        if not split:
            skip.add(SplitConstants.name)
        passes += [p for p in IMPORT_STEPS if p.name not in skip]
        if options.plan is not None and not propagation.debug_origins:
            propagation = replace(propagation, debug_origins=True)  # the plan's causes
        passes.append(PropagatePass(propagation))
        passes.append(SinkFuncDataFlowEdges())
        if split:
            passes.append(MergeConstants())  # the output has the input's ops again
        if options.export is not None and not propagation.keep_open:
            passes.append(InsertCallResultReshards())  # (Shardy's pipeline, not its raw passes)
        if propagation.auto:
            passes.append(AutoPass(propagation))
    if options.plan is not None:
        passes.append(PlanPass(options.plan))
    if options.remove_redundant_collectives:
        passes.append(RemoveRedundantCollectives())
    if options.export is not None:
        passes.append(
            ExportPass(
                options.export, options.propagation.keep_open, options.oracle, options.written
            )
        )
    return tuple(p for p in passes if p.name not in options.disable)


def run_pipeline(
    module: Module,
    options: PipelineOptions,
    caller: Caller | None = None,
    dump: Callable[[str, Module], None] | None = None,
) -> PassContext:
    """Run the pipeline of `options` on `module` (in place); returns what the passes reported.

    `dump(pass_name, module)` is called after each pass named in `options.dump_after`; each
    pass's wall time goes into `ctx.timings` (`--timing`)."""
    ctx = PassContext(caller or Caller())
    wanted = set(options.dump_after)
    clock = time.perf_counter
    for p in build_pipeline(options):
        start = clock()
        p.run(module, ctx)
        if p.changes_ir:
            ctx.invalidate(ops=not getattr(p, "keeps_ops", False))
        ctx.timings.append((p.name, clock() - start))
        if dump is not None and (p.name in wanted or "all" in wanted):
            dump(p.name, module)
    return ctx


def format_timing(timings: Iterable[tuple[str, float]]) -> str:
    """An execution time report of `(step, seconds)` pairs, as MLIR's `-mlir-timing` prints it
    (steps of the same name, e.g. of several `--split-input-file` chunks, added up)."""
    total_of: dict[str, float] = {}
    for name, seconds in timings:
        total_of[name] = total_of.get(name, 0.0) + seconds
    total = sum(total_of.values())
    rule = "===" + "-" * 73 + "==="
    lines = [
        rule,
        "... Execution time report ...".center(79).rstrip(),
        rule,
        f"  Total Execution Time: {total:.4f} seconds",
        "",
        "  ----Wall Time----  ----Name----",
    ]
    for name, seconds in [*total_of.items(), ("Total", total)]:
        share = 100.0 * seconds / total if total > 0 else 0.0
        lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
    return "\n".join(lines) + "\n"
