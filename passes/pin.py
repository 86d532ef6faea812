"""What the `pin` export compares: shardc's layout against the one XLA's Shardy derives.

The compiled form of a module is its `annotate` export (boundary shardings, the user's
constraints, manual computations: what XLA keeps) plus a closed constraint ("pin") on each value
whose layout XLA's own propagation would choose otherwise. Which values those are is not guessed:
an oracle (`XlaOracle`, given by the caller; `shardc` runs jaxlib's `sdy-propagation-pipeline`,
the pipeline XLA runs on import) says what XLA derives for every op result of the module as it
stands, and the export pins the values where that differs from shardc's layout, then asks again
(a pin can change what XLA derives around it) until nothing differs. A value whose layout XLA
derives anyway is left to XLA: a pinned value is resharded once per use, an unpinned one as XLA
sees fit, so where shardc's layout is Shardy's the compiled program is the one jax.jit builds.

This module holds the plain-data half (the comparable form of a sharding, the oracle's answer)
and the insertion of pins; the choice runs in the export (`export.py`, `pin_against`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from shardc.dialect.data_flow import called_funcs
from shardc.dialect.ir import AttrDict, Block, Module, Operation, OpResult, func_body
from shardc.dialect.op_views import (
    MANUAL_COMPUTATION,
    SHARDING_CONSTRAINT,
    Func,
    ShardingConstraint,
)
from shardc.dialect.shardings import Mesh, TensorSharding

from .context import ALL, PassContext
from .propagation.call_sites import MARK

# A sharding in comparable form: (mesh axes and device order, the axes of each dim, unreduced
# axes); None for a value on no axis (replicated, whatever mesh names it).
Key = tuple[object, tuple[tuple[str, ...], ...], tuple[str, ...]] | None



@dataclass
class XlaLayouts:
    """The oracle's answer: walk index of an op (`list(module.walk())`) -> one tuple of result
    keys per copy of the op in XLA's module (Shardy clones a callee per call site); entry func
    name -> the keys of its arguments and of its results."""

    results: dict[int, list[tuple[Key, ...]]] = field(default_factory=dict)
    args: dict[str, tuple[Key, ...]] = field(default_factory=dict)
    outs: dict[str, tuple[Key, ...]] = field(default_factory=dict)
    # walk index of a manual computation -> the keys of its in_shardings and out_shardings
    manuals: dict[int, tuple[tuple[Key, ...], tuple[Key, ...]]] = field(default_factory=dict)

# ops whose op-level sharding XLA reads on import (docs/xla_boundary.md §1): it drops
# every other op-level sharding and derives those values itself
KEEPS_OP_SHARDING = frozenset(
    {"stablehlo.custom_call", "stablehlo.send", "stablehlo.recv", "stablehlo.after_all"}
)

# how many times the export asks the oracle again after pinning what differed
MAX_ROUNDS = 4


def sharding_key(s: TensorSharding | None, meshes: Mapping[str, Mesh]) -> Key:
    """`s` in comparable form, its mesh resolved to its axes (XLA's Shardy may rename or merge
    mesh symbols, never change what they hold)."""
    if s is None:
        return None
    dims = tuple(tuple(str(a) for a in d.axes) for d in s.dims)
    unreduced = tuple(str(a) for a in s.unreduced)
    if not unreduced and not any(dims):
        return None
    mesh = s.mesh if isinstance(s.mesh, Mesh) else meshes.get(s.mesh)
    where: object = s.mesh if mesh is None else (mesh.axes, mesh.device_ids)
    return (where, dims, unreduced)


def xla_reads_op_sharding(op: Operation) -> bool:
    """Whether XLA reads `op`'s op-level sharding: an op of `KEEPS_OP_SHARDING`, or one with a
    custom sharding rule."""
    return op.name in KEEPS_OP_SHARDING or "sdy.sharding_rule" in op.attributes


class XlaOracle(Protocol):
    """What XLA's Shardy derives for the module as exported so far, once the ops `dead` (walk
    indexes: what XLA deletes before its Shardy runs) are gone and the ops of `rules` (walk
    index -> `#sdy.op_sharding_rule<...>` text) follow the rule XLA gives them after its own
    rewrites: `wanted` names the ops to read; the answer has an entry for each of them that
    XLA's module still has."""

    def __call__(
        self, module: Module, wanted: set[int], dead: set[int], rules: dict[int, str]
    ) -> XlaLayouts: ...


# op families XLA rewrites before its Shardy runs (`chlo` ops: `chlo.top_k` into `mhlo.topk`,
# `chlo.square` into a multiply, ...: docs/op_rules.md §3.9), where Shardy run on
# the module as written knows no rule: the oracle is told the rule shardc gives them
XLA_REWRITTEN_PREFIXES = ("chlo.",)


# ops whose shardings the compiled form keeps as the author wrote them (XLA keeps them as written)
WRITTEN_OPS = frozenset({SHARDING_CONSTRAINT, MANUAL_COMPUTATION})


@dataclass
class Written:
    """A module's annotations as its author wrote them, before any pass: what XLA is handed
    (open dims open, priorities and unannotated arguments as they were), so that it propagates
    from what jax.jit would give it; the export writes closed, propagated layouts instead.
    Kept by func name and place (the n-th constraint or manual computation of a func's walk),
    so that it applies to a copy of the module, or to the same input imported again."""

    # func -> its arguments' and results' shardings
    entries: dict[str, tuple[tuple[TensorSharding | None, ...], tuple[TensorSharding | None, ...]]]
    ops: dict[str, list[tuple[str, AttrDict]]]  # func -> (op name, properties) in walk order
    # the entry funcs' boundaries stay as the export writes them (automatic sharding decided
    # them: XLA is handed those layouts, as jax.jit is handed in/out shardings, and its own
    # propagation starts from them rather than from open arguments)
    keep_entries: bool = False


def _written_ops(func: Operation) -> list[Operation]:
    return [op for op in func.walk() if op.name in WRITTEN_OPS]


def record_written(module: Module) -> Written:
    """The annotations of `module` as they stand (call it on the module as imported)."""
    entries = {}
    for name, func in module.funcs.items():
        body = func_body(func)
        if body is not None:
            entries[name] = (tuple(a.sharding for a in body.args), Func(func).result_shardings)
    ops = {
        name: [(op.name, op.properties.copy()) for op in _written_ops(func)]
        for name, func in module.funcs.items()
    }
    return Written(entries, ops)


@dataclass(frozen=True)
class RecordWritten:
    """Record the module's annotations as written (`Written`, the run's result), before any pass
    changes them; a run that was given them keeps those."""

    name: ClassVar[str] = "record-written"
    preserves: ClassVar[frozenset[type]] = ALL

    def run(self, module: Module, ctx: PassContext) -> None:
        if ctx.result(Written) is None:
            ctx.put(record_written(module))


def restore_written(module: Module, written: Written) -> None:
    """Give `module`'s func boundaries, constraints and manual computations back the
    annotations `written` recorded; a call site's copy of a func (marked by the import) gets
    its func's. A func whose ops no longer match is left as it is."""
    funcs = module.funcs
    callees = called_funcs(module) if written.keep_entries else set()
    for name, func in funcs.items():
        mark = func.attributes.get(MARK)
        source = str(mark).strip('"') if mark is not None else name
        while source not in written.entries:
            up = funcs.get(source)
            mark = up.attributes.get(MARK) if up is not None else None
            if mark is None:
                break
            source = str(mark).strip('"')
        body = func_body(func)
        if body is None or source not in written.entries:
            continue
        args, results = written.entries[source]
        keep = written.keep_entries and Func(func).is_entry(callees)
        if not keep and len(body.args) == len(args):
            for a, s in zip(body.args, args, strict=True):
                a.sharding = s
            view = Func(func)
            for i, s in enumerate(results):
                if i < view.num_results:
                    view.set_result_sharding(i, s)
        recorded = written.ops.get(source)
        if recorded:
            now = _written_ops(func)
            if [op.name for op in now] == [n for n, _ in recorded]:
                for op, (_, properties) in zip(now, recorded, strict=True):
                    op.properties = properties.copy()


@dataclass
class PinReport:
    """How the `pin` export chose its pins."""

    rounds: int = 0  # oracle calls
    pins: list[str] = field(default_factory=list)  # the values pinned, as `op#result` at `loc`
    forced: list[str] = field(default_factory=list)  # pinned to a safe layout (pin_hazards)
    unverified: int = 0  # values still differing when the rounds ran out (pinned unchecked)
    differed_at_first: int = 0  # values whose XLA layout differed before any pin
    last_checked: bool = False  # the oracle's last answer was about the export as it ends

    @property
    def agrees(self) -> bool:
        """Whether XLA derives shardc's whole layout without a pin (the compiled program is
        then the one jax.jit builds from the same annotations)."""
        return not self.differed_at_first and not self.forced

    def __str__(self) -> str:
        head = (
            f"{len(self.pins)} value(s) pinned after {self.rounds} oracle round(s); "
            f"{self.differed_at_first} differed from XLA's own layout at first"
        )
        if self.forced:
            head += f", {len(self.forced)} pinned to a layout XLA partitions safely"
        if self.unverified:
            head += f", {self.unverified} pinned without a last check"
        return head


# ---------------------------------------------------------------------------------------------
# Inserting pins

Uses = list[tuple[Operation, int]]


def constrain_after(
    v: OpResult, s: TensorSharding, after: dict[int, list[Operation]], blocks: dict[int, Block]
) -> tuple[Operation, Uses]:
    """A closed constraint of `v` to `s`, `v`'s uses rewired to it, queued in `after` to go
    right after `v`'s op (`splice_after` places the queue); returns it and `v`'s former uses."""
    owner = v.owner
    block = owner.parent
    assert isinstance(block, Block)
    uses = list(v.uses)
    c = ShardingConstraint.create(v, s, owner.loc).op
    for user, idx in uses:
        user.set_operand(idx, c.results[0])
    c.parent = block
    after.setdefault(id(owner), []).append(c)
    blocks[id(block)] = block
    return c, uses


def splice_after(
    after: dict[int, list[Operation]], blocks: dict[int, Block], moved: set[int] | None = None
) -> None:
    """Put the ops queued in `after` (by `id` of an op of `blocks`) right after that op; an op
    of a block that is queued elsewhere (its `id` in `moved`) leaves its old place."""
    for block in blocks.values():
        ops: list[Operation] = []
        get = after.get
        for op in block.ops:
            if moved and id(op) in moved:
                continue
            ops.append(op)
            queued = get(id(op))
            if queued:
                _extend(ops, queued, get)
        block.ops = ops


def _extend(ops: list[Operation], queued: list[Operation], get: Callable) -> None:
    """`queued` into `ops`, each followed by what is queued after it in turn (an op the export
    moved after another, a redirected constraint, may have pins of its own)."""
    for q in queued:
        ops.append(q)
        more = get(id(q))
        if more:
            _extend(ops, more, get)


# -- the local selection: pin only where a neighbour could move a value -----------------------


def outermost(ops: list[Operation], gone: set[int]) -> set[int]:
    """The indexes in `ops` (a module walk) of the ops of `gone` (ids) that no other op of
    `gone` holds: what the oracle's module drops whole."""
    out = set()
    for k, op in enumerate(ops):
        if id(op) in gone:
            block = op.parent
            owner = block.parent.parent if isinstance(block, Block) and block.parent else None
            if owner is None or id(owner) not in gone:
                out.add(k)
    return out

