"""`shardc.plan` / `shardc.diff`: the communication plan of a layout, before XLA compiles."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from shardc.api.exported import Exported, export_in_place
from shardc.api.plan_check import attach, compiled_hlo, devices_needed, tag_ops
from shardc.api.propagate import dump_to_stderr
from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.backend.xla_form import ShardyOracle, xla_layouts
from shardc.dialect.data_flow import CALL
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module
from shardc.dialect.shardings import TensorSharding
from shardc.passes.pin import PinReport, Written, sharding_key
from shardc.passes.pipeline import (
    Caller,
    ExportMode,
    Pass,
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
from shardc.passes.plan.plan_pass import PlanPass, PlanRewrites
from shardc.passes.plan.report import Collective, Memory, Plan, XlaOwn, fmt_bytes
from shardc.passes.propagation.options import PropagationOptions
from shardc.passes.propagation.report import PropagationReport
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
    compiled form propagates it: what XLA deletes decides nothing): shardc's layout, but
    where XLA's own Shardy, on the compiled form (the `pin` export: the annotations as
    written, or as `written`, plus pins where XLA's own propagation of the module as written
    would lay a value out otherwise) through HLO, still lays a value out otherwise, XLA's
    layout (`as_run`). Where the export pins anything, `Plan.xla_own` is the plan of XLA's own
    layout of the module as written (no pin), so that the plan says what shardc's layout costs
    against the one XLA would have chosen."""
    result, export, _ = compiled_form(module, options, plan_options, checks=checks, written=written)
    export.release()
    return result


@dataclass(frozen=True)
class Adopted:
    """XLA's own layouts the plan of the program that runs took in place of the propagated
    ones (`adopt_xla_layouts`): `(walk index, result index, XLA's layout, the propagated
    layout)` each, and the op names of the planned IR in walk order (a re-propagation of the
    same program with a fix applied is compared with it op by op: `evaluate_fixes`)."""

    ops: tuple[str, ...]
    layouts: tuple[tuple[int, int, TensorSharding, TensorSharding | None], ...]


def compiled_form(
    module: Module,
    options: PropagationOptions | None = None,
    plan_options: PlanOptions | None = None,
    *,
    checks: bool = False,
    written: Written | None = None,
    debug: PipelineDebug | None = None,
) -> tuple[Plan, Module, Adopted]:
    """`plan_compiled_form`'s plan, the compiled form itself (a `pin` export of a copy of the
    propagated `module`, which stays the planned IR with XLA's layouts adopted, so that the
    causes keep propagation's origins), and the layouts adopted. `debug` as `plan_propagated`
    takes it."""
    pipeline = _pipeline(as_compiled(options), plan_options, checks, export="pin", debug=debug)
    passes = build_pipeline(pipeline)
    cut = next((k + 1 for k, p in enumerate(passes) if p.name == PlanPass.name), len(passes))
    given = [written] if written is not None else []
    dump = dump_to_stderr if pipeline.dump_after else None
    ctx = run_passes(module, passes[:cut], _CALLER, dump, pipeline.dump_after, given=given)
    if debug is not None and debug.timings is not None:
        debug.timings.extend(ctx.timings)
    result = ctx.require(Plan)
    written = ctx.result(Written)
    oracle = ShardyOracle(keep_first=True)
    timings = debug.timings if debug is not None else None
    export, index, pins = _export_tail(
        module, passes[cut:], oracle, written, dump, pipeline.dump_after, timings
    )
    start = time.perf_counter()
    result.xla_own = xla_own_plan(pins, oracle)
    adopted = adopt_xla_layouts(export, module, index, _last_module(pins, oracle))
    report = ctx.result(PropagationReport)
    origins = report.origins if report is not None else None
    result = plan_as_run(module, result, adopted, plan_options, written, origins)
    if timings is not None:
        timings.append(("plan-as-run", time.perf_counter() - start))
    return result, export, adopted


def _export_tail(
    module: Module,
    tail: Sequence[Pass],
    oracle: ShardyOracle,
    written: Written | None,
    dump: Callable[[str, Module], None] | None = None,
    dump_after: tuple[str, ...] = (),
    timings: list[tuple[str, float]] | None = None,
) -> tuple[Module, dict[int, int], PinReport | None]:
    """The compiled form of the propagated `module`: the pipeline's passes after the plan
    (`tail`: the `pin` export) run on a copy; the walk index in `module` of each op of the
    copy (the export works in place), and the export's `PinReport`. `dump` / `dump_after` as
    `run_passes` takes them; `timings` gets each pass's time."""
    copy = module.clone()
    index = {id(op): k for k, op in enumerate(copy.walk())}
    given = [written] if written is not None else []
    ctx = run_passes(copy, tail, _CALLER, dump, dump_after, oracle=oracle, given=given)
    if timings is not None:
        timings.extend(ctx.timings)
    return copy, index, ctx.result(PinReport)


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


def adopt_xla_layouts(
    compiled: Module, planned_ir: Module, index: dict[int, int], built: Any = None
) -> Adopted:
    """Give the values of `planned_ir` (shardc's propagated layout, in place) the layout XLA's
    own Shardy gives them in the compiled form `compiled` where it differs (`xla_layouts`: on
    XLA's form of the module it may resolve a conflict the other way; pinning shardc's layout
    there moved more than jax.jit on the LLaMA and LoRA steps). `index` maps the `id` of each
    op of `compiled` that was in the IR the export started from to its walk index there,
    which is `planned_ir`'s walk order. `built`: the jaxlib module of `compiled` where the
    caller has it (`_last_module`). A call's results are left as propagated: XLA inlines
    calls before its Shardy runs, while the oracle's module keeps them (a call result there
    takes its callee's result sharding, which XLA's inlined program need not)."""
    ops = list(planned_ir.walk())
    meshes = dict(planned_ir.meshes)
    out = []
    for op, i, s in xla_layouts(compiled, built):
        k = index.get(id(op))
        if k is None or op.name == CALL:
            continue
        r = ops[k].results[i]
        if sharding_key(r.sharding, meshes) != sharding_key(s, meshes):
            out.append((k, i, s, r.sharding))
            r.sharding = s
    return Adopted(tuple(op.name for op in ops), tuple(out))


def plan_as_run(
    planned_ir: Module,
    planned: Plan,
    adopted: Adopted,
    plan_options: PlanOptions | None = None,
    written: Written | None = None,
    origins: object = None,
) -> Plan:
    """`planned` (the plan of shardc's layout) where `adopted` is empty, else the plan of
    `planned_ir` with XLA's layouts adopted (`adopt_xla_layouts`): the layout that runs. Its
    causes read propagation's `origins` where the layout is shardc's, and say where it is
    XLA's (`Causes`)."""
    if not adopted.layouts:
        return planned
    ops = list(planned_ir.walk())
    relaid = {id(ops[k].results[i]): propagated for k, i, _, propagated in adopted.layouts}
    ran, _ = plan_with_rewrites(
        planned_ir, origins, plan_options or PlanOptions(), written, relaid
    )
    ran.ruleless, ran.auto, ran.xla_own = planned.ruleless, planned.auto, planned.xla_own
    return ran


def as_run(
    compiled: Module,
    planned_ir: Module,
    index: dict[int, int],
    planned: Plan,
    plan_options: PlanOptions | None = None,
    written: Written | None = None,
    built: Any = None,
) -> Plan:
    """The plan of the layout that runs from the plan `planned` of shardc's layout
    `planned_ir` (no origins: causes without provenance) and its compiled form `compiled`
    (`adopt_xla_layouts`, `plan_as_run`)."""
    adopted = adopt_xla_layouts(compiled, planned_ir, index, built)
    return plan_as_run(planned_ir, planned, adopted, plan_options, written)


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
    as_propagated: bool = False,
) -> Plan:
    """The collectives of the program that runs from an MLIR module (the one `.compile()` and
    `shardc propagate --pin` hand XLA), each with its kind, mesh axes, bytes per device, value,
    op, location, cause and fix, and the per-device memory.

    The input may be unpropagated (it is propagated first, as `shardc.propagate` does) or a
    propagated module (propagation keeps its shardings). The layout planned is shardc's, but
    where XLA's own Shardy, run on the compiled form as XLA's import makes it, lays a value out
    otherwise (the compiled form leaves it to XLA), XLA's (`compiled_form`); `Plan.xla_own` is
    what XLA's own layout of the module as written would move, where the compiled form pins
    anything. `Plan.to_json()` has a fixed schema. `check`: also compile that program with XLA
    (on virtual CPU devices in a subprocess when this process lacks the mesh's) and match the
    compiled collectives to the planned ones (`Plan.check`, a `PlanCheck`). `as_propagated`:
    plan shardc's propagated layout as it is instead, with no XLA propagation asked (what
    shardc's layout implies, where the program that runs may differ); so is a plan in Shardy's
    model (`PlanOptions(model="shardy")`: what Shardy's explicit pipeline writes of the layout).
    """
    if check:
        return check_module(_import(text, source_name, debug), options, plan_options, source_name)
    adopted: Adopted | None = None
    with suspended_gc():
        module = _import(text, source_name, debug)
        shardy = (plan_options or PlanOptions()).model == "shardy"  # (Shardy's model: its layout)
        if as_propagated or shardy or not partitioned(module):
            result = plan_propagated(module, options, plan_options, checks=verify, debug=debug)
        else:
            result, export, adopted = compiled_form(
                module, options, plan_options, checks=verify, debug=debug
            )
            export.release()
    if (plan_options or PlanOptions()).fixes:
        fresh = lambda: _import(text, source_name)  # noqa: E731
        evaluate_fixes(result, fresh, options, plan_options, adopted)
    return result


def partitioned(module: Module) -> bool:
    """Whether `module` has a mesh with axes (else nothing is partitioned: no XLA layout to
    ask about, the plan is empty whichever layout it plans)."""
    return any(mesh.axes for mesh in module.meshes.values())


# the collectives (the costliest first) whose fix candidates are re-planned, and how many
# candidates each: every one is a propagation and a plan of the whole program
FIX_BUDGET = 8
CANDIDATES_PER_COLLECTIVE = 3


def evaluate_fixes(
    result: Plan,
    fresh: Callable[[], Module],
    options: PropagationOptions | None,
    plan_options: PlanOptions | None = None,
    adopted: Adopted | None = None,
) -> None:
    """Offer a fix on a planned collective only where an annotation change, applied to a fresh
    copy of the program (`fresh()`) and planned again, lowers the total: the change and by how
    much. The `FIX_BUDGET` costliest collectives with candidates are tried. `adopted`: the
    plan is of the program that runs (`compiled_form`, which adopted these XLA layouts) and so
    is each re-plan (`_run_total`); None: of the propagated layout (`plan_propagated`)."""
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
                    if not apply(module, cand):
                        totals[key] = None
                    elif adopted is None:
                        totals[key] = plan_propagated(module, options, quiet).total_bytes
                    else:
                        totals[key] = _run_total(module, options, quiet, adopted)
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


def _run_total(
    module: Module, options: PropagationOptions | None, quiet: PlanOptions, adopted: Adopted
) -> int:
    """The planned total of the program that runs from `module` (the planned program with a
    fix applied), propagated as the compiled form propagates. Where the fix leaves every value
    XLA laid out otherwise (`adopted`) as propagation laid it out before, XLA is taken to lay
    those out as before and the rest as shardc does (no XLA propagation asked); where it
    changes one of them (or the program's ops), XLA's Shardy is asked again about the fixed
    program's compiled form (`compiled_form`'s round trip)."""
    pipeline = _pipeline(as_compiled(options), quiet, False, export="pin")
    passes = build_pipeline(pipeline)
    at = next((k for k, p in enumerate(passes) if p.name == PlanPass.name), len(passes))
    ctx = run_passes(module, passes[:at], _CALLER)  # propagated, not yet planned
    written = ctx.result(Written)
    ops = list(module.walk())
    meshes = dict(module.meshes)
    kept = tuple(op.name for op in ops) == adopted.ops or not adopted.layouts
    if kept:
        for k, i, _, propagated in adopted.layouts:
            r = ops[k].results[i] if i < len(ops[k].results) else None
            if r is None or sharding_key(r.sharding, meshes) != sharding_key(propagated, meshes):
                kept = False
                break
    if kept:
        for k, i, xla, _ in adopted.layouts:
            ops[k].results[i].sharding = xla
    else:
        oracle = ShardyOracle()
        export, index, pins = _export_tail(module, passes[at + 1 :], oracle, written)
        adopt_xla_layouts(export, module, index, _last_module(pins, oracle))
        export.release()
    return plan_with_rewrites(module, None, quiet, written)[0].total_bytes


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
    tagged; `compiled_form`), compile that program with XLA and match the two (`Plan.check`;
    see `shardc.api.plan_check`)."""
    with suspended_gc():
        origins = tag_ops(module)
        text = export_text(module, "generic", with_locs=True)
        devices = devices_needed(module)
        compiled = _import(text, source_name)
        planned, export, adopted = compiled_form(compiled, options, plan_options, checks=True)
        pinned = export_text(export, "generic", with_locs=True)
        export.release()
    if (plan_options or PlanOptions()).fixes:
        fresh = lambda: _import(text, source_name)  # noqa: E731
        evaluate_fixes(planned, fresh, options, plan_options, adopted)
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
    adopted: Adopted | None = None
    with suspended_gc():
        module = build()
        if xla_own:
            result, export, adopted = compiled_form(module, options, written=written)
            export.release()
        else:
            result = plan_propagated(module, options)
    evaluate_fixes(result, build, options, adopted=adopted)
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
