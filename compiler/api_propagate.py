"""`shardc.propagate` / `shardc.propagate_module`: Shardy's propagation on a text module or IR."""

from __future__ import annotations

from shardc.dialect.ir import Module, suspended_gc
from shardc.passes.propagation.driver import PropagationReport
from shardc.passes.propagation.driver import propagate as _run
from shardc.passes.propagation.options import PropagationOptions

__all__ = [
    "PropagationOptions",
    "PropagationReport",
    "propagate",
    "propagate_module",
    "propagate_text",
]


def propagate_module(
    module: Module, options: PropagationOptions | None = None
) -> PropagationReport:
    """Propagate shardings through `module` in place (no export) and report what happened.

    The module is left as Shardy's propagation leaves it: open dims still open, constraints and
    manual computations updated. The report names every op without a sharding rule (`notes()`),
    the rounds run and, with `debug_origins`, one `explanation` line per dim propagation decided
    (its axes, the annotation they trace back to, the round, the op that wrote them); with
    `dump_rounds`, every sharding after every round (`round_dumps`). With `auto`, the
    auto-sharding pass then decides the dims nothing decided (`report.auto` says how).
    """
    options = options or PropagationOptions()
    kept = None
    if options.auto and not options.auto_keep_propagated:
        from shardc.passes.auto.graph import Kept

        kept = Kept.snapshot(module)  # the annotations, before propagation adds to them
        if kept.has_priorities():
            # priorities say how propagation settles conflicts: keep what it settled
            kept = None
    report = _run(module, options)
    if options.auto:
        note = None
        if kept is None and not options.auto_keep_propagated:
            note = (
                "auto: annotations carry priorities, so every dim propagation decided stays "
                "(as with --auto-keep-propagated) and auto only fills what nothing reached"
            )
        run_auto(module, options, report, kept, note)
    return report


def run_auto(
    module: Module,
    options: PropagationOptions,
    report: PropagationReport,
    kept: object = None,
    note: str | None = None,
) -> None:
    """The auto-sharding pass after propagation, then propagation again so that what it does
    not model (region bodies, ops without rules) follows; its report lands in `report.auto`
    and, with `debug_origins`, its explanation in `report.explanation`."""
    import dataclasses

    from shardc.passes.auto.auto_sharding import AutoShardingPass

    auto = AutoShardingPass(
        memory_budget=options.memory_budget,
        axis_cost=options.axis_cost,
        time_limit=float(options.auto_time_limit),
        solver=options.auto_solver,
        headroom=options.auto_headroom / 100,
        explain=True,
    ).run(module, kept)
    if note is not None:
        auto.notes.insert(0, note)
    report.auto = auto
    again = dataclasses.replace(options, debug_origins=False, dump_rounds=False, auto=False)
    report.warnings.extend(w for w in _run(module, again).warnings if w not in report.warnings)
    if options.debug_origins:
        report.explanation.extend(auto.lines())


def propagate(
    text: str,
    *,
    options: PropagationOptions | None = None,
    mode: str = "annotate",
    format: str = "pretty",
    source_name: str = "<input>",
) -> str:
    """Import, verify, propagate and export an MLIR module; returns the exported text.

    `mode="annotate"` writes the shardings Shardy would choose on every value; `mode="pin"`
    also pins each op result with a closed `sdy.sharding_constraint` so XLA keeps them.
    """
    out, _ = propagate_text(
        text, options=options, mode=mode, format=format, source_name=source_name
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
    with_locs: bool = False,
) -> tuple[str, PropagationReport]:
    """`propagate`, also returning the report (the CLI prints its notes and explanations)."""
    from shardc.exporter import export_text
    from shardc.importer import import_text
    from shardc.passes.export import export_module
    from shardc.passes.verify import verify_module

    options = options or PropagationOptions()
    with suspended_gc():
        module = import_text(text, source_name)
        if verify:
            verify_module(module)
        report = propagate_module(module, options)
        export_module(module, mode, options.keep_open)  # type: ignore[arg-type]
        fmt = "generic" if format == "generic" else "pretty"
        return export_text(module, fmt, with_locs=with_locs), report
