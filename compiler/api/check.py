"""`shardc.check`: check the shard_map regions of a module and describe them.

For every `sdy.manual_computation`: its manual and free axes, the global and local shapes of its
operands and results, each collective with the mesh axes it acts over and the bytes each device
sends, every `axis_index` pattern, and the device variance of each result (in the value view the
replication check uses, and in JAX's typing view where that differs; see
`shardc.passes.manual.variance`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shardc.backend.importer import import_text
from shardc.dialect.ir import Module, symbol_name
from shardc.passes.manual.analyses import ValueVariance
from shardc.passes.manual.collectives import Collective
from shardc.passes.manual.regions import ManualRegion, axes_text
from shardc.passes.manual.replication import unmentioned_axes
from shardc.passes.manual.shapes import RegionShapes, check_shapes
from shardc.passes.manual.variance import VarianceResult, View, analyze_variance
from shardc.passes.pipeline import Caller, PipelineOptions, run_pipeline
from shardc.runtime import suspended_gc


@dataclass(frozen=True)
class ResultVariance:
    index: int
    value_axes: tuple[str, ...]  # VALUE view
    typing_axes: tuple[str, ...]  # TYPING view (JAX's check_vma)
    promised: tuple[str, ...]  # manual axes the out_sharding promises replication along


@dataclass(frozen=True)
class RegionReport:
    region: ManualRegion
    shapes: RegionShapes
    collectives: tuple[Collective, ...]
    axis_index: tuple[tuple[str, str], ...]  # (location or op, description)
    results: tuple[ResultVariance, ...]

    def lines(self) -> list[str]:
        r = self.region
        where = f" at {r.location}" if r.location else ""
        func = _func_name(r.op)
        out = [
            f"{r.describe()}{f' in @{func}' if func else ''}{where}",
            f"  manual axes: {axes_text(r.manual_axes)}"
            + (f" (inside {axes_text(r.outer_axes)})" if r.outer_axes else "")
            + f"; free axes: {axes_text(r.free_axes)}",
        ]
        for v in self.shapes.operands:
            out.append(
                f"  operand {v.index}: {_shape(v.global_shape, v.element_type)} -> local "
                f"{_shape(v.local_shape, v.element_type)}"
            )
        for v in self.shapes.results:
            out.append(
                f"  result {v.index}: local {_shape(v.local_shape, v.element_type)} -> "
                f"{_shape(v.global_shape, v.element_type)}"
            )
        for c in self.collectives:
            loc = f" at {c.location}" if c.location else ""
            out.append(f"  collective: {c.describe()}, {c.bytes_per_device} bytes/device{loc}")
        for loc, what in self.axis_index:
            out.append(f"  axis_index: {what} at {loc}")
        for rv in self.results:
            text = "invariant" if not rv.value_axes else f"varies over {axes_text(rv.value_axes)}"
            if rv.typing_axes != rv.value_axes:
                text += f" (typing view: {axes_text(rv.typing_axes)})"
            if rv.promised:
                text += f"; promised replicated over {axes_text(rv.promised)}"
            out.append(f"  result {rv.index} variance: {text}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class CheckReport:
    """What `check` found, region by region (outer regions first)."""

    regions: tuple[RegionReport, ...] = field(default_factory=tuple)
    replication_checked: bool = True

    def lines(self) -> list[str]:
        if not self.regions:
            return ["no sdy.manual_computation regions"]
        out: list[str] = []
        for r in self.regions:
            out.extend(r.lines())
        state = "passed" if self.replication_checked else "skipped"
        out.append(f"replication check: {state}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _func_name(op) -> str | None:  # type: ignore[no-untyped-def]
    cur = op.parent_op
    while cur is not None:
        if cur.name == "func.func":
            return symbol_name(cur)
        cur = cur.parent_op
    return None


def _shape(shape: tuple[int, ...], et: str) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{et}>"


def _axis_index_entries(module: Module, result: VarianceResult, region: ManualRegion) -> list:
    out = []
    body_values = set()
    for op in region.body.ops:
        body_values.update(op.results)
    for value, what in result.axis_index.items():
        # report the end of each partition_id chain, not every intermediate step
        if any(u.results and u.results[0] in result.axis_index for u in value.users):
            continue
        owner = getattr(value, "owner", None)
        if owner is None or _region_of(owner, result) is not region:
            continue
        out.append((module.resolve_loc(owner.loc) or owner.name, what))
    return out


def _region_of(op, result: VarianceResult) -> ManualRegion | None:  # type: ignore[no-untyped-def]
    by_op = {r.op: r for r in result.regions}
    cur = op.parent_op
    while cur is not None:
        if cur in by_op:
            return by_op[cur]
        cur = cur.parent_op
    return None


@suspended_gc()
def check_module(
    module: Module, *, check_replication_flag: bool = True, caller: Caller | None = None
) -> CheckReport:
    """Run the manual-region checks of the pipeline on an imported module; build the report."""
    options = PipelineOptions(
        verify=False, check_replication=check_replication_flag, propagate=False
    )
    ctx = run_pipeline(module, options, caller or Caller(function="shardc.check"))
    shapes = {s.region.op: s for s in check_shapes(module)}
    value = ctx.analysis(ValueVariance, module)
    typing = analyze_variance(module, View.TYPING)
    reports = []
    for region in value.regions:
        cols = tuple(
            c for op, c in value.collectives.items() if value.collective_regions.get(op) is region
        )
        v_ret = value.returned_variance(region)
        t_region = next(r for r in typing.regions if r.op is region.op)
        t_ret = typing.returned_variance(t_region)
        names = region.mesh.axis_names
        results = []
        for j in range(len(region.op.results)):
            va = tuple(a for a in names if a in v_ret[j]) if j < len(v_ret) else ()
            ta = tuple(a for a in names if a in t_ret[j]) if j < len(t_ret) else ()
            promised = unmentioned_axes(region, j) if j < len(region.out_shardings) else ()
            results.append(ResultVariance(j, va, ta, promised))
        reports.append(
            RegionReport(
                region,
                shapes[region.op],
                cols,
                tuple(_axis_index_entries(module, value, region)),
                tuple(results),
            )
        )
    return CheckReport(tuple(reports), check_replication_flag)


def check(
    text_or_module: str | Module, *, check_replication: bool = True, caller: Caller | None = None
) -> CheckReport:
    """Check every shard_map region (shapes, collectives, replication) of a module.

    Raises `ManualComputationError` (a `ShardcError`) on a local shape that disagrees with the
    body, or on an output that may vary along an axis its out_sharding promises replication
    along (unless `check_replication=False`, JAX's `check_vma=False`).
    """
    if isinstance(text_or_module, Module):
        module = text_or_module
    else:
        module = import_text(text_or_module)
    return check_module(module, check_replication_flag=check_replication, caller=caller)
