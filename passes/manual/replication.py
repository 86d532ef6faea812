"""The static replication check of shard_map outputs (JAX's `check_vma`).

An out_sharding that leaves a manual axis of its region unmentioned promises that the body's
result is the same on every device along that axis (only one copy is kept). Where the variance
analysis (the `VALUE` view: see `variance.py`) says the value may differ along such an axis, the
program is rejected. The message names the result (its index, the op that computes it and where),
the manual axis, the op that made the value vary, and how to fix it; every other offending result
is listed after the first. The pipeline leaves the pass out when the caller turns the check off
(`check_replication=False`, `--no-check-replication`), as `check_vma=False` does in JAX; the fix
text names the switch of the caller (`PassContext.caller`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.errors import ManualComputationError
from shardc.dialect.ir import Module
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import TensorType

from ..context import ALL, PassContext
from .analyses import ValueVariance
from .regions import MANUAL_OP, ManualRegion, axes_text, spec_text
from .variance import VarianceResult, View, analyze_variance


@dataclass(frozen=True)
class ReplicationCheck:
    """The replication-check pass (JAX's `check_vma`); no options."""

    name: ClassVar[str] = "check-replication"
    preserves: ClassVar[frozenset[type]] = ALL

    def run(self, module: Module, ctx: PassContext) -> None:
        off = ctx.caller.switch("--no-check-replication", "check_replication=False")
        check_replication(module, ctx.analysis(ValueVariance, module), off_switch=off)


@dataclass(frozen=True)
class Violation:
    """One result of a region that may vary along axes its out_sharding promises replicated."""

    region: ManualRegion
    index: int
    axes: tuple[str, ...]  # the promised axes it may vary along, mesh order
    origins: tuple[str, ...]  # for each axis, the op that made the value vary


def unmentioned_axes(region: ManualRegion, index: int) -> tuple[str, ...]:
    """Manual axes of `region` that out_shardings[index] promises replication along."""
    s = region.out_shardings[index]
    used = {a.name for d in s.dims for a in d.axes}
    return tuple(a for a in region.manual_axes if a not in used)


def find_violations(result: VarianceResult) -> list[Violation]:
    """Every (region, result) whose value may vary along an axis its out_sharding leaves out."""
    if result.view is not View.VALUE:
        raise ValueError("the replication check reads the VALUE view of the variance analysis")
    out = []
    for region in result.regions:
        for j, var in enumerate(result.returned_variance(region)):
            if j >= len(region.out_shardings):
                break
            bad = tuple(a for a in unmentioned_axes(region, j) if a in var)
            if bad:
                out.append(Violation(region, j, bad, tuple(var[a] for a in bad)))
    return out


def _suggested_spec(sharding: TensorSharding, region: ManualRegion, axes: tuple[str, ...]) -> str:
    """out_specs that mention `axes` too: on the first unsharded dim, else after dim 0's axes."""
    dims = [[a.name for a in d.axes if a.name in region.manual_axes] for d in sharding.dims]
    free = next((i for i, d in enumerate(dims) if not d), 0)
    dims[free] = dims[free] + list(axes)
    parts = ["None" if not d else f"'{d[0]}'" if len(d) == 1
             else "(" + ", ".join(f"'{n}'" for n in d) + ")" for d in dims]
    while parts and parts[-1] == "None":
        parts.pop()
    return "P(" + ", ".join(parts) + ")"


def _returned_by(module: Module, v: Violation) -> str:
    term = v.region.body.terminator
    if term is None or v.index >= len(term.operands):
        return ""
    value = term.operands[v.index]
    owner = getattr(value, "owner", None)
    if owner is None:
        return f"block argument {getattr(value, 'index', '?')} of the body"
    where = module.resolve_loc(owner.loc)
    return f"{owner.name}{f' at {where}' if where else ''}"


def describe_violation(
    module: Module, v: Violation, off_switch: str = "check_replication=False"
) -> tuple[str, str]:
    """(what is wrong, how to fix it) for one violation, each on one line; `off_switch` is how
    the caller turns the check off."""
    region, j = v.region, v.index
    s = region.out_shardings[j]
    promised = axes_text(v.axes)
    one = v.axes[0] if len(v.axes) == 1 else None
    axis_phrase = f'manual axis "{one}"' if one else f"manual axes {promised}"
    made = "; ".join(
        f'along "{a}" because of {why}' if one is None else why
        for a, why in zip(v.axes, v.origins, strict=True)
    )
    returned = _returned_by(module, v)
    what = (
        f"result {j} of {region.describe()}"
        + (f" (computed by {returned})" if returned else "")
        + f" may differ across devices along {axis_phrase}, but out_specs[{j}] = "
        f"{spec_text(s, region)} (out_shardings[{j}] = {s.body()}) does not mention "
        f"{'it' if one else 'them'} and so promises one replicated copy: it varies "
        + (f'along "{one}" because of {made}' if one else made)
    )
    tup = f'"{one}"' if one else "(" + ", ".join(f'"{a}"' for a in v.axes) + ")"
    rank = s.rank if isinstance(region.op.results[j].type, TensorType) else 0
    fixes = [f"reduce it with lax.psum (or pmax/pmin) over {tup} before returning it"]
    if rank > 0:
        named = " and ".join(f'"{a}"' for a in v.axes)
        fixes.append(f"mention {named} in out_specs[{j}], e.g. "
                     f"{_suggested_spec(s, region, v.axes)}, to keep every device's block")
    fixes.append("or, if every device computes the same value in a way shardc cannot prove, "
                 f"turn the check off ({off_switch})")
    return what, ", ".join(fixes)


def check_replication(
    module: Module,
    variance: VarianceResult | None = None,
    off_switch: str = "check_replication=False",
) -> None:
    """Raise `ManualComputationError` if a result may vary along an axis its out_sharding
    promises replication along; the error describes the first and lists the others."""
    result = variance if variance is not None else analyze_variance(module, View.VALUE)
    found = find_violations(result)
    if not found:
        return
    what, fix = describe_violation(module, found[0], off_switch)
    rest = found[1:]
    if rest:
        others = ", ".join(
            f"result {v.index}{f' at {v.region.location}' if v.region.location else ''} "
            f"along {axes_text(v.axes)}" for v in rest
        )
        what += f" (also: {others})"
    details = [describe_violation(module, v)[0] for v in rest]
    raise ManualComputationError(
        "\n".join([what, *details]),
        location=found[0].region.location,
        hint=fix,
    )


__all__ = ["ReplicationCheck", "Violation", "check_replication", "describe_violation",
           "find_violations", "spec_text", "unmentioned_axes", "MANUAL_OP"]
