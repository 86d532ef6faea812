"""`shardc.plan` / `shardc.diff`: the communication plan of a layout, before XLA compiles."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from shardc.api.exported import Exported, export_in_place
from shardc.api.plan_check import attach, compiled_hlo, devices_needed, tag_ops
from shardc.api.propagate import dump_to_stderr
from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.backend.xla_form import ShardyOracle, xla_layouts
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module
from shardc.passes.pin import PinReport, Written, sharding_key
from shardc.passes.pipeline import (
    Caller,
    ExportMode,
    PassContext,
    PipelineOptions,
    build_pipeline,
    run_passes,
    run_pipeline,
)
from shardc.passes.plan.check import PlanCheck
from shardc.passes.plan.diff import PlanDiff, diff_modules
from shardc.passes.plan.explicit import as_constraints, write_explicit
from shardc.passes.plan.fixes import apply
from shardc.passes.plan.plan import PlanOptions, plan_module, plan_with_rewrites
from shardc.passes.plan.plan_pass import PlanRewrites
from shardc.passes.plan.report import Collective, Memory, Plan, XlaOwn, fmt_bytes
from shardc.passes.propagation.options import PropagationOptions
from shardc.runtime import suspended_gc

__all__ = [
    "Collective",
    "Memory",
    "PipelineDebug",
    "Plan",
    "PlanCheck",
    "PlanDiff",
    "XlaOwn",
    "diff",
    "diff_lowered",
    "explicit",
    "plan",
    "plan_lowered",
    "plan_propagated",
]


def plan_propagated(
    module: Module,
    options: PropagationOptions | None = None,
    plan_options: PlanOptions | None = None,
    *,
    checks: bool = False,
    caller: Caller | None = None,
    debug: PipelineDebug | None = None,
) -> Plan:
    """Run the pipeline on `module` in place up to the plan (propagation records origins for
    the causes), propagating as the compiled form does (`as_compiled`); `checks` also runs
    verify and the shard_map shape checks first; `debug` adds the command line's
    `--dump-after`, `--disable-pass` and `--timing`."""
    pipeline = _pipeline(as_compiled(options), plan_options, checks, debug=debug)
    ctx = _run(module, pipeline, caller or _CALLER, debug)
    return ctx.require(Plan)


_CALLER = Caller(function="shardc.plan")


def as_compiled(options: PropagationOptions | None) -> PropagationOptions:
    """`options` as the compiled form propagates (`.compile()`, `--pin`): what XLA deletes
    before its own propagation decides no layout (`xla_dead_code`), so that the plan is of the
    layout that runs."""
    return replace(
        options or PropagationOptions(), xla_dead_code=True, xla_dead_constraints=True
    )


def plan_compiled_form(
    module: Module,
    options: PropagationOptions | None = None,
    plan_options: PlanOptions | None = None,
    *,
    checks: bool = False,
    written: Written | None = None,
) -> Plan:
    """The plan of the program `.compile()` builds from `module` (propagated in place, as the
    compiled form propagates it: what XLA deletes decides nothing), then the compiled form
    itself (the `pin` export: the annotations as written, or as `written`, plus pins where
    XLA's own propagation would lay a value out otherwise). Where it pins anything,
    `Plan.xla_own` is the plan of XLA's own layout of the module as written (no pin), so that
    the plan says what shardc's layout costs against the one XLA would have chosen."""
    pipeline = _pipeline(as_compiled(options), plan_options, checks, export="pin")
    oracle = ShardyOracle(keep_first=True)
    given = [written] if written is not None else []
    planned: list[tuple[Module, dict[int, int]]] = []  # the planned IR, kept before the export

    def keep(_: str, m: Module) -> None:
        planned.append((m.clone(), {id(op): k for k, op in enumerate(m.walk())}))

    ctx = run_passes(module, build_pipeline(pipeline), _CALLER, keep, ("plan",), oracle, given)
    result = ctx.require(Plan)
    result.xla_own = xla_own_plan(ctx.result(PinReport), oracle)
    if not planned:
        return result
    copy, index = planned[0]
    built = _last_module(ctx.result(PinReport), oracle)
    result = as_run(module, copy, index, result, plan_options, ctx.result(Written), built)
    copy.release()
    return result


def _last_module(report: PinReport | None, oracle: ShardyOracle) -> Any:
    """The jaxlib module the pin export's oracle was last asked about where that is the export
    as it ends (`PinReport.last_checked`), else None."""
    return oracle.last if report is not None and report.last_checked else None


def _export_pin(
    module: Module, written: Written | None, remove_redundant: bool = False
) -> tuple[Exported, ShardyOracle, dict[int, int]]:
    """The `pin` export of a copy of the propagated `module` (as `export_copy`), its oracle
    (the first layout kept, for `xla_own_plan`), and the walk index in `module` of each op of
    the export that was in the copy (`as_run`'s `index`)."""
    oracle = ShardyOracle(keep_first=True)
    copy = module.clone()
    index = {id(op): k for k, op in enumerate(copy.walk())}
    exported = export_in_place(copy, "pin", remove_redundant, oracle=oracle, written=written)
    return exported, oracle, index


def as_run(
    compiled: Module,
    planned_ir: Module,
    index: dict[int, int],
    planned: Plan,
    plan_options: PlanOptions | None = None,
    written: Written | None = None,
    built: Any = None,
) -> Plan:
    """`planned` (the plan of shardc's layout `planned_ir`), or where XLA's own Shardy lays
    values of the compiled form `compiled` out otherwise without a pin (`xla_layouts`: on
    XLA's form of the module it may resolve a conflict the other way; pinning shardc's layout
    there moved more than jax.jit on the LLaMA and LoRA steps), the plan of the layout that
    runs: `planned_ir` with those values laid out as XLA lays them out (in place). `index`
    maps the `id` of each op of `compiled` that was in the IR the export started from (it
    works in place) to its walk index there, which is `planned_ir`'s walk order. The plan of
    that layout has no causes (propagation did not choose it). `built`: the jaxlib module of
    `compiled` where the caller has it (`_last_module`)."""
    ops = list(planned_ir.walk())
    meshes = dict(planned_ir.meshes)
    changed = 0
    for op, i, s in xla_layouts(compiled, built):
        k = index.get(id(op))
        if k is None:
            continue
        r = ops[k].results[i]
        if sharding_key(r.sharding, meshes) != sharding_key(s, meshes):
            r.sharding = s
            changed += 1
    if not changed:
        return planned
    ran, _ = plan_with_rewrites(planned_ir, None, plan_options or PlanOptions(), written)
    ran.ruleless, ran.auto, ran.xla_own = planned.ruleless, planned.auto, planned.xla_own
    return ran


def xla_own_plan(report: PinReport | None, oracle: ShardyOracle) -> XlaOwn | None:
    """What XLA's own layout (the `pin` export's first oracle answer, kept by `oracle`) would
    move and need, planned as shardc's is; None where the export pinned nothing (the compiled
    program is then partitioned from XLA's own layout, which is shardc's)."""
    if report is None or report.agrees:
        return None
    text = oracle.first_layout_text()
    if text is None:
        return None
    own = plan_module(_import(text, "<XLA's own layout>"), None, PlanOptions(fixes=False))
    return XlaOwn(report.differed_at_first + len(report.forced), own.total_bytes, own.memory)


@dataclass(frozen=True)
class PipelineDebug:
    """The command line's pipeline debugging flags: `--dump-after` pass names (the module goes
    to stderr after each), `--disable-pass` names, and a list that gets `(step, seconds)` for
    parse, every pass and print (`--timing`) when given."""

    dump_after: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    timings: list[tuple[str, float]] | None = None


def _pipeline(
    options: PropagationOptions | None,
    plan_options: PlanOptions | None,
    checks: bool,
    export: ExportMode | None = None,
    debug: PipelineDebug | None = None,
) -> PipelineOptions:
    debug = debug or PipelineDebug()
    return PipelineOptions(
        verify=checks,
        check_manual=checks,
        check_replication=False,  # a cost question, not a correctness one: propagate checks it
        propagation=options or PropagationOptions(),
        plan=plan_options or PlanOptions(),
        export=export,
        dump_after=debug.dump_after,
        disable=debug.disable,
    )


def _run(
    module: Module, pipeline: PipelineOptions, caller: Caller, debug: PipelineDebug | None
) -> PassContext:
    """run_pipeline with the `--dump-after` printer and the pass times of `debug`."""
    ctx = run_pipeline(module, pipeline, caller, dump_to_stderr if pipeline.dump_after else None)
    if debug is not None and debug.timings is not None:
        debug.timings.extend(ctx.timings)
    return ctx


def _import(text: str, source_name: str, debug: PipelineDebug | None = None) -> Module:
    start = time.perf_counter()
    module = import_text(text, source_name)
    if debug is not None and debug.timings is not None:
        debug.timings.append(("parse", time.perf_counter() - start))
    return module


def plan(
    text: str,
    *,
    options: PropagationOptions | None = None,
    source_name: str = "<input>",
    verify: bool = True,
    plan_options: PlanOptions | None = None,
    debug: PipelineDebug | None = None,
    check: bool = False,
    xla_own: bool = False,
) -> Plan:
    """The collectives the propagated layout of an MLIR module implies, each with its kind, mesh
    axes, bytes per device, value, op, location, cause and fix, and the per-device memory.

    The input may be unpropagated (it is propagated first, as `shardc.propagate` does) or a
    propagated module (propagation keeps its shardings). `Plan.to_json()` has a fixed schema.
    `check`: also compile the layout with XLA (`shardc.propagate(..., mode="pin")`, on virtual
    CPU devices in a subprocess when this process lacks the mesh's) and match the compiled
    collectives to the planned ones (`Plan.check`, a `PlanCheck`). `xla_own` (implied by
    `check`): also run XLA's own propagation (jaxlib's Shardy) on the module as written and,
    where shardc lays values out otherwise (the compiled form pins them), plan that layout too
    (`Plan.xla_own`: what XLA's own layout would move against shardc's).
    """
    if check:
        return check_module(_import(text, source_name, debug), options, plan_options, source_name)
    with suspended_gc():
        module = _import(text, source_name, debug)
        if xla_own:
            result = plan_compiled_form(module, options, plan_options, checks=verify)
        else:
            result = plan_propagated(module, options, plan_options, checks=verify, debug=debug)
    if (plan_options or PlanOptions()).fixes:
        evaluate_fixes(result, lambda: _import(text, source_name), options, plan_options)
    return result


# the collectives (the costliest first) whose fix candidates are re-planned, and how many
# candidates each: every one is a propagation and a plan of the whole program
FIX_BUDGET = 8
CANDIDATES_PER_COLLECTIVE = 3


def evaluate_fixes(
    result: Plan,
    fresh: Callable[[], Module],
    options: PropagationOptions | None,
    plan_options: PlanOptions | None = None,
) -> None:
    """Offer a fix on a planned collective only where an annotation change, applied to a fresh
    copy of the program (`fresh()`) and propagated and planned again, lowers the total: the
    change and by how much. The `FIX_BUDGET` costliest collectives with candidates are tried."""
    base = result.total_bytes
    quiet = replace(plan_options or PlanOptions(), fixes=False)
    totals: dict[object, int | None] = {}
    order = sorted(
        (i for i, c in enumerate(result.collectives) if c.candidates and c.bytes > 0),
        key=lambda i: -result.collectives[i].bytes,
    )
    for i in order[:FIX_BUDGET]:
        c = result.collectives[i]
        best: tuple[int, str] | None = None
        for cand in c.candidates[:CANDIDATES_PER_COLLECTIVE]:
            key = (cand.locator, cand.sharding.dims)
            if key not in totals:
                module = fresh()
                try:
                    ok = apply(module, cand)
                    totals[key] = (
                        plan_propagated(module, options, quiet).total_bytes if ok else None
                    )
                except ShardcError:
                    totals[key] = None  # the change makes an invalid program
            total = totals[key]
            if total is not None and total < base and (best is None or total < best[0]):
                best = (total, cand.text)
        if best is not None:
            total, text = best
            result.collectives[i] = replace(
                c,
                fix=f"{text}: the program then moves {fmt_bytes(total)} instead of "
                f"{fmt_bytes(base)} ({fmt_bytes(base - total)} less)",
            )


def diff(
    a: str,
    b: str,
    *,
    options: PropagationOptions | None = None,
    verify: bool = True,
) -> PlanDiff:
    """What changes from layout A to layout B of the same program: values whose sharding
    differs, collectives added and removed, and B's planned total minus A's."""
    with suspended_gc():
        ma = _import(a, "A")
        mb = _import(b, "B")
        caller = Caller(function="shardc.diff")
        pa = plan_propagated(ma, options, checks=verify, caller=caller)
        pb = plan_propagated(mb, options, checks=verify, caller=caller)
        return diff_modules(ma, pa, mb, pb)


def check_module(
    module: Module,
    options: PropagationOptions | None = None,
    plan_options: PlanOptions | None = None,
    source_name: str = "<input>",
) -> Plan:
    """Plan the program `.compile()` builds from `module` (propagated or not; its ops are
    tagged; `plan_compiled_form`), compile it with XLA and match the two (`Plan.check`; see
    `shardc.api.plan_check`)."""
    with suspended_gc():
        origins = tag_ops(module)
        text = export_text(module, "generic", with_locs=True)
        devices = devices_needed(module)
        compiled = _import(text, source_name)
        planned = plan_compiled_form(compiled, options, plan_options, checks=True)
        pinned = export_text(compiled, "generic", with_locs=True)
    if (plan_options or PlanOptions()).fixes:
        evaluate_fixes(planned, lambda: _import(text, source_name), options, plan_options)
    attach(planned, compiled_hlo(pinned, devices), module, origins)
    return planned


@suspended_gc()
def _lowered_module(lowered: Any, xla_own: bool = False) -> tuple[Module, Plan]:
    """A fresh propagation of a `Lowered`'s traced module (origins recorded), and its plan;
    `xla_own`: of the compiled form, with `Plan.xla_own` (see `plan_compiled_form`)."""
    source = getattr(lowered, "plan_source", None)
    auto = getattr(getattr(lowered, "report", None), "auto", None)
    written = getattr(lowered, "written", None)
    if source is None or auto is not None:
        # plan the propagated IR as it is: no traced module kept, or automatic sharding chose
        # the layout (re-running it could choose another: shardc.jit fits it to XLA's memory)
        module = lowered.ir.clone()
        plan = plan_module(module, None)
        if auto is not None:
            plan.auto = auto.lines()
        if xla_own:
            exported, oracle, index = _export_pin(module, written)
            plan.xla_own = xla_own_plan(exported.pin_report, oracle)
            built = _last_module(exported.pin_report, oracle)
            plan = as_run(exported.module, module, index, plan, written=written, built=built)
            exported.module.release()
        return module, plan
    build, options = source
    with suspended_gc():
        module = build()
        if xla_own:
            result = plan_compiled_form(module, options, written=written)
        else:
            result = plan_propagated(module, options)
    evaluate_fixes(result, build, options)
    return module, result


def plan_lowered(lowered: Any, check: bool = False) -> Plan:
    """`Lowered.plan()`: the plan of the program `.compile()` builds from a
    `shardc.jit(...).lower(...)` result, with what XLA's own layout would cost where shardc's
    differs (`Plan.xla_own`); `check` also compiles that program with XLA and matches the
    collectives (`Plan.check`)."""
    if not check:
        return _lowered_module(lowered, xla_own=True)[1]
    source = getattr(lowered, "plan_source", None)
    auto = getattr(getattr(lowered, "report", None), "auto", None)
    if source is None or auto is not None:
        return _check_as_is(lowered, auto)
    build, options = source
    with suspended_gc():
        module = build()
    return check_module(module, options)


def _check_as_is(lowered: Any, auto: Any) -> Plan:
    """`plan_lowered(check=True)` of the propagated IR as it is (no traced module kept, or
    automatic sharding chose the layout; see `_lowered_module`): its plan, and XLA's compile of
    the export `.compile()` hands XLA (the same `pin` export of the same IR from the same
    annotations as written), its ops tagged, matched to the plan."""
    with suspended_gc():
        module = lowered.ir.clone()
        origins = tag_ops(module)
        planned = plan_module(module, None)
        if auto is not None:
            planned.auto = auto.lines()
        written = getattr(lowered, "written", None)
        exported, oracle, index = _export_pin(
            module, written, bool(getattr(lowered.jitted, "remove_redundant_collectives", False))
        )
        planned.xla_own = xla_own_plan(exported.pin_report, oracle)
        text = export_text(exported.module, "generic", with_locs=True)
        built = _last_module(exported.pin_report, oracle)
        planned = as_run(exported.module, module, index, planned, written=written, built=built)
        exported.module.release()
    attach(planned, compiled_hlo(text, devices_needed(module)), module, origins)
    return planned


def diff_lowered(a: Any, b: Any) -> PlanDiff:
    """`Lowered.diff(other)`: what changes from layout `a` to layout `b`."""
    ma, pa = _lowered_module(a)
    mb, pb = _lowered_module(b)
    return diff_modules(ma, pa, mb, pb)


def explicit(
    text: str,
    *,
    options: PropagationOptions | None = None,
    format: str = "pretty",
    source_name: str = "<input>",
    verify: bool = True,
    constraints: bool = False,
    debug: PipelineDebug | None = None,
) -> str:
    """Propagate, then write the plan into the module as explicit `sdy` collectives, as Shardy's
    explicit pipeline does (`shardc propagate --explicit`). The plan is Shardy's model of it
    (`PlanOptions(model="shardy")`). With `constraints`, each collective is written as an
    `sdy.sharding_constraint` to its out_sharding instead: the form XLA compiles."""
    with suspended_gc():
        module = _import(text, source_name, debug)
        plan_options = PlanOptions(model="shardy", fixes=False)
        pipeline = _pipeline(options, plan_options, verify, "annotate", debug)
        ctx = _run(module, pipeline, Caller(function="shardc.api.plan.explicit"), debug)
        write_explicit(module, ctx.require(PlanRewrites).rewrites)
        if constraints:
            as_constraints(module)
        start = time.perf_counter()
        out = export_text(module, "generic" if format == "generic" else "pretty")
        if debug is not None and debug.timings is not None:
            debug.timings.append(("print", time.perf_counter() - start))
        return out
