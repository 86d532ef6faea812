"""Export: write a propagated module's shardings in the form XLA keeps (docs/xla_boundary.md §1).

Every func argument/result and every op result gets a sharding (replicated ones too, on the
module's mesh), closed unless `keep_open`, priorities dropped. I/O shardings are cut to their
largest evenly dividing prefix and open main-function dims lose sub-axes, as Shardy's export
does (docs/propagation.md §9). Constraints stay `sdy.sharding_constraint`; `stablehlo.while`
gets no op-level sharding (XLA drops it). Mode `pin` also puts a closed constraint after each
op result outside manual regions whose layout XLA could derive otherwise by itself: every value
but constants, iotas, scalar broadcasts, values already constrained to their layout, and values
whose producer and users all agree with shardc's layouts factor by factor and that a tensor XLA
holds gives their axes (`pin_select.NeighbourSelection`: a pin stays on each side of every
reshard shardc's layout implies); a gather's or a scatter's result is always pinned. A
layout XLA mis-partitions (`pin_hazards`) is always pinned, made safe. Before a call
it reshards an operand to its callee's argument layout where the operand is smaller than the
call's results. Mode `annotate` (closed) gives a concatenate whose operands differ from its
result the result layout Shardy's explicit reshards compute it at (`concat_result`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import ClassVar, Literal

from shardc.dialect.data_flow import (
    CALL,
    CONTROL_FLOW_OPS,
    DATA_FLOW_EDGE,
    WHILE,
    called_funcs,
    entry_funcs,
)
from shardc.dialect.errors import not_one_of
from shardc.dialect.ir import (
    Block,
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    func_body,
)
from shardc.dialect.op_views import (
    FUNC,
    MANUAL_COMPUTATION,
    MESH,
    NAMED_COMPUTATION,
    PER_USE,
    RESHARD,
    SHARDING_CONSTRAINT,
    SHARDING_GROUP,
    Func,
    ManualComputation,
    NamedComputation,
    ShardingConstraint,
    constrained_sharding,
)
from shardc.dialect.rules.pointwise import ELEMENTWISE_OPS
from shardc.dialect.rules.registry import usable_rule
from shardc.dialect.shardings import (
    AxisRef,
    DimSharding,
    Mesh,
    TensorSharding,
    make_axis_ref,
)
from shardc.dialect.types import TensorType
from shardc.passes.pin_hazards import PIN_HAZARDS, XLA_OWN_HAZARDS, CallSites, pinnable
from shardc.passes.propagation.call_sites import dedupe_call_sites, keep_call_sites
from shardc.passes.propagation.unit_builder import dead_ops

from .blessed_unreduced import bless_unreduced_changes
from .concat_result import concat_redirects, recompute_concat_results
from .context import NONE, PassContext
from .import_steps.constants import CONSTANT_EXPR_OPS, CONSTANT_OPS
from .import_steps.constraints import redirects_manual_operand, redirects_uses
from .pin import (
    MAX_ROUNDS,
    XLA_REWRITTEN_PREFIXES,
    Key,
    PinReport,
    Written,
    XlaLayouts,
    XlaOracle,
    constrain_after,
    outermost,
    restore_written,
    sharding_key,
    splice_after,
    xla_reads_op_sharding,
)

Mode = Literal["annotate", "pin"]
# (value, its op, the layout a pin gives it, whether the pin is forced: a hazard or a redirect)
Candidate = tuple[Value, Operation, TensorSharding, bool]
# ops whose results are always pinned: XLA's own propagation can lay a gather's result out
# otherwise than shardc's propagation does, and moves more for it (measured on a random
# program: 8,196 B left to XLA vs 4,868 B pinned)
ALWAYS_PINNED = frozenset({"stablehlo.gather", "stablehlo.scatter"})

# readers that may send a value's other readers through a constraint of their own (`_redirected`)
REDIRECTING_USERS = frozenset({SHARDING_CONSTRAINT, MANUAL_COMPUTATION})

# ops the export writes no op-level sharding on: a constraint's and a manual computation's
# layouts live on the op itself, a while's XLA drops (docs/xla_boundary.md §2)
NO_OP_SHARDING = frozenset({WHILE, MANUAL_COMPUTATION, SHARDING_CONSTRAINT})
SKIP_OPS = frozenset({"builtin.module", FUNC, MESH})
BROADCASTS = frozenset({"stablehlo.broadcast_in_dim"})  # (`_scalar_broadcast`'s op)
# ops `export_op` treats otherwise than writing each result's final layout
SPECIAL_EXPORT_OPS = NO_OP_SHARDING | SKIP_OPS | {RESHARD, CALL, NAMED_COMPUTATION}
# ops whose regions are scalar computations applied per element (a reduction's combiner, a sort's
# comparator, a scatter's update): not data flow; Shardy writes a sharding on their ops only
# where propagation gave one (from a constraint in the body), and so does shardc's export
COMPUTATION_BODY_OPS = frozenset(
    {
        "stablehlo.reduce",
        "stablehlo.reduce_window",
        "stablehlo.select_and_scatter",
        "stablehlo.sort",
        "stablehlo.scatter",
        "stablehlo.map",
        "stablehlo.all_reduce",
        "stablehlo.reduce_scatter",
    }
)
# shardc's layouts of the entry boundaries (func -> arguments', results' shardings) and of the
# manual computations (id -> the op, its in_shardings, its out_shardings)
ShardcLayouts = tuple[
    dict[str, tuple[list[TensorSharding | None], list[TensorSharding | None]]],
    dict[int, tuple[Operation, tuple[TensorSharding, ...], tuple[TensorSharding, ...]]],
]
# ops whose results XLA lays out as written (or that have no layout of their own to derive)
NOT_DERIVED = frozenset({SHARDING_CONSTRAINT, MANUAL_COMPUTATION, SHARDING_GROUP, MESH})
# ops under which a pinned constraint may go: funcs and control flow (not manual regions or
# reduction bodies)
PIN_SCOPES = frozenset({FUNC, *CONTROL_FLOW_OPS})
# ops whose result each device makes in any layout without communication (XLA's Shardy splits
# constants and scalar broadcasts per use, so each copy takes its user's layout)
LOCAL_OPS = CONSTANT_OPS
# ops whose results' layouts XLA keeps as written: a closed constraint (every constraint is
# closed once exported), a manual computation's out_shardings
KEPT_BY_XLA = frozenset({SHARDING_CONSTRAINT, MANUAL_COMPUTATION})
# element-wise ops a layout passes through unchanged (no communication of their own): inside a
# run of them whose every neighbour carries one layout, XLA has no other layout to give a value
CHAIN_OPS = ELEMENTWISE_OPS - frozenset(
    {
        "stablehlo.collective_broadcast",
        "stablehlo.collective_permute",
        "stablehlo.cross-replica-sum",
        "stablehlo.all_reduce",
        "stablehlo.map",
    }
)

# ops that extend a constant sub-computation when all their operands are in one (with
# LOCAL_OPS at its roots; docs/propagation.md §7.7): split-constants' set, less
# the collectives and `map`
CONSTANT_SUB_OPS = CONSTANT_EXPR_OPS - (ELEMENTWISE_OPS - CHAIN_OPS)


@dataclass(frozen=True)
class ExportPass:
    """The export pass: every value's final sharding in the form XLA keeps (`annotate`);
    `keep_open` keeps `?` markers; `dedupe=False` keeps every call site's copy of its callee
    (the `pin` pass, which follows, decides which stay). The layouts of the values it leaves
    without an op-level sharding (loop results) are its result (`UnwrittenLayouts`)."""

    name: ClassVar[str] = "export"
    preserves: ClassVar[frozenset[type]] = NONE
    mode: Mode = "annotate"
    keep_open: bool = False
    dedupe: bool = True

    def run(self, module: Module, ctx: PassContext) -> None:
        if self.mode == "pin":  # (the same as the annotate export then the pin pass)
            ctx.put(export_annotate(module, self.keep_open, dedupe=False))
            PinPass().run(module, ctx)
            return
        ctx.put(export_annotate(module, self.keep_open, self.dedupe))


@dataclass(frozen=True)
class PinPass:
    """The compiled form (passes/pin.py): after the export (`dedupe=False`), the annotations as
    the author wrote them (`Written`, the run's) and a pin wherever XLA's own propagation (the
    run's oracle) derives a value otherwise than shardc; its `PinReport` is the run's result.
    Without an oracle, every value is pinned."""

    name: ClassVar[str] = "pin"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        unwritten = ctx.result(UnwrittenLayouts) or UnwrittenLayouts()
        report = pin_exported(module, ctx.oracle, ctx.result(Written), unwritten)
        if report is not None:
            ctx.put(report)


@dataclass
class UnwrittenLayouts:
    """The export's layouts of the values it writes no op-level sharding on (a loop's results:
    XLA rejects one there), by `id` of the value: what a pin of one of them takes."""

    of: dict[int, TensorSharding] = field(default_factory=dict)


def _meshes(module: Module) -> dict[str, Mesh]:
    return dict(module.meshes)


def default_mesh(module: Module) -> str | None:
    """The module's mesh for replicated shardings: the first one with axes."""
    for name, mesh in _meshes(module).items():
        if mesh.axes:
            return name
    return None


def cut_to_divisible(s: TensorSharding, shape: tuple[int, ...], mesh: Mesh) -> TensorSharding:
    """Each dim keeps the longest prefix of its axes that divides it (gcd part of the next)."""
    dims = []
    changed = False
    for d, dim in zip(s.dims, shape, strict=False):
        if dim < 0 or not d.axes:
            dims.append(d)
            continue
        kept: list[AxisRef] = []
        prod = 1
        for a in d.axes:
            size = a.size(mesh)
            if (dim // prod) % size == 0 and dim % (prod * size) == 0:
                kept.append(a)
                prod *= size
                continue
            g = gcd(dim // prod, size)
            if g > 1:
                kept.append(make_axis_ref(a.name, a.pre_size(), g, mesh))
            break
        if len(kept) != len(d.axes) or any(x != y for x, y in zip(kept, d.axes, strict=False)):
            changed = True
        dims.append(DimSharding(tuple(kept), d.is_closed, d.priority))
    if not changed:
        return s
    dims.extend(s.dims[len(dims) :])
    return s.with_dims(tuple(dims))


def drop_open_sub_axes(s: TensorSharding) -> TensorSharding:
    """Open dims lose everything from their first sub-axis on (main-function I/O)."""
    dims = []
    for d in s.dims:
        if d.is_closed:
            dims.append(d)
            continue
        axes = []
        for a in d.axes:
            if a.sub is not None:
                break
            axes.append(a)
        dims.append(DimSharding(tuple(axes), d.is_closed, d.priority))
    return s.with_dims(tuple(dims))


def finalize(s: TensorSharding, keep_open: bool) -> TensorSharding:
    """Closed (unless keep_open), no priorities, no replicated list once closed.

    With `keep_open` the result is Shardy's raw propagation result: open dims, replicated lists
    and non-divisible I/O shardings stay as propagation left them.
    """
    if keep_open:
        dims = tuple(DimSharding(d.axes, d.is_closed) for d in s.dims)
        return TensorSharding(s.mesh, dims, s.replicated, s.unreduced)
    dims = tuple(DimSharding(d.axes) for d in s.dims)
    return TensorSharding(s.mesh, dims, (), s.unreduced)


class _Exporter:
    def __init__(self, module: Module, mode: Mode, keep_open: bool):
        self.module = module
        self.mode = mode
        self.keep_open = keep_open
        self.meshes = _meshes(module)
        self.mesh = default_mesh(module)
        self.callees = called_funcs(module)
        # layouts of results that carry no op-level sharding (while): pins still need them
        self.unwritten: dict[int, TensorSharding] = {}
        self._final: dict[TensorSharding, TensorSharding] = {}
        # `final` by the object asked about (id -> (it, final)): propagation's results repeat a
        # few sharding objects, and a lookup by value compares every dim of equal ones
        self._final_of: dict[int, tuple[TensorSharding, TensorSharding]] = {}
        # `io` by (id of the sharding, id of the type, is_main) -> (sharding, type, result)
        self._io: dict[tuple[int, int, bool], tuple[object, object, TensorSharding | None]] = {}
        # the ops whose results are constants (LOCAL_OPS) (`run` finds them)
        self._local: list[Operation] = []
        self._defaults: dict[int, TensorSharding] = {}
        # the module's calls by callee (`call_sites`), built on first use
        self._sites: CallSites | None = None

    def find_constants(self) -> None:
        """The ops whose results are constants (`LOCAL_OPS`), as `run` finds them."""
        self._local = [op for op in self.module.walk() if op.name in LOCAL_OPS]

    def call_sites(self) -> CallSites:
        """The module's calls by callee, where a hazard's start index finds a callee
        argument's values (`pin_hazards.value_bounds`): one walk for the whole pin export, not
        one per argument asked about. The pin export copies no callee and retargets no call
        (the copies of `split_call_sites` exist before it, `dedupe_call_sites` runs after it),
        and it only rewires call operands, which the index reads when asked: it stays exact."""
        if self._sites is None:
            self._sites = CallSites(self.module.op)
        return self._sites

    def resolve(self, s: TensorSharding) -> Mesh | None:
        return s.mesh if isinstance(s.mesh, Mesh) else self.meshes.get(s.mesh)

    def final(self, s: TensorSharding) -> TensorSharding:
        """`finalize(s, keep_open)`, one shared object per distinct sharding: op results
        repeat a few layouts, and the printer reuses the text of a sharding object."""
        got = self._final_of.get(id(s))
        if got is not None:
            return got[1]
        out = self._final.get(s)
        if out is None:
            out = self._final[s] = finalize(s, self.keep_open)
        self._final_of[id(s)] = (s, out)
        return out

    def default(self, t: object) -> TensorSharding | None:
        if self.mesh is None:
            return None
        rank = t.rank if isinstance(t, TensorType) else 0
        made = self._defaults.get(rank)  # (immutable: one per rank is enough)
        if made is None:
            if self.keep_open:
                made = TensorSharding.open(self.mesh, rank)
            else:
                made = TensorSharding.replicated_of(self.mesh, rank)
            self._defaults[rank] = made
        return made

    def io(self, s: TensorSharding | None, t: object, is_main: bool) -> TensorSharding | None:
        # once per sharding and type object (a train step's parameters repeat a few of each)
        key = (id(s), id(t), is_main)
        got = self._io.get(key)
        if got is None:
            got = self._io[key] = (s, t, self._io_of(s, t, is_main))
        return got[2]

    def _io_of(self, s: TensorSharding | None, t: object, is_main: bool) -> TensorSharding | None:
        if s is None and t is not None and not isinstance(t, TensorType):
            return None  # a token (effects) has no layout; JAX writes none on it either
        if s is None:
            s = self.default(t)
            if s is None:
                return None
        mesh = self.resolve(s)
        if mesh is not None and isinstance(t, TensorType) and mesh.axes and not self.keep_open:
            s = cut_to_divisible(s, t.shape, mesh)
            if is_main:
                s = drop_open_sub_axes(s)
        return self.final(s)  # (one object per distinct sharding, as for op results)

    def run(self) -> None:
        for name, func in self.module.funcs.items():
            body = func_body(func)
            if body is None:
                continue
            is_main = self.is_main(name, func)
            for a in body.args:
                a.sharding = self.io(a.sharding, a.type, is_main)
            ret = body.terminator
            view = Func(func)
            for i in range(view.num_results):
                t = ret.operands[i].type if ret is not None and i < len(ret.operands) else None
                s = self.io(view.result_sharding(i), t, is_main)
                if s is not None:
                    view.set_result_sharding(i, s)
            # every op nested in the func, block by block (each op is exported on its own: the
            # order does not matter); a computation body's ops get no default
            export_op = self.export_op
            local = self._local
            stack = [func]
            while stack:
                parent = stack.pop()
                fill = parent.name not in COMPUTATION_BODY_OPS
                for region in parent.regions:
                    for block in region.blocks:
                        for op in block.ops:
                            if op.regions:
                                stack.append(op)
                            if op.name in LOCAL_OPS:
                                local.append(op)
                            export_op(op, fill)

    def export_op(self, op: Operation, fill: bool = True) -> None:
        """Write `op`'s final shardings; `fill=False` (a computation body's op) writes only
        those propagation found, no default."""
        if op.name not in SPECIAL_EXPORT_OPS:  # (most ops: each result gets its final layout)
            results = op.results
            for r in results:
                if isinstance(r.type, TensorType):
                    break
            else:
                return
            final = self.final
            for r in results:
                s = r.sharding
                if s is None:
                    if not fill:
                        continue
                    s = self.default(r.type)
                    if s is None:
                        continue
                r.sharding = final(s)
            return
        if op.name in SKIP_OPS:
            return
        if op.name == RESHARD:
            # XLA (through jaxlib) rejects sdy.reshard; a closed constraint asks for the same
            # layout at the same point (docs/xla_boundary.md §2).
            op.name = SHARDING_CONSTRAINT
        if op.name == SHARDING_CONSTRAINT:
            c = ShardingConstraint(op)
            c.sharding = finalize(c.sharding, self.keep_open)
            op.results[0].sharding = None
            return
        if op.name in (MANUAL_COMPUTATION, NAMED_COMPUTATION):
            self.export_manual(op)
            return
        if op.name in NO_OP_SHARDING:
            for r in op.results:
                # XLA takes no op-level sharding here, but a pin still needs the result's layout.
                if r.sharding is not None:
                    self.unwritten[id(r)] = finalize(r.sharding, False)
                r.sharding = None
            return
        if not any(isinstance(r.type, TensorType) for r in op.results):
            return
        for r in op.results:
            s = r.sharding if r.sharding is not None or not fill else self.default(r.type)
            if s is None:
                continue
            if op.name == CALL and not self.keep_open:
                mesh = self.resolve(s)
                if mesh is not None and mesh.axes and isinstance(r.type, TensorType):
                    s = cut_to_divisible(s, r.type.shape, mesh)
            r.sharding = self.final(s)

    def export_manual(self, op: Operation) -> None:
        """A manual or named computation's in/out shardings closed and cut as a func's
        boundary is; its results carry no sharding of their own."""
        view = ManualComputation(op) if op.name == MANUAL_COMPUTATION else NamedComputation(op)
        for key, shardings, values in (
            ("in_shardings", view.in_shardings, op.operands),
            ("out_shardings", view.out_shardings, op.results),
        ):
            if key not in op.properties:
                continue
            out = []
            for s, v in zip(shardings, values, strict=False):
                mesh = self.resolve(s)
                if (
                    mesh is not None
                    and mesh.axes
                    and isinstance(v.type, TensorType)
                    and (not self.keep_open)
                ):
                    s = cut_to_divisible(s, v.type.shape, mesh)
                out.append(finalize(s, self.keep_open))
            setattr(view, key, tuple(out))
        for r in op.results:
            r.sharding = None

    # -- pin -----------------------------------------------------------------------------------
    def pin_everything(self) -> None:
        """`pin_all`: a pin after every value but those `_rederived_here` (and the reshards
        before calls), without asking what XLA would derive: the exhaustive reference."""
        candidates = self.pin_candidates()
        self.insert_pins(
            [c for c in candidates if c[3] or not _rederived_here(c[1], c[0], c[2])]
        )

    def boundary_layouts(self) -> ShardcLayouts:
        """shardc's closed layouts of the entry funcs' boundaries and of the manual
        computations, as exported (before the annotations as written replace them)."""
        entries = entry_funcs(self.module)
        bounds = {}
        for name, func in entries.items():
            body = func_body(func)
            if body is not None:
                bounds[name] = ([a.sharding for a in body.args], list(Func(func).result_shardings))
        manuals = {
            id(op): (op, ManualComputation(op).in_shardings, ManualComputation(op).out_shardings)
            for op in self.module.ops_named(MANUAL_COMPUTATION)
        }
        return bounds, manuals

    def pin_against(
        self, oracle: XlaOracle, layouts_of: ShardcLayouts, max_rounds: int = MAX_ROUNDS
    ) -> PinReport:
        """The compiled form: the annotations as written (what jax.jit hands XLA), then pins
        where XLA's Shardy (`oracle`) derives otherwise than shardc (`layouts_of`: its
        boundaries), asking again after each round: a closed constraint after an op result,
        shardc's closed layout on an entry argument or result or on a manual computation.
        Layouts XLA is known to partition wrongly (`pin_hazards`) are pinned to their safe
        layout before anything."""
        report = PinReport()
        meshes = self.meshes
        bounds, manuals = layouts_of
        entries = {name: f for name, f in entry_funcs(self.module).items() if name in bounds}
        pinned: set[int] = set()  # ids of values with a pin
        # a layout XLA partitions wrongly (`pin_hazards`; XLA aborts on some: jax.jit with it
        # too) is pinned made safe first, whether or not XLA would derive it by itself
        forced = [
            self.made_safe((r, op, s, False), report)
            for r, op, s in self.comparable(pinned)
            if op.name in PIN_HAZARDS and op.name not in XLA_OWN_HAZARDS and pinnable(op, s) is not s
        ]
        self.pin_chosen(forced, pinned)
        own: list[Candidate] = []  # XLA_OWN_HAZARDS a pin would create (`own_hazards`)
        while True:
            ops = list(self.module.walk())
            index = {id(op): k for k, op in enumerate(ops)}
            # XLA deletes them (unused constraints too) before it propagates
            gone = dead_ops(self.module, ops, xla=True, constraints=True)
            values = [v for v in self.comparable(pinned) if id(v[1]) not in gone]
            open_manuals = [m for m in manuals.values() if _open_manual(m[0])]
            if report.rounds == max_rounds:
                report.unverified = len(values)  # (the rounds ran out: checked no more)
                break
            report.rounds += 1
            wanted = {index[id(op)] for _, op, _ in values}
            wanted.update(index[id(m[0])] for m in open_manuals)
            layouts = oracle(self.module, wanted, outermost(ops, gone), _xla_rules(ops))
            differ = [
                (r, op, s, False)
                for r, op, s in values
                if _differs(layouts.results.get(index[id(op)]), r.index, sharding_key(s, meshes))
            ]
            closed = self.close_differing_boundaries(entries, bounds, layouts, report)
            closed += self.close_differing_manuals(open_manuals, index, layouts, report)
            if report.rounds == 1:
                report.differed_at_first = len(differ) + closed
                own = self.own_hazards(values, layouts, index)
            if not differ and not closed and not own:
                report.last_checked = True
                break
            if report.rounds < max_rounds:
                differ = _first_differences(differ)
            chosen = {id(c[0]) for c in differ}
            differ += [c for c in own if id(c[0]) not in chosen]
            own = []
            differ = [self.made_safe(c, report) for c in differ]
            report.pins += [self.describe(c[0]) for c in differ]
            self.pin_chosen(differ, pinned)
        if report.unverified:
            # out of rounds: whatever is left that XLA could lay out otherwise gets a pin
            gone = dead_ops(self.module, xla=True, constraints=True)
            rest = [
                self.made_safe((r, op, s, False), report)
                for r, op, s in self.comparable(pinned)
                if id(op) not in gone
            ]
            report.pins += [self.describe(c[0]) for c in rest]
            self.pin_chosen(rest, pinned)
            for name, func in entries.items():
                self.close_boundaries(name, func, bounds[name], None, report)
            for m in manuals.values():
                self.close_manual(m, report)
        return report

    def own_hazards(
        self,
        values: list[tuple[OpResult, Operation, TensorSharding]],
        layouts: XlaLayouts,
        index: dict[int, int],
    ) -> list[Candidate]:
        """The values of `XLA_OWN_HAZARDS` ops whose layout shards a dim XLA partitions wrongly
        where XLA's own layout (`layouts`, before any pin) keeps it whole: pinned as they are,
        shardc's layout would bring the fault into a program jax.jit runs right, so they are
        pinned made safe (`made_safe`). Where XLA's own layout shards the dim too, the program
        is left as jax.jit's."""
        out: list[Candidate] = []
        for r, op, s in values:
            if op.name not in XLA_OWN_HAZARDS:
                continue
            safe = pinnable(op, s, self.call_sites())
            if safe is s:
                continue
            dims = [d for d, (a, b) in enumerate(zip(s.dims, safe.dims, strict=False)) if a != b]
            copies = layouts.results.get(index[id(op)]) or []
            if any(
                r.index < len(c) and c[r.index] is not None and any(c[r.index][1][d] for d in dims)
                for c in copies
            ):
                continue  # (XLA's own layout shards them: jax.jit's program has the fault)
            out.append((r, op, s, False))
        return out

    def constrain_operand(self, op: Operation, i: int, s: TensorSharding) -> None:
        """A closed constraint of `op`'s operand `i` to `s`, right before `op`."""
        block = op.parent
        if not isinstance(block, Block) or i >= len(op.operands):
            return
        c = ShardingConstraint.create(op.operands[i], s, op.loc).op
        op.set_operand(i, c.results[0])
        c.parent = block
        block.ops.insert(block.ops.index(op), c)

    def close_differing_boundaries(
        self,
        entries: dict[str, Operation],
        bounds: dict[str, tuple[list[TensorSharding | None], list[TensorSharding | None]]],
        layouts: XlaLayouts,
        report: PinReport,
    ) -> int:
        """Write shardc's closed layout on each entry argument and result XLA derives otherwise
        (an open one, as written); how many."""
        return sum(
            self.close_boundaries(name, func, bounds[name], layouts, report)
            for name, func in entries.items()
        )

    def close_boundaries(
        self,
        name: str,
        func: Operation,
        bound: tuple[list[TensorSharding | None], list[TensorSharding | None]],
        layouts: XlaLayouts | None,
        report: PinReport,
    ) -> int:
        """`close_differing_boundaries` for one func; `layouts` None: every one that is not
        shardc's already."""
        body = func_body(func)
        if body is None:
            return 0
        view = Func(func)
        made = 0
        for kind, current, mine, derived in (
            ("argument", [a.sharding for a in body.args], bound[0],
             None if layouts is None else layouts.args.get(name)),
            ("result", list(view.result_shardings), bound[1],
             None if layouts is None else layouts.outs.get(name)),
        ):  # fmt: skip
            for i, (now, want) in enumerate(zip(current, mine, strict=False)):
                if want is None or now == want:
                    continue
                if layouts is not None:
                    if derived is None or i >= len(derived):
                        continue
                    if derived[i] == sharding_key(want, self.meshes):
                        continue
                if kind == "argument":
                    body.args[i].sharding = want
                else:
                    view.set_result_sharding(i, want)
                report.pins.append(f"@{name} {kind} #{i}")
                made += 1
        return made

    def close_differing_manuals(
        self,
        open_manuals: list[tuple[Operation, tuple[TensorSharding, ...], tuple[TensorSharding, ...]]],
        index: dict[int, int],
        layouts: XlaLayouts,
        report: PinReport,
    ) -> int:
        """Give each manual computation XLA lays out otherwise (its open dims) shardc's closed
        in/out shardings; how many."""
        made = 0
        for m in open_manuals:
            got = layouts.manuals.get(index[id(m[0])])
            if got is None:
                continue
            want = (
                tuple(sharding_key(s, self.meshes) for s in m[1]),
                tuple(sharding_key(s, self.meshes) for s in m[2]),
            )
            if got != want:
                made += self.close_manual(m, report)
        return made

    def close_manual(
        self,
        m: tuple[Operation, tuple[TensorSharding, ...], tuple[TensorSharding, ...]],
        report: PinReport,
    ) -> int:
        op, ins, outs = m
        view = ManualComputation(op)
        if view.in_shardings == ins and view.out_shardings == outs:
            return 0
        view.in_shardings, view.out_shardings = ins, outs
        report.pins.append(self.describe(op.results[0]) if op.results else op.name)
        return 1

    def made_safe(self, c: Candidate, report: PinReport) -> Candidate:
        """A pin to a layout XLA partitions wrongly (`pin_hazards`) made safe: its dims XLA
        mis-partitions closed and empty."""
        r, op, s, _ = c
        if op.name not in PIN_HAZARDS:
            return c
        safe = pinnable(op, s, self.call_sites())
        if safe is s:
            return c
        r.sharding = safe
        report.forced.append(self.describe(r))
        if op.name in XLA_OWN_HAZARDS:
            # the op's first operand alike before it: XLA's propagation would otherwise
            # partition the op at its operand's layout and reshard only after it
            self.constrain_operand(op, 0, safe)
        return (r, op, safe, True)

    def pin_chosen(self, chosen: list[Candidate], pinned: set[int]) -> None:
        if chosen:
            self.insert_pins(chosen)
            pinned.update(id(c[0]) for c in chosen)

    def describe(self, r: Value) -> str:
        op = r.owner if isinstance(r, OpResult) else None
        where = self.module.resolve_loc(op.loc) if op is not None else None
        name = f"{op.name}#{r.index}" if op is not None else "value"
        return f"{name} at {where}" if where else name

    def comparable(self, pinned: set[int]) -> list[tuple[OpResult, Operation, TensorSharding]]:
        """The op results whose layout XLA derives (so may derive otherwise than shardc) and
        that a pin can hold, with shardc's layout: in funcs and the bodies of loops and
        conditionals (not in manual regions or reduction bodies), used, tensors, not pinned yet,
        and not constants or their sub-computations, scalar broadcasts, constraints or manual
        computations (each XLA lays out as it is written, or per use at no cost)."""
        constant = self.constant_values(set())
        out: list[tuple[OpResult, Operation, TensorSharding]] = []
        closed: dict[int, tuple[TensorSharding, TensorSharding]] = {}
        work = [b for b in map(func_body, self.module.funcs.values()) if b is not None]
        while work:
            block = work.pop()
            for op in block.ops:
                if op.name in PIN_SCOPES:
                    for region in op.regions:
                        work.extend(region.blocks)
                if op.name in NOT_DERIVED or op.name in LOCAL_OPS:
                    continue
                if op.name in BROADCASTS and _scalar_broadcast(op):
                    continue
                for r in op.results:
                    if (
                        not r.num_uses
                        or id(r) in pinned
                        or r in constant
                        or not isinstance(r.type, TensorType)
                    ):
                        continue
                    s = r.sharding or self.unwritten.get(id(r)) or self.default(r.type)
                    if s is None:
                        continue
                    got = closed.get(id(s))
                    if got is None:
                        got = closed[id(s)] = (s, finalize(s, False))
                    if not _rederived_here(op, r, got[1]):
                        out.append((r, op, got[1]))
        return out

    def constant_values(self, pinned: set[Value]) -> set[Value]:
        """The results of constant sub-computations not in `pinned`: constants, iotas
        and the broadcasts, reshapes, slices and element-wise ops of them, which XLA's Shardy
        clones per use (docs/propagation.md §7.7), each copy in its user's
        layout: never pinned, and no neighbour of theirs reads a layout from them."""
        # from the constants `run` found, forward through their users (the closure a walk in
        # program order finds, without visiting every op)
        out: set[Value] = set()
        work = list(self._local)
        while work:
            op = work.pop()
            for r in op.results:
                if r not in pinned and r not in out:
                    out.add(r)
                    for user in r.users:
                        if user.name in CONSTANT_SUB_OPS and _all_in(user.operands, out):
                            work.append(user)
        return out

    def is_main(self, name: str, func: Operation) -> bool:
        """Whether `func` is an entry (not called, not private): XLA keeps its I/O layouts."""
        return Func(func).is_entry(self.callees)

    def pin_candidates(self) -> list[Candidate]:
        """Every op result a pin may go after, with its layout and whether a hazard forces the
        pin (`pin_hazards`); reshards before calls are placed on the way."""
        out: list[Candidate] = []
        # finalize(s, False) once per sharding object (most results share a few): id -> (s, it)
        closed: dict[int, tuple[TensorSharding, TensorSharding]] = {}
        # a worklist of blocks, not recursion: nesting depth is the input's to choose
        work = [b for b in map(func_body, self.module.funcs.values()) if b is not None]
        while work:
            block = work.pop()
            ops = block.ops
            new_ops: list[Operation] | None = None  # (a copy only once a reshard goes in)
            for k, op in enumerate(ops):
                if op.name == CALL:
                    made = self.reshard_call_operands(op, block)
                    if made and new_ops is None:
                        new_ops = ops[:k]
                    if new_ops is not None:
                        new_ops.extend(made)
                if new_ops is not None:
                    new_ops.append(op)
                if op.name in PIN_SCOPES:
                    for region in op.regions:
                        work.extend(region.blocks)
                if op.name in (SHARDING_CONSTRAINT, SHARDING_GROUP, MESH):
                    continue
                for r in op.results:
                    if not r.num_uses or not isinstance(r.type, TensorType):
                        continue
                    s = r.sharding or self.unwritten.get(id(r))
                    if s is None and op.name == MANUAL_COMPUTATION:
                        s = self.manual_out(op, r.index)
                    if s is None:
                        s = self.default(r.type)
                    if s is None:
                        continue
                    got = closed.get(id(s))
                    if got is None:
                        got = closed[id(s)] = (s, finalize(s, False))
                    s = got[1]
                    safe = pinnable(op, s, self.call_sites()) if op.name in PIN_HAZARDS else s
                    if safe is not s:  # a layout XLA mis-partitions: the op keeps the safe one
                        r.sharding = safe
                        out.append((r, op, safe, True))
                    else:  # a value read through a constraint Shardy moves (redirect_uses)
                        out.append((r, op, s, _redirected(r)))
            if new_ops is not None:
                block.ops = new_ops
        return out

    def insert_pins(self, chosen: list[Candidate]) -> None:
        """A closed constraint after each chosen value, its uses rewired to it."""
        after: dict[int, list[Operation]] = {}
        blocks: dict[int, Block] = {}
        moved: set[int] = set()  # constraints `redirect_uses` put right after a pin
        for r, op, s, _ in chosen:
            block = op.parent
            if not isinstance(block, Block) or not isinstance(r, OpResult):
                continue
            uses = r.uses  # (read before the pin rewires them: they ask what they read)
            target = next((u for u, _ in uses if redirects_uses(u, False)), None)
            made = next((m for u, i in uses if (m := redirects_manual_operand(u, i, False))), None)
            c, _ = constrain_after(r, s, after, blocks)
            if target is not None:
                after[id(op)].extend(self.redirect_uses(target, uses, c, block, moved))
            elif made is not None:
                after[id(op)].extend(self.redirect_to(made, uses, c, block))
        splice_after(after, blocks, moved)

    def redirect_uses(
        self, target: Operation, uses: list[tuple[Operation, int]], pin: Operation, block: Block,
        moved: set[int],
    ) -> list[Operation]:  # fmt: skip
        """A while/case/barrier result with a closed constraint (`target`) is read by its other
        users through that constraint's layout (import_steps/constraints.py: Shardy sends them
        through the constraint): one reshard right after the op, not one per user (a loop
        that reads the result would reshard on every iteration)."""
        others = [(u, i) for u, i in uses if u is not target]
        want = ShardingConstraint(target).sharding
        if others and target.parent is block:
            # as in Shardy's output: the constraint right after the op and every other use
            # reading its result, so XLA sees one value where a second constraint (or the pin)
            # would be another of the same layout (XLA reshards each HLO value apart: a
            # concatenate of the two would read them through two identical all-to-alls)
            moved.add(id(target))  # (`splice_after` takes it out of its old place)
            for user, idx in others:
                user.set_operand(idx, target.results[0])
            return [target]
        return self.redirect_to(want, others, pin, block)

    def redirect_to(
        self, want: TensorSharding, uses: list[tuple[Operation, int]], pin: Operation,
        block: Block,
    ) -> list[Operation]:  # fmt: skip
        """`uses` read `pin`'s result through one constraint to `want` (none if it has it)."""
        want = finalize(want, False)
        if not uses or want == constrained_sharding(pin.results[0]):
            return []
        c = ShardingConstraint.create(pin.results[0], want, pin.loc).op
        for user, idx in uses:
            user.set_operand(idx, c.results[0])
        c.parent = block
        return [c]

    def reshard_call_operands(self, call: Operation, block: Block) -> list[Operation]:
        """Constraints that take a call's operands to its callee's argument layouts before the
        call, as Shardy's output does, where the operand is smaller than every call result.
        Left to XLA, the reshard moves to the callee's results: worse after ops that grow the
        value (a gather's f32[4] result all-reduced instead of its f32[1] operand), better
        after ops that shrink it (a gather of 2 rows out of 8), and where sizes are equal
        (element-wise callees) XLA's own choice did better on the auto-sharded transformer
        train step (tests/test_auto_e2e.py: 237,704 B pinned before the calls)."""
        callee = self.module.funcs.get(callee_name(call))
        body = func_body(callee) if callee is not None else None
        if body is None:
            return []
        smallest = min(
            (r.type.num_elements() for r in call.results if isinstance(r.type, TensorType)),
            default=0,
        )
        out = []
        for i, (v, arg) in enumerate(zip(call.operands, body.args, strict=False)):
            want = arg.sharding
            if want is None or not isinstance(v.type, TensorType) or not v.type.shape:
                continue
            if v.type.num_elements() >= smallest:
                continue
            have = self.layout_of(v)
            if have is not None and str(finalize(have, False)) == str(want):
                continue
            c = ShardingConstraint.create(v, want, call.loc).op
            call.set_operand(i, c.results[0])
            c.parent = block
            out.append(c)
        return out

    def layout_of(self, v: Value) -> TensorSharding | None:
        """The layout `v` has once pinned: `constrained_sharding`, else the one a while result keeps aside,
        else the default."""
        return constrained_sharding(v) or self.unwritten.get(id(v)) or self.default(v.type)

    def manual_out(self, op: Operation, index: int) -> TensorSharding | None:
        outs = ManualComputation(op).out_shardings
        return outs[index] if index < len(outs) else None


def export_module(
    module: Module,
    mode: Mode = "annotate",
    keep_open: bool = False,
    pin_all: bool = False,
    oracle: XlaOracle | None = None,
    written: Written | None = None,
) -> PinReport | None:
    """Rewrite `module`'s shardings into their exported form (mutates it): the export pass, and
    for `pin` the pin pass (`pin_exported`, which says how the pins were chosen). `pin_all`
    (or `pin` without an oracle) pins every value but those XLA cannot lay out otherwise."""
    if mode not in ("annotate", "pin"):
        raise not_one_of("export mode", mode, ("annotate", "pin"))
    if mode == "annotate":
        export_annotate(module, keep_open)
        return None
    unwritten = export_annotate(module, keep_open, dedupe=False)
    return pin_exported(module, None if pin_all else oracle, written, unwritten, keep_open)


def export_annotate(module: Module, keep_open: bool = False, dedupe: bool = True) -> UnwrittenLayouts:
    """The `annotate` export of `module` (mutates it); `dedupe=False` leaves every call site's
    copy of its callee (marked) for the pin pass. Returns the layouts it wrote no sharding of."""
    _drop_data_flow_edges(module)
    redirects = concat_redirects(module) if not keep_open else None
    exporter = _Exporter(module, "annotate", keep_open)
    exporter.run()
    if not keep_open:
        # as Shardy's explicit reshards leave them
        recompute_concat_results(module, redirects, exporter.unwritten)
    # unreduced axes change at calls and returns only through explicit constraints
    bless_unreduced_changes(module)
    if dedupe:
        dedupe_call_sites(module)  # input funcs keep their ops; one copy per distinct layout
    return UnwrittenLayouts(exporter.unwritten)


def pin_exported(
    module: Module,
    oracle: XlaOracle | None,
    written: Written | None,
    unwritten: UnwrittenLayouts,
    keep_open: bool = False,
) -> PinReport | None:
    """The compiled form of an exported module (`export_annotate(dedupe=False)`): the
    annotations as `written`, and a pin on each value whose layout XLA's Shardy (`oracle`)
    derives otherwise (passes/pin.py); the copies of a callee no pin tells apart become one.
    Without an oracle, every value but those XLA cannot lay out otherwise is pinned (constants,
    iotas, scalar broadcasts, values whose every use is a constraint to their layout, manual
    computations' results), with each call site's own copy of its callee: shardc's layout
    whatever XLA's propagation would do, at the cost of a reshard per use of each pinned value."""
    exporter = _Exporter(module, "pin", keep_open)
    exporter.unwritten = dict(unwritten.of)
    exporter.find_constants()
    if oracle is None:
        keep_call_sites(module)  # XLA runs each call site's own layout
        exporter.pin_everything()
        _drop_per_use_marks(module)
        return None
    # shardc's layouts of what the annotations as written leave to XLA, then those
    shardc_layouts = exporter.boundary_layouts()
    if written is not None:
        restore_written(module, written)
    report = exporter.pin_against(oracle, shardc_layouts)
    drop_unread_op_shardings(module)
    _drop_per_use_marks(module)
    # copies of a callee that XLA reads alike (no pin tells them apart) become one again:
    # XLA's Shardy gives each call site its own copy anyway, and JAX's own call structure
    # lets the module for XLA be written onto a copy of JAX's (xla_module.py)
    funcs = len(module.funcs)
    dedupe_call_sites(module)
    if len(module.funcs) != funcs:
        report.last_checked = False
    return report


def drop_unread_op_shardings(module: Module) -> None:
    """Remove the op-level shardings XLA does not read (all but `KEEPS_OP_SHARDING`'s and
    custom rules'): XLA's HLO passes carry them along as frontend attributes, and a
    simplification that folds an op (a transpose of a transpose of a loop result) can leave one
    on another instruction of another rank, which XLA then rejects."""
    for op in module.walk():
        if op.results and not xla_reads_op_sharding(op):
            for r in op.results:
                r.sharding = None


def _drop_per_use_marks(module: Module) -> None:
    """Take `PER_USE` off the constraints: the compiled form has each such constraint read by
    its own reader only already (the pins keep to it), and the mark is shardc's, not XLA's."""
    for op in module.ops_named(SHARDING_CONSTRAINT):
        if PER_USE in op.attributes:
            op.attributes.pop(PER_USE)


def _drop_data_flow_edges(module: Module) -> None:
    """`sdy.data_flow_edge` is an identity that only Shardy's own pipeline uses internally; XLA
    (through jaxlib) rejects it, so its uses read its operand instead."""
    for op in list(module.ops_named(DATA_FLOW_EDGE)):
        op.results[0].replace_all_uses_with(op.operands[0])
        op.erase()


def _redirected(r: Value) -> bool:
    """Whether a reader of `r` sends its other readers through a constraint of its own (a
    closed constraint on a data-flow edge target, or a closed manual computation operand):
    then `r` is always pinned, with the reshards of `redirect_uses`/`redirect_to` after it."""
    for u in r.users:
        if u.name in REDIRECTING_USERS:
            break
    else:
        return False  # (no reader that could redirect: no list of uses to build)
    return any(
        redirects_uses(u, False) or redirects_manual_operand(u, i, False) is not None
        for u, i in r.uses
    )


def _xla_rules(ops: list[Operation]) -> dict[int, str]:
    """Walk index -> the rule text of each op XLA rewrites before it propagates (`chlo` ops),
    where shardc has one: the rule XLA's rewrite gives it."""
    out: dict[int, str] = {}
    for k, op in enumerate(ops):
        if op.name.startswith(XLA_REWRITTEN_PREFIXES) and "sdy.sharding_rule" not in op.attributes:
            rule = usable_rule(op)  # (an unusable one: XLA's then unknown)
            if rule is not None:
                out[k] = str(rule)
    return out


def _open_manual(op: Operation) -> bool:
    """Whether a manual computation leaves a dim open (XLA derives its axes)."""
    view = ManualComputation(op)
    return any(not d.is_closed for s in (*view.in_shardings, *view.out_shardings) for d in s.dims)


def _differs(copies: list[tuple[Key, ...]] | None, index: int, want: Key) -> bool:
    """Whether any copy of an op in XLA's module gives its result `index` another layout than
    `want` (an op XLA's module no longer has differs in nothing)."""
    if not copies:
        return False
    return any(index < len(c) and c[index] != want for c in copies)


def _first_differences(differ: list[Candidate]) -> list[Candidate]:
    """The values of `differ` whose op reads no other value of `differ`: where XLA's layout
    starts to depart from shardc's. Pinned, they often bring the values after them back (the
    next round asks again), and a value pinned needlessly is one XLA may no longer reshard as
    it likes."""
    differing = {id(c[0]) for c in differ}
    first = [c for c in differ if not any(id(v) in differing for v in c[1].operands)]
    return first or differ


def _all_in(values: list[Value], among: set[Value]) -> bool:
    for v in values:
        if v not in among:
            return False
    return True


def _rederived_here(op: Operation, r: Value, s: TensorSharding) -> bool:
    """Whether XLA gives `r` the layout `s` without a pin, whatever the rest of the module:
    every use is already a closed constraint to `s`, `op` makes its result on every device
    without operands (a constant, an iota) or broadcasts a scalar, or `op` is a manual
    computation (its closed out_shardings are its results' layouts)."""
    if op.name in LOCAL_OPS or op.name == MANUAL_COMPUTATION:
        return True  # (a manual computation's results have its out_shardings, which XLA keeps)
    for u in r.users:
        if u.name != SHARDING_CONSTRAINT:
            break
        c = ShardingConstraint(u).sharding
        if c is not s and c != s:
            break
    else:
        return True
    return _scalar_broadcast(op)


def _scalar_broadcast(op: Operation) -> bool:
    """A broadcast of a scalar (XLA's Shardy clones it per use)."""
    if op.name != "stablehlo.broadcast_in_dim":
        return False
    t = op.operands[0].type
    return isinstance(t, TensorType) and not t.shape


def _inside_chain(op: Operation, r: Value, s: TensorSharding) -> bool:
    """`op` is element-wise, every operand has `r`'s type and (pinned or written) layout `s`,
    and every user is a constraint to `s` or an element-wise op of `r`'s type whose result
    has layout `s`. Then nothing next to `r` asks for another layout: XLA cannot move a
    reshard into the chain (an element-wise chain between neighbours of different layouts
    stays pinned: left to XLA, the auto-sharded transformer step resharded inside one and moved
    1.8x the bytes)."""
    if op.name not in CHAIN_OPS or len(op.results) != 1:
        return False
    for v in op.operands:
        if v.type != r.type or constrained_sharding(v) != s:
            return False
    for user, _ in r.uses:
        if user.name == SHARDING_CONSTRAINT:
            if ShardingConstraint(user).sharding != s:
                return False
        elif (
            user.name not in CHAIN_OPS
            or len(user.results) != 1
            or user.results[0].sharding != s
            or any(v.type != r.type for v in user.operands)
        ):
            return False
    return True

