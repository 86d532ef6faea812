"""The static replication check of shard_map outputs (seed 000; JAX's `check_vma`).

An out_sharding that leaves a manual axis of its region unmentioned promises that the body's
result is the same on every device along that axis (only one copy is kept). Where the variance
analysis (the `VALUE` view: see `variance.py`) says the value may differ along such an axis, the
program is rejected, naming the result, the axis and the op that made the value vary.
`ReplicationCheck(enabled=False)` turns it off, as `check_vma=False` does in JAX.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardc.dialect.errors import ManualComputationError
from shardc.dialect.ir import Module

from .regions import MANUAL_OP, ManualRegion
from .variance import VarianceResult, View, analyze_variance


@dataclass(frozen=True)
class ReplicationCheck:
    """The replication-check pass; `enabled=False` is JAX's `check_vma=False`."""

    enabled: bool = True

    def run(self, module: Module, variance: VarianceResult | None = None) -> None:
        if self.enabled:
            check_replication(module, variance)


def unmentioned_axes(region: ManualRegion, index: int) -> tuple[str, ...]:
    """Manual axes of `region` that out_shardings[index] promises replication along."""
    s = region.out_shardings[index]
    used = {a.name for d in s.dims for a in d.axes}
    return tuple(a for a in region.manual_axes if a not in used)


def check_replication(module: Module, variance: VarianceResult | None = None) -> None:
    """Raise `ManualComputationError` on the first result that may vary along an axis its
    out_sharding promises replication along."""
    result = variance if variance is not None else analyze_variance(module, View.VALUE)
    if result.view is not View.VALUE:
        raise ValueError("the replication check reads the VALUE view of the variance analysis")
    for region in result.regions:
        returned = result.returned_variance(region)
        for j, var in enumerate(returned):
            if j >= len(region.out_shardings):
                break
            for axis in unmentioned_axes(region, j):
                if axis in var:
                    s = region.out_shardings[j]
                    raise ManualComputationError(
                        f"result {j} of {MANUAL_OP} (manual_axes={{"
                        + ", ".join(f'"{a}"' for a in region.manual_axes)
                        + f"}}) has out_shardings[{j}] = {s.body()}, which does not mention "
                        f'manual axis "{axis}" and so promises the value is replicated along '
                        f'it, but it may vary along "{axis}": {var[axis]}',
                        location=region.location,
                        hint=f'reduce it over "{axis}" (psum/all_gather) before returning it, '
                        f'mention "{axis}" in out_specs, or turn the check off '
                        "(--no-check-replication, check_vma=False)",
                    )
