"""`shardc.plan` / `shardc.diff`: the communication plan of a layout, before XLA compiles."""

from __future__ import annotations

from typing import Any

from shardc.dialect.ir import Module, suspended_gc
from shardc.passes.pipeline import Caller, ExportMode, PipelineOptions, run_pipeline
from shardc.passes.plan.diff import PlanDiff, diff_modules
from shardc.passes.plan.plan import PlanOptions, plan_module
from shardc.passes.plan.report import Collective, Memory, Plan
from shardc.passes.propagation.options import PropagationOptions

__all__ = [
    "Collective",
    "Memory",
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
) -> Plan:
    """Run the pipeline on `module` in place up to the plan (propagation records origins for
    the causes); `checks` also runs verify and the shard_map shape checks first."""
    ctx = run_pipeline(module, _pipeline(options, plan_options, checks), caller or _CALLER)
    assert ctx.plan is not None
    return ctx.plan


_CALLER = Caller(function="shardc.plan")


def _pipeline(
    options: PropagationOptions | None,
    plan_options: PlanOptions | None,
    checks: bool,
    export: ExportMode | None = None,
) -> PipelineOptions:
    return PipelineOptions(
        verify=checks,
        check_manual=checks,
        check_replication=False,  # a cost question, not a correctness one: propagate checks it
        propagation=options or PropagationOptions(),
        plan=plan_options or PlanOptions(),
        export=export,
    )


def _import(text: str, source_name: str) -> Module:
    from shardc.importer import import_text

    return import_text(text, source_name)


def plan(
    text: str,
    *,
    options: PropagationOptions | None = None,
    source_name: str = "<input>",
    verify: bool = True,
    plan_options: PlanOptions | None = None,
) -> Plan:
    """The collectives the propagated layout of an MLIR module implies, each with its kind, mesh
    axes, bytes per device, value, op, location, cause and fix, and the per-device memory.

    The input may be unpropagated (it is propagated first, as `shardc.propagate` does) or a
    propagated module (propagation keeps its shardings). `Plan.to_json()` is the issue's schema.
    """
    with suspended_gc():
        module = _import(text, source_name)
        return plan_propagated(module, options, plan_options, checks=verify)


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
) -> str:
    """Propagate, then write the plan into the module as explicit `sdy` collectives, as Shardy's
    explicit pipeline does (`shardc propagate --explicit`). The plan is Shardy's model of it
    (`PlanOptions(model="shardy")`). With `constraints`, each collective is written as an
    `sdy.sharding_constraint` to its out_sharding instead: the form XLA compiles."""
    from shardc.exporter import export_text
    from shardc.passes.plan.explicit import as_constraints, write_explicit

    with suspended_gc():
        module = _import(text, source_name)
        pipeline = _pipeline(options, PlanOptions(model="shardy", fixes=False), verify, "annotate")
        ctx = run_pipeline(module, pipeline, Caller(function="shardc.api_plan.explicit"))
        write_explicit(module, ctx.plan_rewrites)
        if constraints:
            as_constraints(module)
        return export_text(module, "generic" if format == "generic" else "pretty")
