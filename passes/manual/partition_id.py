"""`stablehlo.partition_id` inside a partially manual region is rejected (every entry point).

Inside an `sdy.manual_computation` whose mesh keeps some axes free (automatic), which partition a
device is depends on how XLA partitions those free axes, so a `partition_id` there has no fixed
meaning; JAX's `axis_index` wraps it in a nested manual computation over the free axes instead.
The variance analysis finds them (`VarianceResult.misplaced_partition_ids`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.errors import ManualComputationError
from shardc.dialect.ir import Module

from ..context import ALL, PassContext
from .analyses import ValueVariance
from .regions import axes_text
from .variance import VarianceResult, View, analyze_variance


@dataclass(frozen=True)
class PartitionIdCheck:
    """The partition_id placement check; no options."""

    name: ClassVar[str] = "check-partition-id"
    preserves: ClassVar[frozenset[type]] = ALL

    def run(self, module: Module, ctx: PassContext) -> None:
        check_partition_ids(module, ctx.analysis(ValueVariance, module))


def check_partition_ids(module: Module, variance: VarianceResult | None = None) -> None:
    """Raise `ManualComputationError` for the first partition_id in a partially manual region."""
    result = variance if variance is not None else analyze_variance(module, View.VALUE)
    for op, region in result.misplaced_partition_ids:
        raise ManualComputationError(
            f"stablehlo.partition_id inside {region.describe()} where the mesh axes "
            f"{axes_text(region.free_axes)} are free (automatic): which partition a device is "
            "there depends on how XLA partitions those axes",
            location=module.resolve_loc(op.loc) or region.location,
            hint="compute it inside a nested sdy.manual_computation over the free axes, as "
            "JAX's axis_index does (or use lax.axis_index in the shard_map)",
        )
