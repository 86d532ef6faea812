"""The plan pass: every collective a propagated module implies, with its bytes, cause and fix.

Walks every func that runs (`runs.Runs`: how often, loop-invariant collectives hoisted out of
loops as XLA does) and every op that runs (`liveness.py`: XLA and Shardy's import delete the
rest), and per op:

* an op with a sharding rule: `op_cost.op_steps` (operands to the factor sharding the op is
  computed at, reductions, results back to their own sharding), in the "xla" model as XLA's
  partitioner computes it (docs/xla_partitioner.md), plus the halos of pads, slices, reverses
  and reduce_windows on a dim that stays split (`halo.py`);
* an op without a rule: as XLA partitions it (element-wise at its result's layout, else on
  whole operands);
* boundaries, where one value must take another's sharding: `sdy.sharding_constraint` /
  `sdy.reshard`, `func.call` arguments and results, `stablehlo.while` carries (init and body
  result vs the loop's), `stablehlo.case`/`if` branch results, `sdy.manual_computation` operands
  vs `in_shardings` (what a shard_map's in_specs cost) and body results vs `out_shardings`, and
  the func's own results vs their declared shardings;
* collectives written explicitly in a manual region (`stablehlo.all_reduce`, ...).

Shardings are read through `layout.py` only; causes and fix candidates come from `causes.py`
(fixes are evaluated by re-planning, `compiler/api_plan.evaluate_fixes`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shardc.dialect.data_flow import BRANCH_OPS, CALL, WALKED_FLOW_OPS, WHILE, entry_funcs
from shardc.dialect.ir import (
    Block,
    BlockArgument,
    Module,
    Operation,
    Value,
    callee_name,
    func_body,
)
from shardc.dialect.layout_math import (
    axes_layout,
    axes_size,
    dim_axes,
    local_shape,
    sharded_local_bytes,
)
from shardc.dialect.op_views import MANUAL_COMPUTATION, Func
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding
from shardc.dialect.types import TensorType
from shardc.dialect.value_names import value_names

from ..pin import Written
from ..pin_hazards import PIN_HAZARDS, XLA_OWN_HAZARDS, pinnable
from ..propagation.call_sites import MARK
from . import layout
from .causes import Causes, dims_text
from .common_axes import common_axes
from .cost import ALL_REDUCE, ALL_TO_ALL, Step, reshard_steps, sort_axes
from .fixes import Candidate
from .halo import halo_rows, source_of
from .liveness import Liveness, liveness, shardy_liveness
from .memory import (
    POINTER,
    Buffers,
    aligned,
    fusible_result,
    is_argument_of,
    memory_estimate,
    tensor_of,
)
from .naming import source_op_name
from .op_cost import OpSteps, Tensor, op_steps, project_tensor
from .report import Collective, Memory, Plan, axis_text
from .runs import Runs
from .steps import ALL_GATHER, ALL_SLICE
from .trip_count import constant_int

# ops whose value is a compile-time constant: XLA materializes it in any layout, no reshard
_CONSTANT_OPS = frozenset({"stablehlo.constant", "sdy.constant", "stablehlo.iota"})
_CONSTANT_EXPR_OPS = frozenset(
    {
        "stablehlo.broadcast_in_dim",
        "stablehlo.reshape",
        "stablehlo.convert",
        "stablehlo.transpose",
        "stablehlo.add",
        "stablehlo.multiply",
        "stablehlo.subtract",
        "stablehlo.divide",
        "stablehlo.negate",
        "stablehlo.compare",
        "stablehlo.select",
        "stablehlo.and",
        "stablehlo.or",
    }
)
_BOUNDARY_OPS = frozenset({"sdy.sharding_constraint", "sdy.reshard", "func.return", *WALKED_FLOW_OPS})
# ops XLA's partitioner (jaxlib 0.10.2, CPU) runs replicated whatever their sharding: it gathers
# every operand whole (seen on the differential suite: top_k, rfft); the "xla" model plans so
_XLA_REPLICATED = frozenset({"chlo.top_k", "stablehlo.fft"})
# ops whose need-replication dim XLA gathers (Shardy moves its axes to a batch dim)
_XLA_GATHERS_NEED_REPLICATION = frozenset(
    {"stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"}
)
_RETURNS = frozenset({"func.return", "stablehlo.return"})
# the collectives that sum partial results (a reshard back to the partial form is no layout)
_REDUCING = frozenset({"all-reduce", "reduce-scatter"})


# ops XLA's dot handler partitions (`xla_dot.py`)
_DOTS = frozenset({"stablehlo.dot_general", "stablehlo.dot"})
# ops whose rows move along a dim: XLA exchanges halos where that dim stays sharded
_HALO_OPS = frozenset(
    {"stablehlo.pad", "stablehlo.slice", "stablehlo.reverse", "stablehlo.reduce_window"}
)
# ops XLA partitions at their result's layout (`ReshardAsWindowedInput` with the op's own
# sharding): the operand is resharded to it whole, then halos are exchanged
_WINDOWED_AT_RESULT = frozenset({"stablehlo.slice", "stablehlo.pad"})
# what-if plans per module (each is one more plan of the whole module)
_WHAT_IF_LIMIT = 16
_EXPLICIT = {
    "stablehlo.all_reduce": "all-reduce",
    "stablehlo.all_gather": "all-gather",
    "stablehlo.reduce_scatter": "reduce-scatter",
    "stablehlo.all_to_all": "all-to-all",
    "stablehlo.collective_permute": "collective-permute",
    "stablehlo.collective_broadcast": "collective-permute",
}


@dataclass(frozen=True)
class Rewrite:
    """Where an explicit form reshards: before `op`'s operand `index` (`where="operand"`) or
    after its result `index` (`"result"`, which the op then computes at `start`), from layout
    `start` through `steps` (see `explicit.py`)."""

    op: Operation
    where: str
    index: int
    start: TensorSharding
    mesh: str | Mesh | None
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class PlanOptions:
    """Options of the plan pass."""

    fixes: bool = True  # compute each fix's alternative cost (a few op-cost evaluations each)
    # "xla": element-wise ops computed at their result's layout, as XLA partitions the pinned
    # export; "shardy": every op at Shardy's explicit-reshard choice (the agreement check)
    model: str = "xla"


def plan_module(module: Module, origins: object = None, options: PlanOptions | None = None) -> Plan:
    """The plan of a propagated `module`; `origins` is the propagation's `OriginRecorder`
    (from `PropagationOptions(debug_origins=True)`), used for causes when given."""
    return _Planner(module, origins, options or PlanOptions()).run()


def plan_with_rewrites(
    module: Module,
    origins: object = None,
    options: PlanOptions | None = None,
    written: Written | None = None,
    relaid: dict[int, TensorSharding | None] | None = None,
) -> tuple[Plan, list[Rewrite]]:
    """The plan and where each of its reshards sits in the IR (for `explicit.py`); `written`:
    the module's annotations as its author wrote them (what the compiled form keeps of the
    callees' result shardings); `relaid`: the values (by id) given XLA's own layout in place
    of the propagated one, and that one (the causes say so; `Causes`)."""
    planner = _Planner(module, origins, options or PlanOptions(), written, relaid)
    return planner.run(), planner.rewrites


class _Planner:
    def __init__(
        self,
        module: Module,
        origins: object,
        options: PlanOptions,
        written: Written | None = None,
        relaid: dict[int, TensorSharding | None] | None = None,
    ):
        self.module = module
        self.written = written
        self.options = options
        self.names = value_names(module)
        self.entries = set(entry_funcs(module))
        self.causes = Causes(module, self.names, origins, self.entries, relaid)
        self.plan = Plan()
        self.const: dict[int, bool] = {}
        self.xla = options.model == "xla"  # constants are free, reshards of a value shared
        self.funcs = module.funcs
        self.meshes = module.meshes
        self.func = ""
        self.inlined: set[str] = set()  # callees XLA inlines (`_inlined_callees`)
        # (block, value, target dims, dot device group) of reshards already planned: XLA
        # computes a reshard of one value to one layout once and reuses it for every use in
        # the block (its reshard cache; a dot's device group has a cache of its own)
        self.done: dict[
            tuple[int, int, tuple[DimSharding, ...], frozenset[AxisRef]], Operation
        ] = {}
        # the ops that reuse a reshard made at an op (by id): its buffer lives until the last
        self.reused: dict[int, list[Operation]] = {}
        self.kept: dict[int, int] = {}  # of an op's reshard bytes, what those reuses read
        # reduce_window ops whose window spans a dim: those dims (XLA gathers them)
        self.full_windows: dict[int, set[int]] = {}
        # where an explicit form reshards: every planned reshard, in program order
        self.rewrites: list[Rewrite] = []
        # values partitioned with another sharding than they carry (func arguments, by export)
        self.override: dict[int, TensorSharding] = {}
        # what runs (XLA deletes the rest, and Shardy's import before it)
        self.live: Liveness = liveness(module) if self.xla else shardy_liveness(module)
        # the collectives' buffers at each op and the values they read (for the memory)
        self.buffers: dict[int, int] = {}
        self.gathered: set[int] = set()
        self.early: dict[int, int] = {}  # of those bytes at an op, the entry arguments' reshards
        # the copies XLA makes of values gathered at an op (`gather_copy`), and which
        # (op, value) pairs they are
        self.copies: dict[int, int] = {}
        self.copied: set[tuple[int, int]] = set()
        self.sliced: dict[int, list[tuple[Value, int]]] = {}  # (`Buffers.sliced`)
        self.entry = False  # the func being planned is an entry
        # how often each collective runs (loop-invariant ones hoisted out, as XLA does)
        self.runs = Runs(module, self.live, hoist=self.xla)

    # -- driver --------------------------------------------------------------------------------
    def run(self) -> Plan:
        callees = self._callees()
        # one call site per callee (the compiled form's): XLA inlines it (`_inlined`)
        self.inlined = self._inlined_callees() if self.xla else set()
        for name, func in self._callers_first(callees):
            body = func_body(func)
            if body is None or self.runs.func_runs(name) == 0:
                continue
            self.func = name
            main = Func(func).is_entry(callees)
            self.entry = name not in callees
            for a in body.args:
                self._io_override(a, layout.value_sharding(a), main)
            self._block(body, manual=frozenset())
            self._func_results(func, main)
        roots = [f for n, f in self.funcs.items() if n not in callees]
        self.plan.memory = memory_estimate(
            self.module,
            roots,
            self._mesh,
            self.live,
            Buffers(
                self.buffers,
                self.gathered,
                self.reused,
                self.kept,
                self.early,
                self.copies,
                self.copied,
                self.sliced,
            ),
        )
        return self.plan

    def _callees(self) -> set[str]:
        out: set[str] = set()
        for func in self.funcs.values():
            for op in func.walk():
                if op.name == CALL:
                    out.add(callee_name(op))
        return out

    def _inlined_callees(self) -> set[str]:
        """The callees with one call site: XLA's call inliner copies the callee's body into
        the caller, so its arguments are the call's operands and the call's results the values
        it returns, each at its own layout (no reshard at the call: its users reshard what they
        need)."""
        sites: dict[str, int] = {}
        for func in self.funcs.values():
            for op in func.walk():
                if op.name == CALL:
                    sites[callee_name(op)] = sites.get(callee_name(op), 0) + 1
        return {name for name, n in sites.items() if n == 1 and name in self.funcs}

    def _callers_first(self, callees: set[str]) -> list[tuple[str, Operation]]:
        """The funcs, each caller before its callees (an inlined callee's arguments take their
        layouts from the call, which must be planned first)."""
        order: list[str] = []
        seen: set[str] = set()

        def visit(name: str) -> None:
            if name in seen or name not in self.funcs:
                return
            seen.add(name)
            order.append(name)
            for op in self.funcs[name].walk():
                if op.name == CALL:
                    visit(callee_name(op))

        for name in self.funcs:
            if name not in callees:
                visit(name)
        for name in self.funcs:
            visit(name)
        return [(name, self.funcs[name]) for name in order]

    # -- walking -------------------------------------------------------------------------------
    def _block(self, block: Block, manual: frozenset[str]) -> None:
        for op in block.ops:
            if not self._runs(op):
                self.plan.dead_ops += 1
                continue
            self._op(op, manual)
            if not op.regions:
                continue
            inner_manual = manual
            if op.name == MANUAL_COMPUTATION:
                inner_manual = manual | set(layout.manual_axes(op))
            for region in op.regions:
                for b in region.blocks:
                    self._block(b, inner_manual)

    def _op(self, op: Operation, manual: frozenset[str]) -> None:
        name = op.name
        if self.xla and name in PIN_HAZARDS and name not in XLA_OWN_HAZARDS:
            # (an XLA_OWN_HAZARDS op is pinned safe only where XLA's own layout keeps it whole)
            self._made_safe(op)
        if name in _EXPLICIT:
            self._explicit(op, manual)
        elif name in ("sdy.sharding_constraint", "sdy.reshard"):
            callee = _call_result_reshard(op)
            self._boundary(
                op,
                op.operands[0],
                layout.constraint_sharding(op),
                op.results[0],
                "constraint" if callee is None else f"call result of @{callee}",
                site=(op, "operand", 0),
                label=None if callee is None else "the call's own sharding",
            )
        elif name == CALL:
            self._call(op)
        elif name == WHILE:
            self._while(op)
        elif name in BRANCH_OPS:
            for region in op.regions:
                ret = region.entry.terminator if region.blocks else None
                if ret is None:
                    continue
                for i, r in enumerate(op.results):
                    if i < len(ret.operands) and self._value_runs(r):
                        self._boundary(
                            op,
                            ret.operands[i],
                            layout.value_sharding(r),
                            r,
                            "branch result",
                            site=(ret, "operand", i),
                        )
        elif name == MANUAL_COMPUTATION:
            self._manual(op)
        elif name in _BOUNDARY_OPS or name in _CONSTANT_OPS:
            return
        else:
            rule = layout.op_rule(op)
            if rule is not None:
                self._rule_op(op, rule)
            elif self.xla and op.results and not op.regions:
                self._ruleless(op)

    # -- ops with rules ------------------------------------------------------------------------
    def _mesh(self, s: TensorSharding | None) -> Mesh | None:
        return layout.mesh_of(self.module, s)

    def _op_mesh(self, values: list[Value]) -> Mesh | None:
        mesh: Mesh | None = None
        for v in values:
            m = self._mesh(layout.value_sharding(v))
            if m is None or not m.axes:
                continue
            if mesh is None:
                mesh = m
            elif m != mesh:
                return None
        return mesh

    def _rule_op(self, op: Operation, rule: OpShardingRule) -> None:
        if len(rule.operand_dims) != len(op.operands) or len(rule.result_dims) != len(op.results):
            return
        values = [*op.operands, *op.results]
        mesh = self._op_mesh(values)
        if mesh is None:
            return
        tensors = [self._tensor(v) for v in values]
        if any(t is None for t in tensors):
            return
        ts: list[Tensor] = tensors  # type: ignore[assignment]
        if not any(d.axes for t in ts for d in t.sharding.dims) and not any(
            t.unreduced for t in ts
        ):
            return
        skip = frozenset(i for i, v in enumerate(op.operands) if self._is_constant(v) and self.xla)
        common = None
        if self.xla and op.name in _XLA_REPLICATED:
            common = [()] * rule.num_factors
        elif self.xla and op.name == "stablehlo.reduce_window":
            common = self._full_window_replicated(op, rule, ts, mesh)
        elif self.xla and op.name == "stablehlo.dynamic_update_slice":
            common = self._update_gathered(op, rule, ts, mesh)
        elif self.xla and op.name == "stablehlo.dynamic_slice":
            common = self._slice_at_result(op, rule, ts[0], ts[len(op.operands)])
        elif self.xla and op.name in _WINDOWED_AT_RESULT:
            common = _result_factors(rule, ts[len(op.operands)])
        move = not (self.xla and op.name in _XLA_GATHERS_NEED_REPLICATION)
        steps = op_steps(
            rule, ts, mesh, common, skip, style=self.options.model, move=move, dot=op.name in _DOTS
        )
        if self.xla and op.name in _HALO_OPS:
            self._halos(op, ts, steps, mesh)
        for i, st in enumerate(steps.operands):
            group = steps.groups[i] if i < len(steps.groups) else frozenset()
            if st and self._first(op, op.operands[i], steps.computed[i], group):
                cause, cands = self.causes.operand(op, i, rule, ts, steps, mesh)
                full = self.full_windows.get(id(op), set())
                have = ts[i].sharding.dims
                gathered = [d for d in full if i == 0 and have[d].axes]
                if gathered:
                    d = gathered[0]
                    cause = (
                        f"{self.causes.dim(op.operands[i], d, have[d].axes)}, but the window "
                        f"of {op.name} spans all of dim {d}: XLA needs it as "
                        f"{dims_text(steps.computed[i])}"
                    )
                self._emit(st, op.operands[i], op, cause, cands)
                ref = self._ref(op)
                self.rewrites.append(Rewrite(op, "operand", i, ts[i].sharding, ref, st))
        n = len(op.operands)
        for j, st in enumerate(steps.results):
            if not st or not self._value_runs(op.results[j]):
                continue
            if self.xla and not any(s.kind in _REDUCING for s in st):
                # XLA's partitioner keeps the result as computed beside its resharded form:
                # a later use that needs it as computed reads that, with no collective
                none: frozenset[AxisRef] = frozenset()
                self.done.setdefault(
                    (id(op.parent), id(op.results[j]), steps.computed[n + j].dims, none), op
                )
            self.rewrites.append(Rewrite(op, "result", j, steps.computed[n + j], self._ref(op), st))
            for k, s in enumerate(st):
                if s.kind in _REDUCING and all(x.kind in _REDUCING for x in st[:k]):
                    cause, cands = self.causes.reduction(op, rule, ts, steps, mesh)
                else:
                    cause, cands = self.causes.result(op, j, rule, ts, steps, mesh)
                self._emit([s], op.results[j], op, cause, cands)

    def _full_window_replicated(
        self, op: Operation, rule: OpShardingRule, ts: list[Tensor], mesh: Mesh
    ) -> list[tuple[AxisRef, ...]] | None:
        """XLA gathers a dim whose window spans all of it (a cumsum): its halo is the whole
        dim. The factors of such dims are computed unsharded, the rest as Shardy would."""
        m = re.search(r"array<i64:([^>]*)>", str(op.attr("window_dimensions", "")))
        shape = ts[0].shape
        if m is None or not shape:
            return None
        window = [int(x) for x in m.group(1).split(",") if x.strip()]
        full = {d for d, w in enumerate(window) if d < len(shape) and w >= shape[d] > 1}
        if not full:
            return None
        self.full_windows[id(op)] = full
        all_dims = (*rule.operand_dims, *rule.result_dims)
        projs = [project_tensor(t, all_dims[i], rule, mesh) for i, t in enumerate(ts)]
        common = common_axes(projs, rule, [t.num_elements for t in ts], mesh, results_win=True)
        for d in full:
            for f in rule.operand_dims[0][d]:
                if rule.kinds[f] == FactorKind.PERMUTATION:
                    common[f] = ()
        return common

    def _slice_at_result(
        self, op: Operation, rule: OpShardingRule, operand: Tensor, result: Tensor
    ) -> list[tuple[AxisRef, ...]]:
        """XLA's `HandleDynamicSlice`: where the result splits only dims the slice takes whole
        (their start clamped to zero), the operand is resharded to the result's layout and
        sliced locally (an axis moving off a sliced dim is an all-to-all, not a gather); where
        it splits a sliced dim, the op is computed on the whole operand (every dim gathered)
        and the result sliced from it."""
        common: list[tuple[AxisRef, ...]] = [()] * rule.num_factors
        for d, factors in enumerate(rule.result_dims[0]):
            axes = tuple(result.sharding.dims[d].axes) if d < len(result.sharding.dims) else ()
            if not axes or len(factors) != 1:
                continue
            # a dim taken whole starts at 0 whatever its start index (XLA clamps it)
            if d >= len(operand.shape) or result.shape[d] != operand.shape[d]:
                return [()] * rule.num_factors
            common[factors[0]] = axes
        return common

    def _update_gathered(
        self, op: Operation, rule: OpShardingRule, ts: list[Tensor], mesh: Mesh
    ) -> list[tuple[AxisRef, ...]] | None:
        """XLA's `HandleDynamicUpdateSlice` partitions the op at its result's layout (the
        operand and the update are resharded to it). It writes the update in place only where,
        along every dim the update does not span, the update lands within one block of that
        layout: one row, or a constant start index whose rows all fall in one block. Along any
        other split dim (several rows from a start index computed at run time, or rows across
        a block boundary) it gathers the operand whole, updates it and slices the result back.
        The result's factors, those dims' unsharded. A result an inlined callee returns
        without a written sharding has no layout of its own in the compiled form (its users
        decide): there the operand's layout decides, and the other factors are Shardy's."""
        result = ts[len(op.operands)]
        at_result = not self._inlined_return(op.results[0])
        at = result if at_result else ts[0]
        shape, update = ts[0].shape, ts[1].shape
        gathered = []
        for d, size in enumerate(shape):
            shards = 1
            for a in at.sharding.dims[d].axes if d < len(at.sharding.dims) else ():
                shards *= a.size(mesh)
            if d >= len(update) or update[d] == size or shards == 1:
                continue
            if update[d] == 1:
                continue  # one row lands in one block wherever it starts
            start = constant_int(op.operands[2 + d]) if 2 + d < len(op.operands) else None
            if start is not None:
                start = min(max(start, 0), size - update[d])  # XLA clamps the start index
                rows = -(-size // shards)
                if start // rows == (start + update[d] - 1) // rows:
                    continue
            gathered.append(d)
        if at_result:
            common = _result_factors(rule, result)
        elif gathered:
            all_dims = (*rule.operand_dims, *rule.result_dims)
            projs = [project_tensor(t, all_dims[i], rule, mesh) for i, t in enumerate(ts)]
            sizes = [t.num_elements for t in ts]
            common = common_axes(projs, rule, sizes, mesh, results_win=True, move=False)
        else:
            return None
        for d in gathered:
            for f in rule.operand_dims[0][d]:
                common[f] = ()
        return common

    def _inlined_return(self, v: Value) -> bool:
        """Whether `v` is returned by a callee XLA inlines, at a result its author wrote no
        sharding for (the compiled form gives it none: the caller's users decide)."""
        if self.func not in self.inlined:
            return False
        for u in v.users:
            if u.name == "func.return":
                for i, o in enumerate(u.operands):
                    if o is v and self._written_result(self.func, i) is None:
                        return True
        return False

    def _halos(self, op: Operation, ts: list[Tensor], steps: OpSteps, mesh: Mesh) -> None:
        """The halo exchanges XLA adds where a pad, slice, reverse or reduce_window moves
        rows along a dim that stays sharded (`halo.py`)."""
        n = len(op.operands)
        src, dst = ts[0], ts[n]
        computed = steps.computed[0]
        have, out = dim_axes(computed, len(src.shape)), dim_axes(steps.computed[n], len(dst.shape))
        for d in range(min(len(src.shape), len(dst.shape))):
            if not have[d] or have[d] != out[d]:
                continue
            source = source_of(op, d, src.shape[d])
            if source is None:
                continue
            devices = axes_size(have[d], mesh)
            rows = halo_rows(source, src.shape[d], dst.shape[d], devices)
            if not rows:
                continue
            block = sharded_local_bytes(src.shape, src.elem_bytes, computed, mesh)
            per_row = block // max(-(-src.shape[d] // devices), 1)
            cause = (
                f"{op.name} moves rows of dim {d} across the devices it is split over "
                f"({axis_text_list(have[d])}): XLA exchanges halos with its neighbours"
            )
            halo = [Step("collective-permute", have[d], r * per_row, computed) for r in rows]
            self._emit(halo, op.operands[0], op, cause, ())

    def _ruleless(self, op: Operation) -> None:
        """An op without a sharding rule, as XLA computes it: an element-wise op (every operand
        and result of one shape, `chlo.square`) where its operands are (XLA's own propagation
        knows it, and the compiled form leaves it to it): nothing moves; any other op on whole
        operands (each gathered), its result sliced to its layout for free."""
        shapes = {getattr(v.type, "shape", None) for v in (*op.operands, *op.results)}
        if len(shapes) == 1 and len(op.results) == 1:
            return
        why = f"{op.name} has no sharding rule: XLA computes it on whole operands"
        for i, v in enumerate(op.operands):
            self._boundary(op, v, None, f"operand {i} of {op.name}", why, site=(op, "operand", i))

    def _boundary(
        self,
        op: Operation,
        src: Value,
        dst: TensorSharding | None,
        holder: object,
        what: str,
        src_sharding: TensorSharding | None = None,
        site: tuple[Operation, str, int] | None = None,
        shown: Value | None = None,
        label: str | None = None,
    ) -> None:
        """`src` (sharded as `src_sharding`, default its own) must take sharding `dst` (the
        sharding of `holder`) at `op`; `site` is where an explicit form reshards it (an operand
        of an op, or a result after it); `shown` the value the entry names (default `src`);
        `label` the holder's name in the cause (default the IR's)."""
        if self._is_constant(src) and self.xla:
            return
        s = src_sharding if src_sharding is not None else self._sharding(src)
        mesh = self._mesh(s) or self._mesh(dst)
        if mesh is None or not mesh.axes:
            return
        if dst is not None and self._mesh(dst) not in (None, mesh):
            return
        t = tensor_of(src, s)
        if t is None:
            return
        want = _layout(dst, len(t.shape), mesh)
        steps = reshard_steps(t.shape, t.elem_bytes, t.sharding, want, mesh, self.options.model)
        unreduced = tuple(a for a in t.unreduced if dst is None or a not in dst.unreduced)
        if unreduced:
            steps.insert(
                0,
                Step(
                    ALL_REDUCE,
                    sort_axes(list(unreduced), mesh),
                    sharded_local_bytes(t.shape, t.elem_bytes, t.sharding, mesh),
                    t.sharding,
                ),
            )
        if not steps or not self._first(op, src, want):
            return
        cause, cands = self.causes.boundary(src, holder, t.sharding, want, what, dst, label)
        at = site[0] if site is not None and site[0].name == "stablehlo.return" else op
        self._emit(steps, shown if shown is not None else src, op, cause, cands, at=at)
        if site is not None:
            ref = (s.mesh if s is not None else None) or (dst.mesh if dst is not None else None)
            self.rewrites.append(
                Rewrite(site[0], site[1], site[2], t.sharding, ref, tuple(steps))
            )

    def _call(self, op: Operation) -> None:
        callee = self.funcs.get(callee_name(op))
        body = func_body(callee) if callee is not None else None
        if callee is None or body is None:
            return
        if callee_name(op) in self.inlined:
            self._inline(op, body)
            return
        for i, v in enumerate(op.operands):
            if i < len(body.args) and self._value_runs(body.args[i]):
                arg = body.args[i]
                self._boundary(
                    op,
                    v,
                    layout.value_sharding(arg),
                    arg,
                    "call argument",
                    site=(op, "operand", i),
                )
        ret = body.terminator
        for i, r in enumerate(op.results):
            src = ret.operands[i] if ret is not None and i < len(ret.operands) else None
            if src is None or not self._value_runs(r):
                continue
            declared = layout.declared_result_sharding(callee, i)
            self._boundary(
                op,
                src,
                layout.value_sharding(r),
                r,
                "call result",
                declared,
                site=(op, "result", i),
                shown=r,
            )

    def _made_safe(self, op: Operation) -> None:
        """A result laid out where XLA's partitioner gets the op wrong (`pin_hazards`): the
        compiled form pins it with those dims whole, so the op is computed, and its users read
        it, at that safe layout."""
        for r in op.results:
            s = self._sharding(r)
            if s is not None:
                safe = pinnable(op, s)
                if safe is not s:
                    self.override[id(r)] = safe

    def _inline(self, op: Operation, body: Block) -> None:
        """A call XLA inlines: the callee's arguments are partitioned as the call's operands
        are, the call's results as the values the callee returns."""
        for i, v in enumerate(op.operands):
            if i < len(body.args):
                s = self._sharding(v)
                if s is not None:
                    self.override[id(body.args[i])] = s
        ret = body.terminator
        callee = callee_name(op)
        for i, r in enumerate(op.results):
            declared = self._written_result(callee, i)
            if declared is None and ret is not None and i < len(ret.operands):
                declared = self._sharding(ret.operands[i])
            if declared is not None:
                self.override[id(r)] = declared

    def _written_result(self, func: str, index: int) -> TensorSharding | None:
        """The sharding the author wrote on result `index` of `func` (of the func a call
        site's copy was made from): the compiled form keeps it (XLA constrains the inlined
        value to it); None where none was written, or nothing says."""
        if self.written is None:
            return None
        source, seen = func, set()
        while source not in self.written.entries and source not in seen:
            seen.add(source)
            f = self.funcs.get(source)
            mark = f.attributes.get(MARK) if f is not None else None
            if mark is None:
                return None
            source = str(mark).strip('"')
        results = self.written.entries.get(source, ((), ()))[1]
        return results[index] if index < len(results) else None

    def _while(self, op: Operation) -> None:
        body = op.regions[1].entry if len(op.regions) > 1 else None
        ret = body.terminator if body is not None else None
        for i, r in enumerate(op.results):
            if self.live is not None and not self.live.carry_live(op, i):
                continue
            carry = layout.value_sharding(r)
            # XLA's loop has one layout per carry: its block arguments are partitioned so
            for region in op.regions:
                if carry is not None and region.blocks and i < len(region.entry.args):
                    self.override[id(region.entry.args[i])] = carry
            if i < len(op.operands):
                self._boundary(
                    op,
                    op.operands[i],
                    carry,
                    r,
                    "loop carry (init)",
                    site=(op, "operand", i),
                )
            if ret is not None and i < len(ret.operands):
                self._boundary(
                    op,
                    ret.operands[i],
                    carry,
                    r,
                    "loop carry (body)",
                    site=(ret, "operand", i),
                )

    def _manual(self, op: Operation) -> None:
        ins = layout.manual_in_shardings(op)
        body = op.regions[0].entry if op.regions and op.regions[0].blocks else None
        for i, v in enumerate(op.operands):
            if body is not None and i < len(body.args) and not self._value_runs(body.args[i]):
                continue
            if i < len(ins):
                holder = f"in_shardings[{i}] of {op.name}"
                self._boundary(op, v, ins[i], holder, "shard_map in_specs", site=(op, "operand", i))
        ret = body.terminator if body is not None else None
        if not self.xla or ret is None:
            return
        # XLA reshards each body result to its out_sharding's free (non-manual) axes
        manual = set(layout.manual_axes(op))
        outs = layout.manual_out_shardings(op)
        for j, (v, out) in enumerate(zip(ret.operands, outs, strict=False)):
            if j < len(op.results) and not self._value_runs(op.results[j]):
                continue
            free = axes_layout(out.mesh, ([a for a in d.axes if a.name not in manual]
                                          for d in out.dims))  # fmt: skip
            self._boundary(ret, v, free, f"out_shardings[{j}] of {op.name}", "shard_map out_specs",
                           src_sharding=self._body_arg_sharding(v))  # fmt: skip

    def _io_override(self, v: Value, s: TensorSharding | None, main: bool) -> None:
        """A func argument is partitioned as the export writes it (see `layout.io_sharding`)."""
        t = v.type
        if s is None or not isinstance(t, TensorType):
            return
        fixed = layout.io_sharding(s, t.shape, self._mesh(s), main)
        if fixed is not None and fixed != s:
            self.override[id(v)] = fixed

    def _func_results(self, func: Operation, main: bool) -> None:
        body = func_body(func)
        if body is None or body.terminator is None:
            return
        ret = body.terminator
        inlined = self.func in self.inlined
        for i, v in enumerate(ret.operands):
            # an inlined callee's result is constrained only where its author wrote a sharding
            declared = (
                self._written_result(self.func, i)
                if inlined
                else layout.declared_result_sharding(func, i)
            )
            t = v.type
            if declared is None or not isinstance(t, TensorType):
                continue
            declared = layout.io_sharding(declared, t.shape, self._mesh(declared), main)
            self._boundary(
                ret,
                v,
                declared,
                f"@{self.func} result {i}",
                "func result",
                site=(ret, "operand", i),
            )

    # -- explicit collectives in manual regions ------------------------------------------------
    def _explicit(self, op: Operation, manual: frozenset[str]) -> None:
        kind = _EXPLICIT[op.name]
        if self.xla:
            self._free_axes_gathered(op)
        biggest = 0
        for v in (op.operands, op.results):
            total = 0
            for x in v:
                t = tensor_of(x)
                if t is None:
                    continue
                mesh = self._mesh(layout.value_sharding(x))
                total += (
                    sharded_local_bytes(t.shape, t.elem_bytes, t.sharding, mesh)
                    if mesh and not self.xla
                    else (t.elem_bytes * t.num_elements)
                )
            biggest = max(biggest, total)
        axes = self._group_axes(op, manual)
        trips = self.runs.runs(op, list(op.operands))
        self.plan.collectives.append(
            Collective(
                kind,
                axes,
                biggest * trips,
                self.func,
                self.names.get(id(op.results[0]), "?") if op.results else "?",
                op.name,
                self.module.resolve_loc(op.loc),
                "written in the program (a collective of a shard_map body)",
                "",
                trips,
                written=True,
                source=source_op_name(self.module, op),
            )
        )

    def _free_axes_gathered(self, op: Operation) -> None:
        """XLA partitions a collective written in a shard_map body on the whole value of the
        free (non-manual) axes: an operand the body splits on free axes is gathered first,
        and the collective moves the body's whole block."""
        for x in op.operands:
            t = tensor_of(x, self._body_arg_sharding(x))
            mesh = self._mesh(t.sharding) if t is not None else None
            if t is None or mesh is None or not any(d.axes for d in t.sharding.dims):
                continue
            whole = TensorSharding.replicated_of(t.sharding.mesh, len(t.shape))
            steps = reshard_steps(t.shape, t.elem_bytes, t.sharding, whole, mesh)
            if steps:
                cause = (
                    f"{self.causes.name(x)} is {dims_text(t.sharding)} in a shard_map body: XLA "
                    f"computes {op.name} on the body's whole block of it"
                )
                self._emit(steps, x, op, cause, ())

    def _body_arg_sharding(self, v: Value) -> TensorSharding | None:
        """A shard_map body argument's layout on the free axes (its in_sharding without the
        manual axes); None for any other value (it carries its own)."""
        region = v.block.parent if isinstance(v, BlockArgument) else None
        owner = region.parent if region is not None else None
        if owner is None or owner.name != MANUAL_COMPUTATION:
            return None
        ins = layout.manual_in_shardings(owner)
        if v.index >= len(ins):
            return None
        manual = set(layout.manual_axes(owner))
        s = ins[v.index]
        return axes_layout(s.mesh, ([a for a in d.axes if a.name not in manual] for d in s.dims))

    def _group_axes(self, op: Operation, manual: frozenset[str]) -> tuple[str, ...]:
        """The mesh axes along which the devices of one replica group differ."""
        mesh = next(iter(m for m in self.meshes.values() if m.axes), None)
        raw = str(op.attr("replica_groups", "") or op.attr("source_target_pairs", ""))
        m = re.search(r"\[\[([\d,\s]+)\]", raw)
        if mesh is None or not m:
            return tuple(a for a in (mesh.axis_names if mesh else ()) if a in manual)
        group = [int(x) for x in m.group(1).split(",") if x.strip()]
        sizes = [a.size for a in mesh.axes]

        def coords(dev: int) -> list[int]:
            out = []
            for s in reversed(sizes):
                out.append(dev % s)
                dev //= s
            return out[::-1]

        cs = [coords(d) for d in group]
        return tuple(a.name for k, a in enumerate(mesh.axes) if len({c[k] for c in cs}) > 1)

    # -- helpers -------------------------------------------------------------------------------
    def _runs(self, op: Operation) -> bool:
        """Whether `op` runs in the compiled program (always, in Shardy's model)."""
        return self.live is None or self.live.op_live(op)

    def _value_runs(self, v: Value) -> bool:
        return self.live is None or self.live.value_live(v)

    def _ref(self, op: Operation) -> str | Mesh | None:
        """The mesh reference (`"mesh"` for `@mesh`) the op's shardings use."""
        for v in (*op.operands, *op.results):
            s = self._sharding(v)
            if s is not None and self._mesh(s) is not None and self._mesh(s).axes:  # type: ignore[union-attr]
                return s.mesh
        return None

    def _sharding(self, v: Value) -> TensorSharding | None:
        s = self.override.get(id(v))
        return s if s is not None else layout.value_sharding(v)

    def _tensor(self, v: Value) -> Tensor | None:
        return tensor_of(v, self._sharding(v))

    def _first(
        self, op: Operation, v: Value, target: TensorSharding, group: frozenset[AxisRef] = frozenset()
    ) -> bool:
        """Whether this is the first reshard of `v` to layout `target` in `op`'s block (within
        a dot's device `group`: XLA caches a group's reshards apart, per grouping)."""
        if self.options.model != "xla":
            return True  # Shardy reshards per use
        key = (id(op.parent), id(v), target.dims, group)
        anchor = self.done.get(key)
        if anchor is not None:  # XLA reuses the reshard made there: its buffer lives on
            self.reused.setdefault(id(anchor), []).append(op)
            return False
        self.done[key] = op
        return True

    def _is_constant(self, v: Value) -> bool:
        key = id(v)
        hit = self.const.get(key)
        if hit is not None:
            return hit
        owner = getattr(v, "owner", None)
        result = False
        if owner is not None:
            if owner.name in _CONSTANT_OPS:
                result = True
            elif owner.name in _CONSTANT_EXPR_OPS and owner.operands:
                result = all(self._is_constant(x) for x in owner.operands)
        self.const[key] = result
        return result

    def _emit(
        self,
        steps: list[Step] | tuple[Step, ...],
        value: Value,
        op: Operation,
        cause: str,
        candidates: tuple[Candidate, ...],
        at: Operation | None = None,
    ) -> None:
        """The collectives of resharding `value` at `op` (where it runs: `at`, default `op`),
        each counted as often as XLA runs it (`runs.Runs`)."""
        trips = self.runs.runs(at if at is not None else op, [value])
        where = id(at if at is not None else op)
        returned = any(u.name in _RETURNS for u in value.users)
        moved = collective_buffer(steps, self._mesh(steps[-1].after) if steps else None, returned)
        self.buffers[where] = self.buffers.get(where, 0) + moved
        t = tensor_of(value)
        mesh = self._mesh(steps[-1].after) if steps else None
        if t is not None and mesh is not None:
            copy = gather_copy(steps, t.sharding, t.shape, t.elem_bytes, mesh, op.name)
            if copy:
                self.copies[where] = self.copies.get(where, 0) + copy
                self.copied.add((where, id(value)))
        early = (
            self.entry
            and bool(steps)
            and all(s.kind == ALL_GATHER for s in steps)
            and is_argument_of(value, (at or op).parent)
        )
        if early:
            self.early[where] = self.early.get(where, 0) + moved
        # what outlives the op where a later use reuses the reshard: its result alone (an
        # all-to-all's per-peer pieces are freed once the result is assembled from them)
        if t is not None and mesh is not None and moved > 0:
            kept = sharded_local_bytes(t.shape, t.elem_bytes, steps[-1].after, mesh)
            self.kept[where] = self.kept.get(where, 0) + min(kept, moved)
        fused = getattr(value, "owner", None) is not None and fusible_result(value, self.funcs)
        if fused and all(s.kind == ALL_SLICE for s in steps):
            # (the producer fuses into the dynamic slice: the slice is the buffer)
            if t is not None and mesh is not None and self.xla:
                nbytes = sharded_local_bytes(t.shape, t.elem_bytes, steps[-1].after, mesh)
                self.sliced.setdefault(where, []).append((value, nbytes))
        elif not (fused and early):
            # (what XLA gathers at the start reads its operand there, not at the op)
            self.gathered.add(id(value))
        name = self.causes.name(value)
        loc = self.module.resolve_loc(op.loc)
        source = source_op_name(self.module, op)
        owner = getattr(value, "owner", None)
        producer = source_op_name(self.module, owner) if owner is not None else None
        for s in steps:
            self.plan.collectives.append(
                Collective(
                    s.kind,
                    tuple(axis_text(a) for a in s.axes),
                    s.bytes * trips,
                    self.func,
                    name,
                    op.name,
                    loc,
                    cause,
                    "",
                    trips,
                    source=source,
                    producer=producer,
                    candidates=candidates,
                    ssa=self.names.get(id(value), "?"),
                )
            )


def _call_result_reshard(op: Operation) -> str | None:
    """The callee whose call result the constraint `op` reshards where the compiled form added
    it (`insert_call_result_reshards`: the call's own sharding where the callee returns
    another, at the call's location), else None."""
    owner = getattr(op.operands[0], "owner", None) if op.operands else None
    if owner is None or owner.name != CALL or op.loc != owner.loc:
        return None
    return callee_name(owner)


def collective_buffer(steps: Sequence[Step], mesh: Mesh | None, returned: bool) -> int:
    """The temporary bytes the collectives of one reshard hold (`steps`, run one after another
    on a value; `returned`: a function result): their results', or one step's footprint where
    that is more (an all-to-all's pieces are gone before the next step). An all-reduce sums in
    place, in the buffer of the value it reduces, but a returned value's partial sums are a
    temporary, summed into the output."""
    held = [s for s in steps if s.kind != ALL_REDUCE or returned]
    return max([sum(s.bytes for s in held), *(footprint(s, mesh) for s in held)])


# the ops XLA's CPU backend runs on operands in row-major layout (a library call, not a fusion
# that reads any layout)
_ROW_MAJOR_READERS = frozenset({"stablehlo.convolution", "stablehlo.dot_general", "stablehlo.dot"})


def gather_copy(
    steps: Sequence[Step],
    before: TensorSharding,
    shape: Sequence[int],
    elem_bytes: int,
    mesh: Mesh,
    reader: str,
) -> int:
    """The bytes of the copy XLA makes of a value laid out `before` that its reshard `steps`
    gather for an op named `reader` (0: none). XLA's layout assignment gives an all-gather
    along dim d a result with d outermost, so that each device's piece is one contiguous
    block; where a dim before d has more than one element the gathered value is not
    row-major, and a reader that needs row-major operands (a convolution or dot, run as a
    library call) reads a copy of it: the gathered bytes again, live with the gathered buffer
    at the copy (a fusion reads the gathered layout as it is)."""
    if reader not in _ROW_MAJOR_READERS or not steps or steps[-1].kind != ALL_GATHER:
        return 0
    last = steps[-1]
    prev = steps[-2].after if len(steps) > 1 else before
    rank = len(shape)
    had, has = dim_axes(prev, rank), dim_axes(last.after, rank)
    local = local_shape(shape, has, mesh)
    for d in range(rank):
        if len(has[d]) < len(had[d]) and any(local[e] > 1 for e in range(d)):
            return sharded_local_bytes(shape, elem_bytes, last.after, mesh)
    return 0


def footprint(step: Step, mesh: Mesh | None) -> int:
    """The temporary bytes of one collective: its result, but for an all-to-all, which XLA's
    CPU backend runs on one piece per peer (the operand cut into `n` slices and `n` received
    pieces, each a buffer of its own on a 64-byte boundary, and the tuple of their pointers)."""
    if step.kind != ALL_TO_ALL:
        return step.bytes
    n = axes_size(step.axes, mesh) if mesh is not None else 1
    if n <= 1:
        return step.bytes
    return 2 * n * aligned(-(-step.bytes // n)) + aligned(POINTER * n)


def axis_text_list(axes: tuple[AxisRef, ...]) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


def _layout(s: TensorSharding | None, rank: int, mesh: Mesh) -> TensorSharding:
    """`s`'s axes per dim as a closed layout on `mesh` (replicated where `s` is None or of
    another rank)."""
    if s is None or len(s.dims) != rank:
        return axes_layout(mesh, [()] * rank)
    return axes_layout(mesh, (d.axes for d in s.dims))


# ---------------------------------------------------------------------------------------------
# The cost function for other passes (automatic sharding): IR in, bytes out, nothing changed.


def reshard_cost(
    v: Value, a: TensorSharding | None, b: TensorSharding | None, mesh: Mesh, model: str = "xla"
) -> int:
    """Bytes per device of resharding value `v` from sharding `a` to `b` (None: replicated)."""
    t = tensor_of(v, a)
    if t is None:
        return 0
    return sum(
        s.bytes
        for s in reshard_steps(
            t.shape, t.elem_bytes, t.sharding, _layout(b, len(t.shape), mesh), mesh, model
        )
    )


def op_cost_of(
    op: Operation,
    operands: list[TensorSharding | None],
    results: list[TensorSharding | None],
    mesh: Mesh,
    model: str = "xla",
) -> int:
    """Bytes per device of the collectives `op` needs with these operand and result shardings
    (0 for an op without a sharding rule: propagation moves nothing through it)."""
    rule = layout.op_rule(op)
    if rule is None:
        return 0
    tensors = [
        tensor_of(v, s)
        for v, s in zip([*op.operands, *op.results], [*operands, *results], strict=True)
    ]
    if any(t is None for t in tensors):
        return 0
    return op_steps(rule, tensors, mesh, style=model, dot=op.name in _DOTS).bytes  # type: ignore[arg-type]


def layout_memory(module: Module) -> Memory:
    """The per-device memory of `module`'s current layout (see `memory.memory_estimate`)."""
    funcs = module.funcs
    called = {callee_name(op) for f in funcs.values() for op in f.walk() if op.name == CALL}
    roots = [f for n, f in funcs.items() if n not in called]
    return memory_estimate(module, roots, lambda s: layout.mesh_of(module, s))


def _result_factors(rule: OpShardingRule, result: Tensor) -> list[tuple[AxisRef, ...]]:
    """Each factor of a result dim sharded as the result's dim is (the rest unsharded)."""
    common: list[tuple[AxisRef, ...]] = [()] * rule.num_factors
    for d, factors in enumerate(rule.result_dims[0]):
        if len(factors) == 1 and d < len(result.sharding.dims):
            common[factors[0]] = tuple(result.sharding.dims[d].axes)
    return common
