"""`shardc.plan` / `shardc.diff`: the communication plan of a layout, before XLA compiles."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from shardc.api_propagate import dump_to_stderr
from shardc.dialect.ir import Module
from shardc.passes.pipeline import (
    Caller,
    ExportMode,
    PassContext,
    PipelineOptions,
    run_pipeline,
)
from shardc.passes.plan.diff import PlanDiff, diff_modules
from shardc.passes.plan.plan import PlanOptions, plan_module
from shardc.passes.plan.report import Collective, Memory, Plan
from shardc.passes.propagation.options import PropagationOptions
from shardc.runtime import suspended_gc

__all__ = [
    "Collective",
    "Memory",
    "PipelineDebug",
    "Plan",
    "PlanDiff",
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
    the causes); `checks` also runs verify and the shard_map shape checks first; `debug` adds
    the command line's `--dump-after`, `--disable-pass` and `--timing`."""
    pipeline = _pipeline(options, plan_options, checks, debug=debug)
    ctx = _run(module, pipeline, caller or _CALLER, debug)
    assert ctx.plan is not None
    return ctx.plan


_CALLER = Caller(function="shardc.plan")


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
    from shardc.importer import import_text

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
) -> Plan:
    """The collectives the propagated layout of an MLIR module implies, each with its kind, mesh
    axes, bytes per device, value, op, location, cause and fix, and the per-device memory.

    The input may be unpropagated (it is propagated first, as `shardc.propagate` does) or a
    propagated module (propagation keeps its shardings). `Plan.to_json()` is the issue's schema.
    """
    with suspended_gc():
        module = _import(text, source_name, debug)
        return plan_propagated(module, options, plan_options, checks=verify, debug=debug)


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


@suspended_gc()
def _lowered_module(lowered: Any) -> tuple[Module, Plan]:
    """A fresh propagation of a `Lowered`'s traced module (origins recorded), and its plan."""
    source = getattr(lowered, "plan_source", None)
    auto = getattr(getattr(lowered, "report", None), "auto", None)
    if source is None or auto is not None:
        # plan the propagated IR as it is: no traced module kept, or automatic sharding chose
        # the layout (re-running it could choose another: shardc.jit fits it to XLA's memory)
        module = lowered.ir.clone()
        plan = plan_module(module, None)
        if auto is not None:
            plan.auto = auto.lines()
        return module, plan
    build, options = source
    with suspended_gc():
        module = build()
        return module, plan_propagated(module, options)


def plan_lowered(lowered: Any) -> Plan:
    """`Lowered.plan()`: the plan of a `shardc.jit(...).lower(...)` result."""
    return _lowered_module(lowered)[1]


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
    from shardc.exporter import export_text
    from shardc.passes.plan.explicit import as_constraints, write_explicit

    with suspended_gc():
        module = _import(text, source_name, debug)
        plan_options = PlanOptions(model="shardy", fixes=False)
        pipeline = _pipeline(options, plan_options, verify, "annotate", debug)
        ctx = _run(module, pipeline, Caller(function="shardc.api_plan.explicit"), debug)
        write_explicit(module, ctx.plan_rewrites)
        if constraints:
            as_constraints(module)
        start = time.perf_counter()
        out = export_text(module, "generic" if format == "generic" else "pretty")
        if debug is not None and debug.timings is not None:
            debug.timings.append(("print", time.perf_counter() - start))
        return out
