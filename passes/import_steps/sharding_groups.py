"""`import-sharding-groups`: values that must share one sharding start from one sharding.

Two kinds of classes, merged where they share a value: the members of an `sdy.sharding_group`
(all groups with one id), and a `stablehlo.while` loop's value chain (result i, condition
argument i, body argument i: Shardy's data-flow edge). A member's sharding is the one
propagation gives it: a constraint's (or reshard's) result has its constraint's, a manual
computation's result its out_sharding, its body argument the in_sharding's free axes. Where the
shardings a group's members carry agree (absent and fully open replicated ones aside), every
member gets that sharding; where they disagree, as in Shardy, a warning names them and each
member is followed by a fully open `sdy.sharding_constraint` that takes its place in the group
and in every use: the group then converges to a sharding every member can be resharded to. A
while chain whose members disagree keeps them apart. Propagation aliases each agreeing class
(a write to one writes all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from shardc.dialect.data_flow import CALL, SHARDY_EDGE_OPS, WALKED_FLOW_OPS, WHILE, edge_targets
from shardc.dialect.ir import BlockArgument, Module, Operation, OpResult, Value
from shardc.dialect.op_views import (
    MANUAL_COMPUTATION,
    SHARDING_GROUP,
    ManualComputation,
    ShardingConstraint,
    ShardingGroup,
)
from shardc.dialect.shardings import DimSharding, TensorSharding
from shardc.dialect.types import TensorType

from ..context import NONE, SAME_OPS, ImportNotes, OpList, PassContext


class _Held(Protocol):
    """Anything holding a sharding (propagation's stand-ins for values)."""

    sharding: TensorSharding | None


@dataclass(frozen=True)
class ImportShardingGroups:
    """The sharding-group import pass; no options."""

    name: ClassVar[str] = "import-sharding-groups"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        added = False
        if ctx.has_op(module, SHARDING_GROUP) or ctx.has_op(module, WHILE):
            warnings, added = import_sharding_groups(module, ctx.analysis(OpList, module))
            ImportNotes.of(ctx).warnings.extend(warnings)
        if not added:
            ctx.preserve(*SAME_OPS)  # (the op list outlives the pass unless constraints were added)


def import_sharding_groups(
    module: Module, ops: list[Operation] | None = None
) -> tuple[list[str], bool]:
    """Give each agreeing class one sharding, and each disagreeing group its open constraints;
    returns a warning per disagreeing class and whether ops were added (`ops`:
    `list(module.walk())`, when the caller has it)."""
    warnings = []
    added = False
    for gid, members in group_members(module, ops):
        found = _decided_shardings(members)
        if not found:
            continue
        if all(s == found[0] for s in found[1:]):
            for m in members:
                set_held_sharding(m, found[0])
            continue
        warnings.append(
            f"sharding group {gid}: its members' shardings do not match ("
            + ", ".join(s.body() for s in found)
            + "): each member is followed by an open sharding constraint"
        )
        placed: dict[int, list[int]] = {}
        for m in members:
            _constrain_open(m, found[0], placed)
        added = True
    if added:
        ops = None  # (the constraints are new ops: walk again)
    for members in sharding_classes(module, ops):
        found = _decided_shardings(members)
        if any(s != found[0] for s in found[1:]):
            warnings.append(
                "sharding group members disagree; keeping them apart: "
                + ", ".join(s.body() for s in found)
            )
        elif found:
            for m in members:
                set_held_sharding(m, found[0])
    return warnings, added


def _decided(s: TensorSharding | None) -> bool:
    return s is not None and not s.is_fully_open()


def _decided_shardings(members: list[Value]) -> list[TensorSharding]:
    """The members' shardings, absent and fully open replicated ones left out."""
    out = []
    for m in members:
        s = held_sharding(m)
        if s is not None and not s.is_fully_open():
            out.append(s)
    return out


def disagree(members: Sequence[Value | _Held]) -> bool:
    """Whether decided shardings of a class differ (then propagation keeps them apart)."""
    found = [m.sharding for m in members if _decided(m.sharding)]
    return bool(found) and any(s != found[0] for s in found[1:])


def held_sharding(v: Value) -> TensorSharding | None:
    """The sharding propagation starts `v` from, wherever the IR keeps it."""
    if isinstance(v, OpResult):
        op = v.owner
        if op.name in ShardingConstraint.OP_NAMES:
            return ShardingConstraint(op).sharding
        if op.name == MANUAL_COMPUTATION:
            outs = ManualComputation(op).out_shardings
            return outs[v.index] if v.index < len(outs) else v.sharding
    elif isinstance(v, BlockArgument):
        owner = _manual_owner(v)
        if owner is not None:
            ins = owner.in_shardings
            if v.index < len(ins):
                return _free_part(ins[v.index], frozenset(owner.manual_axes))
    return v.sharding


def set_held_sharding(v: Value, s: TensorSharding) -> None:
    """Write `s` where `held_sharding(v)` reads it (a manual computation's body argument keeps
    its manual axes in front)."""
    if isinstance(v, OpResult):
        op = v.owner
        if op.name in ShardingConstraint.OP_NAMES:
            ShardingConstraint(op).sharding = s
            return
        if op.name == MANUAL_COMPUTATION:
            view = ManualComputation(op)
            outs = list(view.out_shardings)
            if v.index < len(outs):
                outs[v.index] = _with_free_axes(outs[v.index], s, frozenset(view.manual_axes))
                view.out_shardings = tuple(outs)
                return
    elif isinstance(v, BlockArgument):
        owner = _manual_owner(v)
        if owner is not None and v.index < len(owner.in_shardings):
            ins = list(owner.in_shardings)
            ins[v.index] = _with_free_axes(ins[v.index], s, frozenset(owner.manual_axes))
            owner.in_shardings = tuple(ins)
            return
    v.sharding = s


def _with_free_axes(
    outer: TensorSharding, new: TensorSharding, manual: frozenset[str]
) -> TensorSharding:
    """A manual computation's in/out sharding `outer` with its manual axes kept in front and
    the free axes (and open dims) of `new`: the axes the region owns never change."""
    dims = tuple(
        DimSharding(
            tuple(a for a in o.axes if a.name in manual)
            + tuple(a for a in d.axes if a.name not in manual),
            d.is_closed,
            d.priority,
        )
        for o, d in zip(outer.dims, new.dims, strict=True)
    )
    replicated = tuple(a for a in outer.replicated if a.name in manual) + tuple(
        a for a in new.replicated if a.name not in manual
    )
    return TensorSharding(outer.mesh, dims, replicated, new.unreduced)


def _manual_owner(arg: BlockArgument) -> ManualComputation | None:
    op = arg.block.parent.parent if arg.block.parent is not None else None
    return ManualComputation(op) if op is not None and op.name == MANUAL_COMPUTATION else None


def _free_part(s: TensorSharding, manual: frozenset[str]) -> TensorSharding:
    """`s` without its manual axes (what a manual computation's body sees)."""
    if not manual:
        return s
    dims = tuple(
        DimSharding(tuple(a for a in d.axes if a.name not in manual), d.is_closed, d.priority)
        for d in s.dims
    )
    return s.with_dims(dims)


# ops whose results (and manual computation body arguments) are data-flow edge owners: Shardy
# reads such a value through its `sdy.data_flow_edge`, one per result or argument in index
# order, so the constraints after them come in index order too
_EDGE_OWNERS = (SHARDY_EDGE_OPS & WALKED_FLOW_OPS) - {CALL}  # (calls: named computations)


def _constrain_open(
    member: Value, like: TensorSharding, placed: dict[int, list[int]]
) -> None:
    """A fully open constraint (on `like`'s mesh) right after `member`, read instead of
    `member` by every use (its sharding group's included). Where Shardy's member is a data-flow
    edge, the constraints after one op's values (or one block's arguments) are in index order
    (`placed`: id of the op or block -> indexes constrained so far); elsewhere each goes right
    after the value, before the ones placed there earlier."""
    rank = member.type.rank if isinstance(member.type, TensorType) else 0
    if isinstance(member, OpResult):
        anchor: object = member.owner
        block = member.owner.parent
        start = block.ops.index(member.owner) + 1 if block is not None else 0
        edges = member.owner.name in _EDGE_OWNERS
        loc = member.owner.loc
    else:
        assert isinstance(member, BlockArgument)
        anchor = block = member.block
        start = 0
        owner = _manual_owner(member)
        edges = owner is not None
        loc = member.loc
    index = start
    if edges:
        done = placed.setdefault(id(anchor), [])
        index += sum(1 for i in done if i < member.index)
        done.append(member.index)
    c = ShardingConstraint.create(member, TensorSharding.open(like.mesh, rank), loc).op
    member.replace_all_uses_with(c.results[0])
    c.set_operand(0, member)
    if block is not None:
        block.insert(index, c)


def group_members(
    module: Module, ops: list[Operation] | None = None
) -> list[tuple[int, list[Value]]]:
    """Each sharding group (groups sharing a value merged) as (smallest id, members in IR
    order)."""
    parent: dict[int, int] = {}
    members: dict[int, list[Value]] = {}
    seen: dict[int, int] = {}  # id(value) -> the group id it was first seen in

    def find(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    order: list[tuple[int, Value]] = []
    for op in module.walk() if ops is None else ops:
        if op.name != SHARDING_GROUP:
            continue
        gid = ShardingGroup(op).group_id
        parent.setdefault(gid, gid)
        v = op.operands[0]
        first = seen.setdefault(id(v), gid)
        a, b = find(first), find(gid)
        if a != b:
            parent[max(a, b)] = min(a, b)
        order.append((gid, v))
    listed: set[int] = set()
    for gid, v in order:
        if id(v) in listed:
            continue
        listed.add(id(v))
        members.setdefault(find(gid), []).append(v)
    return sorted(members.items())


def sharding_classes(module: Module, ops: list[Operation] | None = None) -> list[list[Value]]:
    """Every class of two or more values tied by sharding groups or while loops, in IR order
    (`ops`: `list(module.walk())`, when the caller has it)."""
    parent: dict[int, int] = {}
    objs: dict[int, Value] = {}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    def add(members: list[Value]) -> None:
        for m in members:
            objs.setdefault(id(m), m)
            parent.setdefault(id(m), id(m))
        for m in members[1:]:
            union(id(members[0]), id(m))

    group_first: dict[int, int] = {}
    for op in module.walk() if ops is None else ops:
        if op.name == SHARDING_GROUP:
            v = op.operands[0]
            add([v])
            gid = ShardingGroup(op).group_id
            if gid in group_first:
                union(group_first[gid], id(v))
            else:
                group_first[gid] = id(v)
        elif op.name == WHILE:  # (a loop's result and its regions' arguments)
            for r in op.results:
                if isinstance(r.type, TensorType) and r.type.rank > 0:
                    add(edge_targets(r))
    classes: dict[int, list[Value]] = {}
    for k in parent:
        classes.setdefault(find(k), []).append(objs[k])
    return [members for members in classes.values() if len(members) >= 2]
