"""Device-variance analysis of manual regions: along which manual axes may a value differ?

Every value in a manual region gets the set of bound manual axes along which devices may hold
different values for it, and for each such axis the op that made it vary (for messages).

Rules: a block argument varies along the manual axes its in_sharding splits it over (plus the
variance of the operand in the enclosing region); an ordinary op's results vary along the union
of its operands' axes; `partition_id` arithmetic varies along exactly the axes its value depends
on (evaluated on every device); control flow takes the union of its branches, loop-carried values
iterate to a fixed point, and a predicate or trip count that varies makes every result vary.

Two views of the collectives, because two checks want different things:

* `VALUE` (what the numbers are): all_reduce and all_gather results are invariant along their
  groups' axes (every device of a group ends with the same buffer); reduce_scatter, all_to_all
  and collective_permute results vary along them. Used by the replication check (`replication.py`)
  and by the redundant-collective removal (`redundant.py`): both need a proof that a value is
  the same everywhere, and this view is exact about that.
* `TYPING` (what JAX's `check_vma` types say): as above except that all_gather results
  *vary* along the gathered axes, so that all_gather transposes to psum_scatter. `shardc check`
  reports it beside the value view; where the two differ, JAX's own check would demand
  `all_gather_invariant` (or `check_vma=False`) for an unmapped output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from shardc.dialect.data_flow import FlowKind, flow_kind
from shardc.dialect.ir import Block, Module, Operation, Value, callee_name, symbol_name

from .collectives import (
    Collective,
    DeviceGrid,
    decode_collective,
    describe_axis_index,
    eval_partition_arith,
)
from .regions import MANUAL_OP, ManualRegion, manual_regions, spec_text


class View(Enum):
    VALUE = "value"
    TYPING = "typing"


Var = dict[str, str]  # manual axis -> the reason (an op and its location) it may vary


def _union(*vs: Var) -> Var:
    out: Var = {}
    for v in vs:
        for a, why in v.items():
            out.setdefault(a, why)
    return out


@dataclass
class VarianceResult:
    """The per-value variance of every manual region of a module, in one view."""

    module: Module
    view: View
    regions: list[ManualRegion]
    var: dict[Value, Var] = field(default_factory=dict)
    collectives: dict[Operation, Collective] = field(default_factory=dict)
    # the manual region each collective runs in (a called func's ops have no enclosing one)
    collective_regions: dict[Operation, ManualRegion] = field(default_factory=dict)
    axis_index: dict[Value, str] = field(default_factory=dict)
    # partition_id where some mesh axes are free: its value depends on XLA's partitioning
    misplaced_partition_ids: list[tuple[Operation, ManualRegion]] = field(default_factory=list)

    def of(self, value: Value) -> frozenset[str]:
        return frozenset(self.var.get(value, {}))

    def ordered(self, value: Value, region: ManualRegion) -> tuple[str, ...]:
        """The value's axes in mesh order."""
        v = self.var.get(value, {})
        return tuple(a for a in region.mesh.axis_names if a in v)

    def origin(self, value: Value, axis: str) -> str | None:
        return self.var.get(value, {}).get(axis)

    def returned_variance(self, region: ManualRegion) -> list[Var]:
        """For each result of `region`, the variance of the value its body returns."""
        term = region.body.terminator
        return [dict(self.var.get(v, {})) for v in (term.operands if term else [])]


class _Analyzer:
    def __init__(self, module: Module, view: View, regions: list[ManualRegion] | None = None):
        self.module = module
        self.view = view
        self.regions = manual_regions(module) if regions is None else regions
        self.by_op = {r.op: r for r in self.regions}
        self.result = VarianceResult(module, view, self.regions)
        self.known: dict[Value, np.ndarray] = {}
        self.call_stack: list[str] = []

    def loc(self, op: Operation) -> str:
        where = self.module.resolve_loc(op.loc)
        return f" at {where}" if where else ""

    def run(self) -> VarianceResult:
        for region in self.regions:
            if region.parent is None:
                self.region(region, [{} for _ in region.op.operands])
        return self.result

    # regions ---------------------------------------------------------------------------------
    def region(self, region: ManualRegion, operand_var: list[Var]) -> list[Var]:
        body = region.body
        for i, arg in enumerate(body.args):
            v = dict(operand_var[i]) if i < len(operand_var) else {}
            echoed = self.round_trip(region, i)
            if echoed is not None:
                v = _union(v, echoed)
            elif i < len(region.in_shardings):
                s = region.in_shardings[i]
                for d, dim in enumerate(s.dims):
                    for ax in dim.axes:
                        if ax.name in region.manual_axes:
                            v.setdefault(
                                ax.name,
                                f"in_specs[{i}] = {spec_text(s, region)} (in_shardings[{i}] = "
                                f"{s.body()}), which splits dim {d} of operand {i} of "
                                f'{MANUAL_OP}{self.loc(region.op)} over "{ax.name}"',
                            )
            self.result.var[arg] = v
        self.block(body, region)
        outer = set(region.outer_axes)
        returned = self.result.returned_variance(region)
        # outside, this region's axes are automatic again: only enclosing axes stay meaningful
        out = [{a: w for a, w in v.items() if a in outer} for v in returned]
        for r, v in zip(region.op.results, out, strict=False):
            self.result.var[r] = v
        return out

    def round_trip(self, region: ManualRegion, i: int) -> Var | None:
        """If operand `i` is a result of an earlier region over the same manual axes, split back
        exactly as it was assembled, each device gets back the very block it returned: the
        block argument then varies as that returned value did."""
        if i >= len(region.op.operands) or i >= len(region.in_shardings):
            return None
        value = region.op.operands[i]
        producer = getattr(value, "owner", None)
        if producer is None or producer.name != MANUAL_OP or producer not in self.by_op:
            return None
        prev = self.by_op[producer]
        j = value.index
        if (
            set(prev.manual_axes) != set(region.manual_axes)
            or prev.outer_axes != region.outer_axes
            or prev.mesh != region.mesh
            or j >= len(prev.out_shardings)
            or _manual_dims(prev.out_shardings[j], prev) != _manual_dims(region.in_shardings[i], region)
        ):
            return None
        returned = self.result.returned_variance(prev)
        if j >= len(returned):
            return None
        return {a: w for a, w in returned[j].items() if a in region.manual_axes}

    def block(self, block: Block, region: ManualRegion) -> None:
        for op in block.ops:
            self.op(op, region)

    # ops -------------------------------------------------------------------------------------
    def op(self, op: Operation, region: ManualRegion) -> None:
        var = self.result.var
        ins = [var.get(v, {}) for v in op.operands]
        name = op.name
        if name == MANUAL_OP:
            self.region(self.by_op[op], ins)
            return
        kind = flow_kind(op)
        if kind is FlowKind.LOOP:
            self.while_op(op, region, ins)
            return
        if kind is FlowKind.BRANCH:
            self.branch_op(op, region, ins)
            return
        if kind is FlowKind.CALL:
            self.call_op(op, region, ins)
            return
        grid = DeviceGrid(region.mesh)
        col = decode_collective(op, region, grid)
        if col is not None:
            col = _with_loc(col, self.module)
            self.result.collectives[op] = col
            self.result.collective_regions.setdefault(op, region)
            out = self.collective(col, region, _union(*ins))
            for r in op.results:
                var[r] = out
            return
        if name == "stablehlo.partition_id" and region.free_axes:
            self.result.misplaced_partition_ids.append((op, region))
        value = eval_partition_arith(op, self.known, grid)
        if value is not None:
            self.known[op.results[0]] = value
            axes = [a for a in grid.varying_axes(value) if a in region.scope_axes]
            what = describe_axis_index(value, grid)
            if axes or op.name == "stablehlo.partition_id":
                self.result.axis_index[op.results[0]] = what
            var[op.results[0]] = {a: f"{what} ({op.name}{self.loc(op)})" for a in axes}
            return
        if kind is FlowKind.BARRIER and len(ins) == len(op.results):
            for r, v in zip(op.results, ins, strict=True):
                var[r] = dict(v)
            return
        if name == "stablehlo.replica_id":  # SPMD programs have one replica: always 0
            var[op.results[0]] = {}
            return
        out = _union(*ins)
        for r in op.results:
            var[r] = out

    def collective(self, col: Collective, region: ManualRegion, operand: Var) -> Var:
        why = f"{col.describe()}{self.loc(col.op)}"
        if col.axes is None:  # cannot tell: it may vary along everything bound here
            return _union(operand, {a: why for a in region.scope_axes})
        # only bound manual axes matter here; free axes (what sdy collectives act over) are
        # partitioned by XLA and never part of a value's variance
        bound = tuple(a for a in col.axes if a in region.scope_axes)
        if not bound:
            return dict(operand)
        if col.kind in ("all_reduce", "collective_broadcast") or (
            col.kind == "all_gather" and self.view is View.VALUE
        ):
            return {a: w for a, w in operand.items() if a not in bound}
        return _union(operand, {a: why for a in bound})

    def while_op(self, op: Operation, region: ManualRegion, ins: list[Var]) -> None:
        var = self.result.var
        cond, body = op.regions[0].entry, op.regions[1].entry
        carried = [dict(v) for v in ins]
        pred: Var = {}
        for _ in range(len(region.scope_axes) * max(len(carried), 1) + 2):
            for blk in (cond, body):
                for arg, v in zip(blk.args, carried, strict=False):
                    var[arg] = v
            self.block(cond, region)
            term = cond.terminator
            pred = dict(var.get(term.operands[0], {})) if term and term.operands else {}
            self.block(body, region)
            term = body.terminator
            returned = [var.get(v, {}) for v in (term.operands if term else [])]
            new = [_union(c, r) for c, r in zip(carried, returned, strict=False)]
            if [set(v) for v in new] == [set(v) for v in carried]:
                break
            carried = new
        why = {a: f"the trip count of stablehlo.while{self.loc(op)} varies ({w})"
               for a, w in pred.items()}
        for r, v in zip(op.results, carried, strict=False):
            var[r] = _union(v, why)

    def branch_op(self, op: Operation, region: ManualRegion, ins: list[Var]) -> None:
        var = self.result.var
        pred = ins[0] if ins else {}
        outs: list[Var] = [{} for _ in op.results]
        for reg in op.regions:
            blk = reg.entry
            self.block(blk, region)
            term = blk.terminator
            for j, v in enumerate(term.operands if term else []):
                if j < len(outs):
                    outs[j] = _union(outs[j], var.get(v, {}))
        why = {a: f"the branch taken by {op.name}{self.loc(op)} varies ({w})"
               for a, w in pred.items()}
        for r, v in zip(op.results, outs, strict=True):
            var[r] = _union(v, why)

    def call_op(self, op: Operation, region: ManualRegion, ins: list[Var]) -> None:
        var = self.result.var
        name = callee_name(op)
        callee = self.module.funcs.get(name)
        if callee is None or name in self.call_stack or not callee.regions:
            out = _union(*ins)
            for r in op.results:
                var[r] = out
            return
        body = callee.regions[0].entry
        for arg, v in zip(body.args, ins, strict=False):
            var[arg] = dict(v)
        self.call_stack.append(name)
        try:
            self.block(body, region)
        finally:
            self.call_stack.pop()
        term = body.terminator
        for r, v in zip(op.results, term.operands if term else [], strict=False):
            var[r] = dict(var.get(v, {}))


def _manual_dims(sharding, region: ManualRegion) -> tuple:  # type: ignore[no-untyped-def]
    return tuple(
        tuple(a for a in d.axes if a.name in region.manual_axes) for d in sharding.dims
    )


def _with_loc(col: Collective, module: Module) -> Collective:
    if col.location is not None:
        return col
    from dataclasses import replace

    return replace(col, location=module.resolve_loc(col.op.loc))


def analyze_variance(
    module: Module, view: View | str = View.VALUE, regions: list[ManualRegion] | None = None
) -> VarianceResult:
    """Run the variance analysis over every manual region of `module` (`regions`: those
    regions, when the caller has found them already)."""
    return _Analyzer(module, View(view), regions).run()


__all__ = ["View", "VarianceResult", "analyze_variance", "symbol_name"]
