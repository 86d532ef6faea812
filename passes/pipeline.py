"""The pass pipeline: passes by name, pipelines from text, and the one pipeline every entry
point builds from its options.

Each pass is a small frozen dataclass (passes/context.py: `name`, options as fields, `preserves`,
`run`); `PASSES` names them all. A pipeline is a tuple of passes, built either from text, as
MLIR's `--pass-pipeline` (`parse_pipeline("verify,propagate{strategy=basic},export")`: any pass
runs alone, with its options), or from `PipelineOptions` (`build_pipeline`: the CLI's flags and
the API's keywords are sugar over the same passes):

    options = PipelineOptions(propagation=PropagationOptions(strategy="basic"), export="annotate")
    ctx = run_pipeline(module, options, Caller(function="shardc.propagate"))
    ctx.require(PropagationReport)          # the propagate pass's report

Order: verify -> manual-region checks (local shapes, partition_id placement,
replication) -> Shardy's import steps (passes/import_steps/) -> propagate ->
sink-func-data-flow-edges -> merge-constants -> insert-call-result-reshards (with an export)
-> auto (with `PropagationOptions.auto`) -> plan -> remove-redundant-collectives -> export ->
pin (the compiled form). To add a pass: write its module and name it in `PASSES` (and in
`build_pipeline` if the options should add it). `dump_after` names passes after which the
module is printed (`--dump-after NAME`; `all` for every pass); `disable` names passes to leave
out (`--disable-pass NAME`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from lark import Lark, LarkError, Transformer, UnexpectedInput

from shardc.dialect.errors import ShardcError, bad_value, not_one_of, syntax_error, unknown_name
from shardc.dialect.ir import Module

from .auto.auto_pass import AutoOptions, AutoPass, AutoSnapshot
from .context import CLI, Caller, Pass, PassContext
from .export import ExportPass, PinPass
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
from .pin import RecordWritten
from .plan.plan import PlanOptions
from .plan.plan_pass import PlanPass
from .propagation.call_results import InsertCallResultReshards
from .propagation.driver import (
    AggressivePropagatePass,
    BasicPropagatePass,
    OpPriorityPropagatePass,
    PropagatePass,
    UserPriorityPropagatePass,
)
from .propagation.live_constraints import ApplyLiveShardingConstraints
from .propagation.options import PropagationOptions
from .verify import VerifyPass

__all__ = [
    "CLI",
    "PASSES",
    "PASS_NAMES",
    "Caller",
    "PassContext",
    "PipelineOptions",
    "build_pipeline",
    "format_timing",
    "parse_pipeline",
    "run_passes",
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

# every pass, by name, in pipeline order
PASSES: dict[str, type[Any]] = {
    cls.name: cls  # type: ignore[attr-defined]
    for cls in (
        VerifyPass,
        ManualShapesCheck,
        PartitionIdCheck,
        ReplicationCheck,
        RecordWritten,
        AutoSnapshot,
        *(type(p) for p in IMPORT_STEPS),
        PropagatePass,
        BasicPropagatePass,
        AggressivePropagatePass,
        OpPriorityPropagatePass,
        UserPriorityPropagatePass,
        SinkFuncDataFlowEdges,
        MergeConstants,
        InsertCallResultReshards,
        AutoPass,
        PlanPass,
        RemoveRedundantCollectives,
        ExportPass,
        PinPass,
    )
}
PASS_NAMES: tuple[str, ...] = tuple(PASSES)


# ---------------------------------------------------------------------------------------------
# Pipelines from text


@functools.lru_cache(maxsize=1)
def _spec_parser() -> Lark:
    path = os.path.join(os.path.dirname(__file__), "pipeline_spec.lark")
    with open(path, encoding="utf-8") as f:
        return Lark(f.read(), parser="lalr")


class _ToEntries(Transformer):  # type: ignore[type-arg]
    def start(self, items: list[Any]) -> list[tuple[str, dict[str, str]]]:
        return items

    def entry(self, items: list[Any]) -> tuple[str, dict[str, str]]:
        return str(items[0]), (items[1] if len(items) > 1 and items[1] is not None else {})

    def options(self, items: list[Any]) -> dict[str, str]:
        return dict(i for i in items if i is not None)

    def option(self, items: list[Any]) -> tuple[str, str]:
        return str(items[0]), items[1]

    def quoted(self, items: list[Any]) -> str:
        return str(items[0])[1:-1].replace('\\"', '"')

    def word(self, items: list[Any]) -> str:
        return str(items[0])


def parse_pipeline(spec: str) -> tuple[Pass, ...]:
    """The passes of a pipeline written as text, `name{option=value,...}` separated by commas
    (`verify,propagate{strategy=basic,user_priorities=false},export{mode=annotate}`); an option
    of a pass's options object (`propagate`'s `PropagationOptions`) is named directly."""
    try:
        entries = _ToEntries().transform(_spec_parser().parse(spec))
    except UnexpectedInput as e:
        raise syntax_error(
            "pass pipeline", spec, getattr(e, "column", 0) or 0,
            hint="write passes as name or name{option=value,...}, separated by commas",
        ) from None
    except LarkError:
        raise ShardcError(f"pass pipeline {spec!r} cannot be read") from None
    return tuple(make_pass(name, opts) for name, opts in entries)


def make_pass(name: str, options: dict[str, str]) -> Pass:
    """The pass `name` with `options` (texts, converted to each field's type)."""
    cls = PASSES.get(name)
    if cls is None:
        raise unknown_name("pass", name, PASS_NAMES)
    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    holders = [f for f in fields.values() if dataclasses.is_dataclass(_default(f))]
    for key, text in options.items():
        key_ = key.replace("-", "_")
        if key_ in fields and not dataclasses.is_dataclass(_default(fields[key_])):
            direct[key_] = _convert(_default(fields[key_]), text, f"{name}{{{key}}}")
            continue
        holder = next(
            (h for h in holders if key_ in {f.name for f in dataclasses.fields(_default(h))}), None
        )
        if holder is None:
            known = [*(k for k in fields if k not in {h.name for h in holders})]
            for h in holders:
                known += [f.name for f in dataclasses.fields(_default(h))]
            raise unknown_name("option", key, known, where=f"pass {name}")
        inner = {f.name: f for f in dataclasses.fields(_default(holder))}
        nested.setdefault(holder.name, {})[key_] = _convert(
            _default(inner[key_]), text, f"{name}{{{key}}}"
        )
    for holder_name, values in nested.items():
        direct[holder_name] = replace(_default(fields[holder_name]), **values)
    return cls(**direct)  # type: ignore[no-any-return]


def _default(f: dataclasses.Field) -> Any:  # type: ignore[type-arg]
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _convert(default: Any, text: str, where: str) -> Any:
    """`text` as a value of `default`'s type (a bool, int, float or string; anything else is
    given as text, for the options object to check)."""
    if isinstance(default, bool):
        if text.lower() in ("true", "1", "yes", "on"):
            return True
        if text.lower() in ("false", "0", "no", "off"):
            return False
        raise bad_value(where, text, "a boolean", hint="use true or false")
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return kind(text)
            except ValueError:
                raise bad_value(where, text, "a number", hint=f"give a {kind.__name__}") from None
    return text


# ---------------------------------------------------------------------------------------------
# The pipeline every entry point runs


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
    # the communication plan of the propagated layout (result `Plan`); propagation records origins
    plan: PlanOptions | None = None
    remove_redundant_collectives: bool = False
    # the export: None leaves the propagated IR as it is; `pin`: the export, then the compiled
    # form (the pin pass, asking the run's oracle)
    export: ExportMode | None = None
    dump_after: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()  # passes to leave out, by name

    def __post_init__(self) -> None:
        if self.export not in (None, "annotate", "pin"):
            raise not_one_of("export mode", self.export, ("annotate", "pin"))
        check_pass_names(self.dump_after, self.disable)


def check_pass_names(dump_after: Iterable[str], disable: Iterable[str]) -> None:
    """A `ShardcError` naming the flag and the name for a pass name that names no pass."""
    for flag, names, extra in (
        ("--dump-after", tuple(dump_after), ("all",)),
        ("--disable-pass", tuple(disable), ()),
    ):
        unknown = [n for n in names if n not in PASSES and n not in extra]
        if unknown:
            raise unknown_name("pass", unknown[0], (*PASS_NAMES, *extra), given=flag)


def build_pipeline(options: PipelineOptions) -> tuple[Pass, ...]:
    """The passes `options` ask for, in order."""
    passes: list[Pass] = []
    if options.export == "pin" or options.plan is not None:
        # the annotations as written, before anything changes them (what the compiled form,
        # and so the plan of it, keeps)
        passes.append(RecordWritten())
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
        auto = AutoOptions.of(propagation) if propagation.auto else None
        if auto is not None:
            passes.append(AutoSnapshot(auto))
        split = propagation.split_constants  # off: each constant is one value to propagation
        # callees shared by their call sites (func data-flow edges), or a copy per call site
        skip = {SplitCallSites.name if propagation.dedup_functions_fully else AddFuncDataFlowEdges.name}
        if not split:
            skip.add(SplitConstants.name)
        steps = [p for p in IMPORT_STEPS if p.name not in skip]
        if propagation.xla_dead_code and propagation.xla_dead_constraints:
            # (a constraint XLA deletes as dead shards no input before propagation either)
            steps = [
                ApplyLiveShardingConstraints() if isinstance(p, ApplyShardingConstraints) else p
                for p in steps
            ]
        passes += steps
        if options.plan is not None and not propagation.debug_origins:
            propagation = replace(propagation, debug_origins=True)  # the plan's causes
        passes.append(PropagatePass(propagation))
        passes.append(SinkFuncDataFlowEdges())
        if split:
            passes.append(MergeConstants())  # the output has the input's ops again
        if options.export is not None and not propagation.keep_open:
            passes.append(InsertCallResultReshards())  # (Shardy's pipeline, not its raw passes)
        if auto is not None:
            passes.append(AutoPass(auto, propagation))
    if options.plan is not None:
        passes.append(PlanPass(options.plan))
    if options.remove_redundant_collectives:
        passes.append(RemoveRedundantCollectives())
    keep_open = options.propagation.keep_open
    if options.export == "annotate":
        passes.append(ExportPass("annotate", keep_open))
    elif options.export == "pin":
        passes += [ExportPass("annotate", keep_open, dedupe=False), PinPass()]
    return tuple(p for p in passes if p.name not in options.disable)


def run_pipeline(
    module: Module,
    options: PipelineOptions,
    caller: Caller | None = None,
    dump: Callable[[str, Module], None] | None = None,
    oracle: Any = None,
    given: Sequence[object] = (),
) -> PassContext:
    """Run the pipeline of `options` on `module` (in place); returns what the passes reported
    (`PassContext`: results by type, timings). `oracle`: what XLA's own propagation derives,
    for the pin pass (passes/pin.py); `given`: results the run starts with (the annotations as
    written, `Written`, recorded before an earlier run changed them)."""
    return run_passes(module, build_pipeline(options), caller, dump, options.dump_after,
                      oracle, given)  # fmt: skip


def run_passes(
    module: Module,
    passes: Iterable[Pass],
    caller: Caller | None = None,
    dump: Callable[[str, Module], None] | None = None,
    dump_after: Iterable[str] = (),
    oracle: Any = None,
    given: Sequence[object] = (),
) -> PassContext:
    """Run `passes` on `module` (in place), as `run_pipeline` does. `dump(pass_name, module)` is
    called after each pass named in `dump_after`; each pass's wall time goes into
    `ctx.timings` (`--timing`)."""
    ctx = PassContext(caller or Caller(), oracle)
    for result in given:
        ctx.put(result)
    wanted = set(dump_after)
    clock = time.perf_counter
    for p in passes:
        start = clock()
        p.run(module, ctx)
        ctx.invalidate(p.preserves)
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
