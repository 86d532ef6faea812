"""`shardc.plan` / `shardc.diff`: the communication plan of a layout, before XLA compiles."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shardc.dialect.ir import Module, suspended_gc
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
) -> Plan:
    """Propagate `module` in place (origins recorded for causes) and plan its communication."""
    from shardc.api_propagate import propagate_module

    options = replace(options or PropagationOptions(), debug_origins=True)
    report = propagate_module(module, options)
    return plan_module(module, report.origins, plan_options)


def _import(text: str, source_name: str, verify: bool) -> Module:
    from shardc.importer import import_text
    from shardc.passes.verify import verify_module

    module = import_text(text, source_name)
    if verify:
        verify_module(module)
    return module


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
        module = _import(text, source_name, verify)
        return plan_propagated(module, options, plan_options)


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
        ma = _import(a, "A", verify)
        mb = _import(b, "B", verify)
        pa = plan_propagated(ma, options)
        pb = plan_propagated(mb, options)
        return diff_modules(ma, pa, mb, pb)


def _lowered_module(lowered: Any) -> tuple[Module, Plan]:
    """A fresh propagation of a `Lowered`'s traced module (origins recorded), and its plan."""
    source = getattr(lowered, "plan_source", None)
    if source is None:  # no traced module kept: plan the propagated IR as it is
        module = lowered.ir.clone()
        return module, plan_module(module, None)
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
    from shardc.api_propagate import propagate_module
    from shardc.exporter import export_text
    from shardc.passes.export import export_module
    from shardc.passes.plan.explicit import as_constraints, write_explicit
    from shardc.passes.plan.plan import plan_with_rewrites

    with suspended_gc():
        module = _import(text, source_name, verify)
        report = propagate_module(module, options or PropagationOptions())
        _, rewrites = plan_with_rewrites(
            module, report.origins, PlanOptions(model="shardy", fixes=False)
        )
        export_module(module, "annotate")
        write_explicit(module, rewrites)
        if constraints:
            as_constraints(module)
        return export_text(module, "generic" if format == "generic" else "pretty")
