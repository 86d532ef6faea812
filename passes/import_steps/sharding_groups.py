"""`import-sharding-groups`: values that must share one sharding start from one sharding.

Two kinds of classes, merged where they share a value: the members of an `sdy.sharding_group`
(all groups with one id), and a `stablehlo.while` loop's value chain (result i, condition
argument i, body argument i: Shardy's data-flow edge). Where a class's members carry shardings
that agree, every member gets that sharding; where they disagree, a warning names them and the
members stay apart. Propagation aliases each agreeing class (a write to one writes all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from shardc.dialect.ir import Module, Operation, Value
from shardc.dialect.op_views import SHARDING_GROUP, ShardingGroup
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import TensorType

from ..context import PassContext


class _Held(Protocol):
    """Anything holding a sharding (propagation's stand-ins for values)."""

    sharding: TensorSharding | None


@dataclass(frozen=True)
class ImportShardingGroups:
    """The sharding-group import pass; no options."""

    name: ClassVar[str] = "import-sharding-groups"
    changes_ir: ClassVar[bool] = True
    keeps_ops: ClassVar[bool] = True

    def run(self, module: Module, ctx: PassContext) -> None:
        if ctx.has_op(module, SHARDING_GROUP) or ctx.has_op(module, "stablehlo.while"):
            ctx.warnings.extend(import_sharding_groups(module, ctx.ops(module)))


def import_sharding_groups(module: Module, ops: list[Operation] | None = None) -> list[str]:
    """Give each agreeing class one sharding; returns a warning per disagreeing class (`ops`:
    `list(module.walk())`, when the caller has it)."""
    warnings = []
    for members in sharding_classes(module, ops):
        if disagree(members):
            warnings.append(
                "sharding group members disagree; keeping them apart: "
                + ", ".join(m.sharding.body() for m in members if m.sharding is not None
                            and _decided(m.sharding))
            )
            continue
        found = agreed_sharding(members)
        if found is not None:
            for m in members:
                m.sharding = found
    return warnings


def _decided(s: TensorSharding | None) -> bool:
    return s is not None and not s.is_fully_open()


def agreed_sharding(members: list[Value]) -> TensorSharding | None:
    """The one decided sharding of a class; None if none is decided or they disagree."""
    found = [m.sharding for m in members if _decided(m.sharding)]
    if not found or any(s != found[0] for s in found[1:]):
        return None
    return found[0]


def disagree(members: Sequence[Value | _Held]) -> bool:
    """Whether decided shardings of a class differ (then propagation keeps them apart)."""
    found = [m.sharding for m in members if _decided(m.sharding)]
    return bool(found) and any(s != found[0] for s in found[1:])


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
        elif op.name == "stablehlo.while":
            cond, body = op.regions[0].entry, op.regions[1].entry
            for i, r in enumerate(op.results):
                if isinstance(r.type, TensorType) and r.type.rank > 0:
                    add([r, cond.args[i], body.args[i]])
    classes: dict[int, list[Value]] = {}
    for k in parent:
        classes.setdefault(find(k), []).append(objs[k])
    return [members for members in classes.values() if len(members) >= 2]
