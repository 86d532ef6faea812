"""Local (per-device) shapes of manual regions, checked against the region body.

For an operand dim of global size `D` whose in_sharding lists manual axes `m_1..m_r` of this
region (free axes and enclosing regions' axes do not count), the body sees
`D / (size(m_1) * ... * size(m_r))`, which must divide exactly (outside manual regions XLA
pads; inside, shard_map requires it). Results go the other way: the body returns local shapes,
the op's results are the local shapes times the manual axes of the out_sharding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.errors import (
    ManualComputationError,
    count_mismatch,
    not_divisible,
    rank_mismatch,
)
from shardc.dialect.ir import Module
from shardc.dialect.layout_math import axes_size
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import TensorType

from ..context import ALL, PassContext
from .analyses import ManualRegions
from .regions import ManualRegion, manual_regions


@dataclass(frozen=True)
class ValueShapes:
    """One operand or result of a region: global and local shapes."""

    kind: str  # "operand" or "result"
    index: int
    global_shape: tuple[int, ...]
    local_shape: tuple[int, ...]
    element_type: str


@dataclass(frozen=True)
class RegionShapes:
    region: ManualRegion
    operands: tuple[ValueShapes, ...]
    results: tuple[ValueShapes, ...]


def _dim_manual_axes(sharding: TensorSharding, dim: int, region: ManualRegion) -> list:
    if dim >= len(sharding.dims):
        return []
    return [a for a in sharding.dims[dim].axes if a.name in region.manual_axes]


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def local_shape(
    region: ManualRegion, sharding: TensorSharding, global_type: TensorType, what: str
) -> tuple[int, ...]:
    """The per-device shape of a value of `global_type` split by `sharding`'s manual axes."""
    label = f"{what} = {sharding.body()}"
    if len(sharding.dims) != global_type.rank:
        raise rank_mismatch(
            f"{region.describe()}: {label}", len(sharding.dims), str(global_type),
            global_type.rank, cls=ManualComputationError, location=region.location,
            hint=f"give {what} exactly one dim sharding per dim of the value",
        )
    out = []
    for d, size in enumerate(global_type.shape):
        n = axes_size(_dim_manual_axes(sharding, d, region), region.mesh)
        if size >= 0 and size % n:
            names = " * ".join(f'{a} of size {a.size(region.mesh)}' for a in
                               _dim_manual_axes(sharding, d, region))
            kind = "axis" if " * " not in names else "axes"
            raise not_divisible(
                f"{region.describe()}: {label}", d, size, f"manual {kind} {names}", n,
                hint="or map it to a smaller axis in the specs", cls=ManualComputationError,
                location=region.location,
            )
        out.append(size // n if size >= 0 else size)
    return tuple(out)


def _tensor(t: object) -> TensorType | None:
    return t if isinstance(t, TensorType) else None


def _check_counts(region: ManualRegion) -> None:
    op = region.op
    for what, shardings, values in (
        ("in_shardings", region.in_shardings, op.operands),
        ("out_shardings", region.out_shardings, op.results),
    ):
        if len(shardings) != len(values):
            kind = "operands" if what == "in_shardings" else "results"
            raise count_mismatch(
                f"{region.describe()}: {what}", len(shardings), "shardings", len(values), kind,
                hint=f"give {what} exactly one sharding per {kind[:-1]}",
                cls=ManualComputationError, location=region.location,
            )


def region_shapes(region: ManualRegion) -> RegionShapes:
    """Compute and check the local shapes of one region's operands and results."""
    op = region.op
    body = region.body
    _check_counts(region)
    if len(body.args) != len(op.operands):
        raise count_mismatch(
            f"{region.describe()}: the body", len(body.args), "block arguments",
            len(op.operands), "operands", cls=ManualComputationError, location=region.location,
        )
    operands = []
    for i, (v, s, arg) in enumerate(zip(op.operands, region.in_shardings, body.args, strict=False)):
        gt = _tensor(v.type)
        if gt is None:
            continue
        local = local_shape(region, s, gt, f"in_shardings[{i}]")
        at = arg.type
        if not isinstance(at, TensorType) or at.shape != local:
            raise ManualComputationError(
                f"{region.describe()}: operand {i} is {gt} and in_shardings[{i}] = {s.body()} "
                f"makes it tensor<{_shape_text(local)}> per device, but block argument {i} of "
                f"the body is {at}",
                location=region.location,
                hint=f"declare block argument {i} as tensor<{_shape_text(local)}x"
                f"{gt.element_type}> or change in_shardings[{i}]",
            )
        operands.append(ValueShapes("operand", i, gt.shape, local, gt.element_type))
    term = body.terminator
    returned = list(term.operands) if term is not None else []
    if len(returned) != len(op.results):
        raise count_mismatch(
            f"{region.describe()}: the body's return", len(returned), "values",
            len(op.results), "results", cls=ManualComputationError, location=region.location,
        )
    results = []
    for j, (r, s, v) in enumerate(zip(op.results, region.out_shardings, returned, strict=False)):
        gt = _tensor(r.type)
        if gt is None:
            continue
        local = local_shape(region, s, gt, f"out_shardings[{j}]")
        lt = v.type
        if not isinstance(lt, TensorType) or lt.shape != local:
            raise ManualComputationError(
                f"{region.describe()}: result {j} is {gt} and out_shardings[{j}] = {s.body()} "
                f"needs tensor<{_shape_text(local)}> per device, but the body returns {lt}",
                location=region.location,
                hint=f"return a tensor<{_shape_text(local)}> block or change out_shardings[{j}]",
            )
        results.append(ValueShapes("result", j, gt.shape, local, gt.element_type))
    return RegionShapes(region, tuple(operands), tuple(results))


@dataclass(frozen=True)
class ManualShapesCheck:
    """The local-shape check of every manual region; no options."""

    name: ClassVar[str] = "check-manual-shapes"
    preserves: ClassVar[frozenset[type]] = ALL

    def run(self, module: Module, ctx: PassContext) -> None:
        check_shapes(module, ctx.analysis(ManualRegions, module))


def check_shapes(module: Module, regions: list[ManualRegion] | None = None) -> list[RegionShapes]:
    """Check every manual region of `module` (nested ones and those in loop/cond bodies too;
    `regions`: those regions, when the caller has found them already)."""
    found = manual_regions(module) if regions is None else regions
    return [region_shapes(r) for r in found]
