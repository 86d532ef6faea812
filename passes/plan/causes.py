"""Why a collective is there and what annotation change would remove it (text for the plan).

A cause names the two shardings that disagree, each with the annotation its axes trace back to
(from the propagation's origins observer, when it ran): `%arg0 dim 1 {"y"} <- %arg1 vs %2 dim 0
{"y"} <- %arg0`. A reduction's cause names the reduction factor, the dims it sits on and its
axes. A fix names the annotation to change and what the alternative would cost instead.
"""

from __future__ import annotations

from typing import Any

from shardc.dialect.ir import Module, Operation, Value
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import AxisRef, Mesh

from .cost import Dims
from .op_cost import OpSteps, Tensor
from .report import fmt_bytes


def axes_text(axes: tuple[AxisRef, ...]) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


def dims_text(dims: Dims) -> str:
    return "[" + ", ".join(axes_text(d) for d in dims) + "]"


class Causes:
    """Builds cause and fix texts; `origins` is an `OriginRecorder` or None."""

    def __init__(self, module: Module, names: dict[int, str], origins: Any):
        self.module = module
        self.names = names
        self.origins = origins

    # -- naming --------------------------------------------------------------------------------
    def name(self, holder: Any) -> str:
        if isinstance(holder, str):
            return holder
        n = self.names.get(id(holder))
        if n is not None:
            return n
        if isinstance(holder, Operation):
            return holder.name
        return str(getattr(holder, "name", "?"))

    def root(self, holder: Any, dim: int) -> str:
        """` <- %arg0 (annotation)` when the dim's axes trace back to another holder."""
        if self.origins is None or isinstance(holder, str):
            return ""
        o = self.origins.get(holder, dim)
        if o is None:
            return ""
        if o.is_annotation:
            return " (annotated)"
        if o.root is None:
            return ""
        return f" <- {self.name(o.root)}"

    def root_holder(self, holder: Any, dim: int) -> Any:
        if self.origins is None or isinstance(holder, str):
            return None
        o = self.origins.get(holder, dim)
        if o is None:
            return None
        return holder if o.is_annotation else o.root

    def dim(self, holder: Any, d: int, axes: tuple[AxisRef, ...]) -> str:
        return f"{self.name(holder)} dim {d} {axes_text(axes)}{self.root(holder, d)}"

    # -- ops with rules ------------------------------------------------------------------------
    def _values(self, op: Operation) -> list[Value]:
        return [*op.operands, *op.results]

    def _differing_dim(self, t: Tensor, want: Dims) -> int:
        for d in range(len(t.dims)):
            if t.dims[d] != (want[d] if d < len(want) else ()):
                return d
        return 0

    def _rival(
        self,
        op: Operation,
        i: int,
        d: int,
        rule: OpShardingRule,
        ts: list[Tensor],
        steps: OpSteps,
        mesh: Mesh,
    ) -> str:
        """The other tensor of the op whose sharding decided what tensor i's dim d must be."""
        all_dims = (*rule.operand_dims, *rule.result_dims)
        factors = all_dims[i][d] if d < len(all_dims[i]) else ()
        mine = set(ts[i].dims[d]) | set(steps.computed[i][d] if d < len(steps.computed[i]) else ())
        values = self._values(op)
        for f in factors:
            if rule.kinds[f] == FactorKind.NEED_REPLICATION and ts[i].dims[d]:
                return f"{op.name} needs dim {d} replicated (factor {f} needs replication)"
        # 1. a tensor with the same factor, sharded the way the op is computed
        for f in factors:
            for j, dims in enumerate(all_dims):
                if j == i:
                    continue
                for e, fl in enumerate(dims):
                    if f in fl and ts[j].dims[e] and ts[j].dims[e] == steps.computed[j][e]:
                        return self.dim(values[j], e, ts[j].dims[e])
        # 2. a tensor that uses the axes on another factor
        for j, t in enumerate(ts):
            if j == i:
                continue
            for e, axes in enumerate(t.dims):
                if any(a.overlaps(b, mesh) for a in axes for b in mine):
                    return self.dim(values[j], e, axes)
        return f"{op.name} computed at {dims_text(steps.computed[i])}"

    def operand(
        self,
        op: Operation,
        i: int,
        rule: OpShardingRule,
        ts: list[Tensor],
        steps: OpSteps,
        mesh: Mesh,
    ) -> str:
        """Operand i's sharding vs the one the op is computed at (and who decided that)."""
        d = self._differing_dim(ts[i], steps.computed[i])
        v = op.operands[i]
        return (
            f"{self.dim(v, d, ts[i].dims[d])} vs {self._rival(op, i, d, rule, ts, steps, mesh)}"
            f"; {op.name} needs {self.name(v)} as {dims_text(steps.computed[i])}"
        )

    def result(
        self,
        op: Operation,
        j: int,
        rule: OpShardingRule,
        ts: list[Tensor],
        steps: OpSteps,
        mesh: Mesh,
    ) -> str:
        n = len(op.operands)
        i = n + j
        d = self._differing_dim(ts[i], steps.computed[i])
        r = op.results[j]
        return (
            f"{self.dim(r, d, ts[i].dims[d])} vs {self._rival(op, i, d, rule, ts, steps, mesh)}"
            f"; {op.name} computes {self.name(r)} as {dims_text(steps.computed[i])}"
        )

    def reduction(
        self, op: Operation, rule: OpShardingRule, ts: list[Tensor], steps: OpSteps, mesh: Mesh
    ) -> str:
        parts = []
        for f, kind in enumerate(rule.kinds):
            if kind != FactorKind.REDUCTION or not steps.common[f]:
                continue
            where = []
            for i, dims in enumerate(rule.operand_dims):
                for d, fl in enumerate(dims):
                    if f in fl:
                        where.append(self.dim(op.operands[i], d, ts[i].dims[d]))
            parts.append(
                f"reduction factor {f} (size {rule.factor_sizes[f]}) sharded on "
                f"{axes_text(steps.common[f])}: " + ", ".join(where)
            )
        return "; ".join(parts) or "partial sums over " + axes_text(steps.reduce_axes)

    # -- fixes ---------------------------------------------------------------------------------
    def annotation(self, holder: Any, d: int) -> str:
        r = self.root_holder(holder, d)
        return self.name(r) if r is not None else self.name(holder)

    def operand_fix(
        self,
        op: Operation,
        i: int,
        rule: OpShardingRule,
        ts: list[Tensor],
        steps: OpSteps,
        alternative: int,
    ) -> str:
        v = op.operands[i]
        d = self._differing_dim(ts[i], steps.computed[i])
        factors = rule.operand_dims[i][d] if d < len(rule.operand_dims[i]) else ()
        if any(rule.kinds[f] == FactorKind.NEED_REPLICATION for f in factors):
            return (
                f"{op.name} cannot work on dim {d} split: shard {self.name(v)} on another dim "
                f"(annotation at {self.annotation(v, d)}), e.g. as "
                f"{dims_text(steps.computed[i])}, to remove this"
            )
        return (
            f"shard {self.name(v)} as {dims_text(steps.computed[i])} (annotation at "
            f"{self.annotation(v, d)}) to remove this; or compute {op.name} at "
            f"{self.name(v)}'s layout {dims_text(ts[i].dims)}: {fmt_bytes(alternative)} at this "
            f"op instead of {fmt_bytes(steps.bytes)}"
        )

    def result_fix(self, op: Operation, j: int, ts: list[Tensor], steps: OpSteps) -> str:
        r = op.results[j]
        i = len(op.operands) + j
        d = self._differing_dim(ts[i], steps.computed[i])
        return (
            f"let {self.name(r)} be {dims_text(steps.computed[i])} (annotation at "
            f"{self.annotation(r, d)}): its users then reshard it if they need "
            f"{dims_text(ts[i].dims)}"
        )

    def reduction_fix(
        self,
        op: Operation,
        rule: OpShardingRule,
        ts: list[Tensor],
        steps: OpSteps,
        alternative: int,
    ) -> str:
        dims = []
        for f, kind in enumerate(rule.kinds):
            if kind != FactorKind.REDUCTION or not steps.common[f]:
                continue
            for i, od in enumerate(rule.operand_dims):
                for d, fl in enumerate(od):
                    if f in fl:
                        dims.append(f"{self.name(op.operands[i])} dim {d}")
        return (
            f"replicate {', '.join(dims)} (the reduced dims) to remove it: "
            f"{fmt_bytes(alternative)} at this op instead of {fmt_bytes(steps.bytes)}"
        )

    # -- boundaries ----------------------------------------------------------------------------
    def boundary(self, src: Value, holder: Any, have: Dims, want: Dims, what: str) -> str:
        d = 0
        for k in range(len(have)):
            if have[k] != (want[k] if k < len(want) else ()):
                d = k
                break
        dst = self.name(holder)
        other = f"{dst} dim {d} {axes_text(want[d] if d < len(want) else ())}"
        other += self.root(holder, d) if not isinstance(holder, str) else ""
        return f"{what}: {self.dim(src, d, have[d] if d < len(have) else ())} vs {other}"

    def boundary_fix(self, src: Value, holder: Any, want: Dims, have: Dims, what: str) -> str:
        d = 0
        for k in range(len(have)):
            if have[k] != (want[k] if k < len(want) else ()):
                d = k
                break
        return (
            f"shard {self.name(src)} as {dims_text(want)} where it is produced (annotation at "
            f"{self.annotation(src, d)}), or give {self.name(holder)} {dims_text(have)}; "
            "either moves this reshard to that value's producers or users"
        )
