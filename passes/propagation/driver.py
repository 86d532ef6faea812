"""The propagation driver: the only code that walks the IR (reference/propagation.md §3, §7, §8).

The module is turned once into *units*: an op with a rule, a data-flow edge (while, case,
optimization_barrier, manual_computation, func.call), a propagation barrier or a function-result
link. Each unit reads and writes shardings through *slots* (a value, a func result, a manual
computation's local/global view). A worklist runs units to a fixed point, re-queueing only the
units that read a value whose sharding changed. Shardings only grow (a factor's axes are replaced
only by a list they are a strict prefix of), so every run terminates.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from shardc.dialect.ir import (
    Module,
    Operation,
    Value,
    callee_name,
    func_body,
    func_result_sharding,
    set_func_result_sharding,
    suspended_gc,
    symbol_name,
)
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import (
    AxisRef,
    DimSharding,
    ManualAxes,
    Mesh,
    ShardingPerValue,
    TensorSharding,
)
from shardc.dialect.types import TensorType

from .call_sites import split_call_sites
from .factor_propagation import STRATEGIES, Direction, Directions, StepInput
from .options import PropagationOptions
from .origins import OriginRecorder
from .policies import (
    ELEMENTWISE_OPS,
    NO_OP_PRIORITY_SCHEDULE,
    OP_PRIORITY_SCHEDULE,
    direction_at,
    user_priority_rounds,
)
from .projection import back_project, project

STRUCTURAL_OPS = frozenset(
    {
        "builtin.module",
        "func.func",
        "func.return",
        "stablehlo.return",
        "sdy.return",
        "sdy.mesh",
        "sdy.sharding_group",
    }
)
CONSTANT_OPS = frozenset({"stablehlo.constant", "sdy.constant", "stablehlo.iota"})
CONSTANT_EXPR_OPS = (
    frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.slice"})
    | ELEMENTWISE_OPS
)

# ---------------------------------------------------------------------------------------------
# Holders and slots


class Holder:
    """A sharding that is not an IR value's: a func result, or one use's view of a constant."""

    __slots__ = ("type", "sharding", "uses", "name")

    def __init__(self, type: object, sharding: TensorSharding | None, name: str):
        self.type = type
        self.sharding = sharding
        self.uses: list = []
        self.name = name


def _rank(t: object) -> int:
    return t.rank if isinstance(t, TensorType) else 0


def _num_elements(t: object) -> int:
    return t.num_elements() if isinstance(t, TensorType) else 1


class Slot:
    """Where a unit reads and writes one tensor's sharding (a value or a holder, as is)."""

    __slots__ = ("holder",)

    def __init__(self, holder: Value | Holder):
        self.holder = holder

    @property
    def type(self) -> object:
        return self.holder.type

    def get(self) -> TensorSharding | None:
        return self.holder.sharding

    def set(self, sharding: TensorSharding, prop: Propagator) -> None:
        prop.write(self.holder, sharding)


def _strip(s: TensorSharding, manual: frozenset[str]) -> TensorSharding:
    dims = tuple(
        DimSharding(tuple(a for a in d.axes if a.name not in manual), d.is_closed, d.priority)
        for d in s.dims
    )
    rep = tuple(a for a in s.replicated if a.name not in manual)
    unr = tuple(a for a in s.unreduced if a.name not in manual)
    return TensorSharding(s.mesh, dims, rep, unr)


def _manual_part(s: TensorSharding | None, rank: int, manual: frozenset[str]) -> list[tuple]:
    if s is None:
        return [()] * rank
    return [tuple(a for a in d.axes if a.name in manual) for d in s.dims]


def _with_manual(local: TensorSharding, parts: list[tuple], extra_rep: tuple) -> TensorSharding:
    dims = tuple(
        DimSharding(tuple(parts[i]) + d.axes, d.is_closed, d.priority)
        for i, d in enumerate(local.dims)
    )
    return TensorSharding(local.mesh, dims, local.replicated + extra_rep, local.unreduced)


class ManualArgSlot(Slot):
    """A manual_computation block argument seen globally: its manual axes put back in front."""

    __slots__ = ("global_type", "parts", "manual", "manual_rep")

    def __init__(
        self,
        arg: Value,
        global_type: object,
        original: TensorSharding | None,
        manual: frozenset[str],
    ):
        super().__init__(arg)
        self.global_type = global_type
        self.manual = manual
        self.parts = _manual_part(original, _rank(global_type), manual)
        self.manual_rep = tuple(
            a for a in (original.replicated if original else ()) if a.name in manual
        )

    @property
    def type(self) -> object:
        return self.global_type

    def get(self) -> TensorSharding | None:
        local = self.holder.sharding
        if local is None:
            return None
        return _with_manual(local, self.parts, self.manual_rep)

    def set(self, sharding: TensorSharding, prop: Propagator) -> None:
        prop.write(self.holder, _strip(sharding, self.manual))


class ManualResultSlot(Slot):
    """A manual_computation result seen locally: its manual axes taken out."""

    __slots__ = ("local_type", "manual")

    def __init__(self, result: Value, local_type: object, manual: frozenset[str]):
        super().__init__(result)
        self.local_type = local_type
        self.manual = manual

    @property
    def type(self) -> object:
        return self.local_type

    def get(self) -> TensorSharding | None:
        s = self.holder.sharding
        return None if s is None else _strip(s, self.manual)

    def set(self, sharding: TensorSharding, prop: Propagator) -> None:
        cur = self.holder.sharding
        parts = _manual_part(cur, sharding.rank, self.manual)
        rep = tuple(a for a in (cur.replicated if cur else ()) if a.name in self.manual)
        prop.write(self.holder, _with_manual(sharding, parts, rep))


# ---------------------------------------------------------------------------------------------
# Units


@dataclass(eq=False)
class Unit:
    """One propagation step's worth of IR: an op with its rule, an edge, a barrier, a link."""

    kind: str
    op_name: str
    rule: OpShardingRule
    operands: list[Slot]
    results: list[Slot]
    op: Operation | None = None
    call_target: str | None = None
    multi_use: bool = False
    elementwise: bool = False
    fixed_direction: Direction | None = None
    sizes: list[int] = field(default_factory=list)
    dims: list[tuple[tuple[int, ...], ...]] = field(default_factory=list)
    dirs: tuple[Direction, ...] = ()
    queued: bool = False

    def label(self) -> str:
        return self.op_name


def identity_rule(shape: tuple[int, ...], n_operands: int, n_results: int) -> OpShardingRule:
    """One pass-through factor per dim, shared by every tensor (edges, barriers, links)."""
    dims = tuple((i,) for i in range(len(shape)))
    return OpShardingRule(
        factor_sizes=tuple(max(d, 1) for d in shape),
        operand_dims=(dims,) * n_operands,
        result_dims=(dims,) * n_results,
        kinds=(FactorKind.PASS_THROUGH,) * len(shape),
    )


@dataclass
class PropagationReport:
    """What a propagation run did: ops without rules, rounds run, origins when recorded."""

    ops_without_rules: dict[str, int] = field(default_factory=dict)
    rounds: list[str] = field(default_factory=list)
    steps: int = 0
    updates: int = 0
    warnings: list[str] = field(default_factory=list)
    origins: OriginRecorder | None = None

    def lines(self) -> list[str]:
        out = []
        for name, n in sorted(self.ops_without_rules.items()):
            out.append(
                f"no sharding rule for {name} ({n} op{'s' if n != 1 else ''}): "
                "nothing propagates through it"
            )
        out.extend(self.warnings)
        out.append(f"rounds: {', '.join(self.rounds)}; {self.steps} steps, {self.updates} updates")
        if self.origins is not None:
            out.extend(self.origins.lines())
        return out


# ---------------------------------------------------------------------------------------------
# The propagator


class Propagator:
    """Builds the units of a module once, then runs the rounds of user and op priority."""

    def __init__(self, module: Module, options: PropagationOptions):
        self.module = module
        self.options = options
        self.report = PropagationReport()
        self.observer = OriginRecorder() if options.debug_origins else None
        self.report.origins = self.observer
        self.meshes: dict[str, Mesh] = {}
        self.mesh_alias: dict[str, str] = {}
        self.units: list[Unit] = []
        self.func_result_units: list[Unit] = []
        self.readers: dict[int, list[Unit]] = {}
        self.aliases: dict[int, list[Value | Holder]] = {}
        self.func_results: dict[tuple[str, int], Holder] = {}
        self.callee_returns: list[tuple[Operation, int, Value]] = []
        self.split_values: set[int] = set()
        self.constraints: list[Operation] = []
        self.manuals: list[tuple[Operation, list[ManualArgSlot]]] = []
        self.current: Unit | None = None
        self.round = ""
        self.strategy = STRATEGIES[options.strategy]
        self.holders: list[Value | Holder] = []
        self.queue: deque[Unit] = deque()

    # -- setup ---------------------------------------------------------------------------------
    def build(self) -> None:
        self._load_meshes()
        funcs = self.module.funcs
        callees = {
            callee_name(op)
            for op in self.module.walk()
            if op.name == "func.call"
        }
        self._find_constant_exprs()
        groups: list[list[Value | Holder]] = []
        for name, func in funcs.items():
            body = func_body(func)
            if body is None:
                continue
            for a in body.args:
                if a.sharding is not None:
                    a.sharding = self.norm(a.sharding)
                self.holders.append(a)
            if name not in callees:
                self._add_func_result_links(name, func)
            for op in func.walk():
                if op is func:
                    continue
                self._load_op(op)
                self._add_unit_for(op, funcs, groups)
        self._apply_closed_constraints()
        self._build_aliases(groups)
        for u in self.units:
            self._index(u)

    def _load_meshes(self) -> None:
        """Identical meshes are one mesh to propagation (G48). A duplicate's symbol is erased
        unless an op other than an sdy op names it (jax 0.11 collectives refer to a mesh in
        `replica_groups`): then it stays, and only shardings are renamed."""
        seen: dict[Mesh, str] = {}
        duplicates: list[Operation] = []
        for op in self.module.body.ops:
            if op.name != "sdy.mesh":
                continue
            name = symbol_name(op)
            mesh = self.module.meshes[name]
            if mesh in seen and mesh.axes:
                self.mesh_alias[name] = seen[mesh]
                duplicates.append(op)
                continue
            seen.setdefault(mesh, name)
            self.meshes[name] = mesh
        if duplicates:
            used = _symbols_named_by_non_sdy_ops(self.module, {symbol_name(d) for d in duplicates})
            for op in duplicates:
                if symbol_name(op) not in used:
                    op.erase()

    def resolve(self, s: TensorSharding) -> Mesh | None:
        if isinstance(s.mesh, Mesh):
            return s.mesh
        return self.meshes.get(s.mesh)

    def norm(self, s: TensorSharding) -> TensorSharding:
        """Canonical mesh name, size-1 axes removed (Shardy's import does both)."""
        if isinstance(s.mesh, str) and s.mesh in self.mesh_alias:
            s = TensorSharding(self.mesh_alias[s.mesh], s.dims, s.replicated, s.unreduced)
        mesh = self.resolve(s)
        if mesh is None or all(a.size > 1 for a in mesh.axes):
            return s
        ones = {a.name for a in mesh.axes if a.size == 1}

        def keep(axes: tuple[AxisRef, ...]) -> tuple[AxisRef, ...]:
            return tuple(a for a in axes if a.name not in ones)

        dims = tuple(
            DimSharding(
                keep(d.axes), d.is_closed, d.priority if keep(d.axes) or not d.is_closed else None
            )
            for d in s.dims
        )
        return TensorSharding(s.mesh, dims, keep(s.replicated), keep(s.unreduced))

    def _find_constant_exprs(self) -> None:
        """Values Shardy's constant splitter would give each use its own copy of."""
        if not self.options.split_constants:
            return
        const: set[int] = set()
        for op in self.module.walk():
            if op.name in CONSTANT_OPS:
                is_const = True
            elif op.name in CONSTANT_EXPR_OPS and op.operands:
                is_const = all(id(v) in const for v in op.operands) or (
                    op.name == "stablehlo.broadcast_in_dim" and _rank(op.operands[0].type) == 0
                )
            else:
                is_const = False
            if is_const:
                for r in op.results:
                    const.add(id(r))
                    if len(r.uses) > 1 and _rank(r.type) > 0:
                        self.split_values.add(id(r))

    def operand_slot(self, op: Operation, index: int) -> Slot:
        v = op.operands[index]
        if id(v) in self.split_values and v.uses and v.uses[0] != (op, index):
            h = Holder(v.type, v.sharding, f"use {index} of {op.name}")
            return Slot(h)
        return Slot(v)

    def _load_op(self, op: Operation) -> None:
        for r in op.results:
            if r.sharding is not None:
                r.sharding = self.norm(r.sharding)
            self.holders.append(r)
        if op.name == "sdy.sharding_constraint":
            s = op.properties["sharding"]
            if isinstance(s, str):
                from shardc.dialect.sharding_syntax import parse_tensor_sharding

                s = parse_tensor_sharding(s)
            op.results[0].sharding = self.norm(s)
            self.constraints.append(op)

    def _add_func_result_links(self, name: str, func: Operation) -> None:
        body = func_body(func)
        assert body is not None
        ret = body.terminator
        if ret is None:
            return
        for i, v in enumerate(ret.operands):
            s = func_result_sharding(func, i)
            h = Holder(v.type, self.norm(s) if s is not None else None, f"@{name} result {i}")
            self.func_results[(name, i)] = h
            self.holders.append(h)
            if _rank(v.type) == 0 and not isinstance(v.type, TensorType):
                continue
            shape = v.type.shape if isinstance(v.type, TensorType) else ()
            u = Unit(
                "func_result",
                "func.return",
                identity_rule(shape, 1, 1),
                [Slot(v)],
                [Slot(h)],
                fixed_direction=Directions.BOTH,
            )
            self._finish_unit(u)
            self.func_result_units.append(u)

    def _add_unit_for(
        self, op: Operation, funcs: dict[str, Operation], groups: list[list[Value | Holder]]
    ) -> None:
        name = op.name
        if name == "sdy.sharding_group":
            gid = str(op.properties.get("group_id", "0")).split(":")[0].strip()
            groups.append([("group", gid), op.operands[0]])  # type: ignore[list-item]
            return
        if name in STRUCTURAL_OPS:
            return
        if name == "stablehlo.while":
            self._add_while(op, groups)
        elif name == "stablehlo.case":
            self._add_case(op)
        elif name == "stablehlo.optimization_barrier":
            for i, r in enumerate(op.results):
                self._add_edge(op, [self.operand_slot(op, i)], Slot(r))
        elif name == "sdy.manual_computation":
            self._add_manual(op)
        elif name == "func.call":
            self._add_call(op, funcs)
        elif name in ("sdy.sharding_constraint", "sdy.propagation_barrier", "sdy.reshard"):
            r = op.results[0]
            shape = r.type.shape if isinstance(r.type, TensorType) else ()
            u = Unit(
                "barrier" if name == "sdy.propagation_barrier" else "op",
                name,
                identity_rule(shape, 1, 1),
                [self.operand_slot(op, 0)],
                [Slot(r)],
                op=op,
                elementwise=True,
            )
            if name == "sdy.propagation_barrier":
                raw = str(op.properties.get("allowed_direction", "0")).split(":")[0].strip()
                u.fixed_direction = _parse_direction(raw)
            self._finish_unit(u)
        else:
            self._add_rule_unit(op)

    def _add_rule_unit(self, op: Operation) -> None:
        from shardc.dialect.rules.registry import rule_for

        try:
            rule = rule_for(op)
        except Exception as e:  # noqa: BLE001 - a broken rule must not stop propagation
            self.report.warnings.append(f"sharding rule of {op.name} failed: {e}")
            rule = None
        if rule is None:
            if op.name not in CONSTANT_OPS and any(
                isinstance(v.type, TensorType) for v in (*op.operands, *op.results)
            ):
                self.report.ops_without_rules[op.name] = (
                    self.report.ops_without_rules.get(op.name, 0) + 1
                )
            return
        n_ops = len(rule.operand_dims)
        n_res = len(rule.result_dims)
        if n_ops != len(op.operands) or n_res != len(op.results):
            self.report.warnings.append(f"sharding rule of {op.name} does not match its arity")
            return
        target = op.attributes.get("call_target_name") or op.properties.get("call_target_name")
        u = Unit(
            "op",
            op.name,
            rule,
            [self.operand_slot(op, i) for i in range(n_ops)],
            [Slot(r) for r in op.results],
            op=op,
            call_target=str(target).strip('"') if target else None,
            elementwise=op.name in ELEMENTWISE_OPS,
        )
        self._finish_unit(u)

    def _add_edge(self, op: Operation, sources: list[Slot], target: Slot) -> None:
        t = target.type
        if not isinstance(t, TensorType) or t.rank == 0:
            return
        if any(not isinstance(s.type, TensorType) or s.type.shape != t.shape for s in sources):
            shape_ok = all(
                isinstance(s.type, TensorType) and s.type.rank == t.rank for s in sources
            )
            if not shape_ok:
                return
        u = Unit("edge", op.name, identity_rule(t.shape, len(sources), 1), sources, [target], op=op)
        self._finish_unit(u)

    def _add_while(self, op: Operation, groups: list[list[Value | Holder]]) -> None:
        cond = op.regions[0].entry
        body = op.regions[1].entry
        body_ret = body.terminator
        for i, r in enumerate(op.results):
            if not isinstance(r.type, TensorType) or r.type.rank == 0:
                continue
            sources = [self.operand_slot(op, i)]
            if body_ret is not None and i < len(body_ret.operands):
                sources.append(Slot(body_ret.operands[i]))
            self._add_edge(op, sources, Slot(r))
            groups.append([("edge", id(r)), r, cond.args[i], body.args[i]])  # type: ignore

    def _add_case(self, op: Operation) -> None:
        for i, r in enumerate(op.results):
            sources = []
            for region in op.regions:
                ret = region.entry.terminator
                if ret is not None and i < len(ret.operands):
                    sources.append(Slot(ret.operands[i]))
            self._add_edge(op, sources, Slot(r))

    def _add_manual(self, op: Operation) -> None:
        from shardc.dialect.sharding_syntax import parse_manual_axes, parse_sharding_per_value

        def shardings(key: str) -> list[TensorSharding]:
            raw = op.properties.get(key)
            if raw is None:
                return []
            if isinstance(raw, ShardingPerValue):
                return list(raw.shardings)
            return list(parse_sharding_per_value(str(raw)).shardings)

        ins = [self.norm(s) for s in shardings("in_shardings")]
        outs = [self.norm(s) for s in shardings("out_shardings")]
        raw_axes = op.properties.get("manual_axes")
        axes = raw_axes if isinstance(raw_axes, ManualAxes) else parse_manual_axes(str(raw_axes))
        mesh = self.resolve(ins[0] if ins else outs[0]) if (ins or outs) else None
        ones = {a.name for a in mesh.axes if a.size == 1} if mesh else set()
        names = [a for a in axes.axes if a not in ones]
        if mesh is not None:
            names.sort(key=lambda n: mesh.axis_index.get(n, 0))
        op.properties["manual_axes"] = ManualAxes(tuple(names))
        manual = frozenset(names)
        body = op.regions[0].entry
        arg_slots: list[ManualArgSlot] = []
        for i, arg in enumerate(body.args):
            original = ins[i] if i < len(ins) else None
            if original is not None:
                arg.sharding = _strip(original, manual)
            slot = ManualArgSlot(arg, op.operands[i].type, original, manual)
            arg_slots.append(slot)
            self._add_edge(op, [self.operand_slot(op, i)], slot)
        ret = body.terminator
        for i, r in enumerate(op.results):
            if i < len(outs):
                r.sharding = outs[i]
            if ret is None or i >= len(ret.operands):
                continue
            self._add_edge(
                op, [Slot(ret.operands[i])], ManualResultSlot(r, ret.operands[i].type, manual)
            )
        self.manuals.append((op, arg_slots))

    def _add_call(self, op: Operation, funcs: dict[str, Operation]) -> None:
        callee = funcs.get(callee_name(op))
        body = func_body(callee) if callee is not None else None
        if callee is None or body is None:
            self.report.ops_without_rules["func.call"] = (
                self.report.ops_without_rules.get("func.call", 0) + 1
            )
            return
        for i, arg in enumerate(body.args):
            if i < len(op.operands):
                self._add_edge(op, [self.operand_slot(op, i)], Slot(arg))
        ret = body.terminator
        for i, r in enumerate(op.results):
            if r.sharding is None:
                s = func_result_sharding(callee, i)
                if s is not None:
                    r.sharding = self.norm(s)
            if ret is not None and i < len(ret.operands):
                self._add_edge(op, [Slot(ret.operands[i])], Slot(r))
                self.callee_returns.append((callee, i, ret.operands[i]))

    def _finish_unit(self, u: Unit) -> None:
        slots = [*u.operands, *u.results]
        u.sizes = [_num_elements(s.type) for s in slots]
        u.dims = [*u.rule.operand_dims, *u.rule.result_dims]
        multi = False
        for s in u.operands:
            h = s.holder
            if _rank(s.type) > 0 and isinstance(h, Value) and id(h) not in self.split_values:
                if len(h.uses) > 1:
                    multi = True
                    break
        u.multi_use = multi
        if u.kind != "func_result":
            self.units.append(u)

    def _index(self, u: Unit) -> None:
        for s in (*u.operands, *u.results):
            self.readers.setdefault(id(s.holder), []).append(u)

    def _apply_closed_constraints(self) -> None:
        """§7.2: a fully closed constraint is copied onto its unsharded input."""
        for op in self.constraints:
            s = op.results[0].sharding
            v = op.operands[0]
            if s is None or v.sharding is not None:
                continue
            if not all(d.is_closed for d in s.dims):
                continue
            clash = False
            for user, _ in v.uses:
                if user is op:
                    continue
                if user.name == "sdy.sharding_constraint" and user.results[0].sharding != s:
                    clash = True
                elif user.name == "sdy.manual_computation":
                    clash = True
            if not clash:
                v.sharding = s

    def _build_aliases(self, groups: list[list]) -> None:
        """Union edge targets and sharding-group members: a write to one writes them all."""
        parent: dict[int, int] = {}
        objs: dict[int, Value | Holder] = {}

        def find(k: int) -> int:
            while parent[k] != k:
                parent[k] = parent[parent[k]]
                k = parent[k]
            return k

        def union(a: int, b: int) -> None:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra

        group_first: dict[str, int] = {}
        for g in groups:
            tag, members = g[0], g[1:]
            for m in members:
                objs.setdefault(id(m), m)
                parent.setdefault(id(m), id(m))
            for m in members[1:]:
                union(id(members[0]), id(m))
            if tag[0] == "group":
                key = tag[1]
                if key in group_first:
                    union(group_first[key], id(members[0]))
                else:
                    group_first[key] = id(members[0])
        classes: dict[int, list[Value | Holder]] = {}
        for k in parent:
            classes.setdefault(find(k), []).append(objs[k])
        for members in classes.values():
            if len(members) < 2:
                continue
            found = [
                m.sharding
                for m in members
                if m.sharding is not None and not m.sharding.is_fully_open()
            ]
            if found and any(s != found[0] for s in found[1:]):
                self.report.warnings.append(
                    "sharding group members disagree; keeping them apart: "
                    + ", ".join(s.body() for s in found)
                )
                continue
            if found:
                for m in members:
                    m.sharding = found[0]
            for m in members:
                self.aliases[id(m)] = members

    # -- writing -------------------------------------------------------------------------------
    def write(self, holder: Value | Holder, sharding: TensorSharding) -> None:
        members = self.aliases.get(id(holder))
        targets = members if members is not None else [holder]
        old = holder.sharding
        for t in targets:
            t.sharding = sharding
        self.report.updates += 1
        if self.observer is not None and self.current is not None:
            self.observer.update(
                holder, self.holder_name(holder), old, sharding, self.current.label(), self.round
            )
        cur = self.current
        for t in targets:
            for u in self.readers.get(id(t), ()):
                if u is not cur and not u.queued:
                    u.queued = True
                    self.queue.append(u)

    def holder_name(self, h: Value | Holder) -> str:
        if isinstance(h, Holder):
            return h.name
        owner = getattr(h, "owner", None)
        if owner is not None:
            loc = self.module.resolve_loc(owner.loc)
            return f"{owner.name} result {h.index}" + (f" at {loc}" if loc else "")
        return f"block arg {getattr(h, 'index', '?')}"

    # -- one step ------------------------------------------------------------------------------
    def step(self, u: Unit) -> None:
        slots = [*u.operands, *u.results]
        shardings = [s.get() for s in slots]
        mesh: Mesh | None = None
        ref: str | Mesh | None = None
        for s in shardings:
            if s is None:
                continue
            m = self.resolve(s)
            if m is None:
                return
            if not m.axes and m.device_ids is None:
                continue
            if mesh is None:
                mesh, ref = m, s.mesh
            elif m != mesh:
                return
        if mesh is None or ref is None or mesh.is_maximal:
            return
        sizes = u.rule.factor_sizes
        projs = [project(sh, u.dims[i], sizes, mesh) for i, sh in enumerate(shardings)]
        n = len(u.operands)
        step = StepInput(projs[:n], projs[n:], sizes, u.sizes, u.elementwise)
        dirs = u.dirs
        updated = self.strategy(step, lambda f: dirs[f], mesh)
        for i, upd in enumerate(updated):
            if not upd:
                continue
            old = shardings[i]
            new = back_project(
                projs[i], old, u.dims[i], sizes, mesh, old.mesh if old is not None else ref
            )
            if old is None:
                if not any(d.axes for d in new.dims):
                    continue
            elif new == old:
                continue
            self.current = u
            slots[i].set(new, self)

    # -- rounds --------------------------------------------------------------------------------
    def confirming_sweep(self) -> int:
        """Step every unit once more at the most permissive level; returns the updates made.

        Zero proves the fixed point (call before `write_back`)."""
        self.set_directions(OP_PRIORITY_SCHEDULE, len(OP_PRIORITY_SCHEDULE) - 1)
        before = self.report.updates
        self.queue = deque()
        for u in self.units:
            self.current = u
            self.step(u)
        for u in self.func_result_units:
            self.current = u
            self.step(u)
        for u in self.queue:
            u.queued = False
        self.queue.clear()
        self.current = None
        return self.report.updates - before

    def set_directions(self, schedule: tuple, level: int) -> list[Unit]:
        """Give every unit its factor directions at `level`; returns the units that changed.

        Directions depend only on what a unit is (op, kind, use count, rule), so units alike
        share one computation: rules are cached per shape, and big modules repeat a few ops."""
        conservative = self.options.conservative
        changed: list[Unit] = []
        memo: dict[tuple, tuple[Direction, ...]] = {}
        for u in (*self.units, *self.func_result_units):
            rule = u.rule
            key = (u.op_name, u.kind, u.multi_use, u.call_target, id(rule), u.fixed_direction)
            dirs = memo.get(key)
            if dirs is None:
                nf = len(rule.factor_sizes)
                if u.fixed_direction is not None:
                    d = u.fixed_direction
                    dirs = tuple(Directions.NONE if f in rule.blocked else d for f in range(nf))
                else:
                    out = []
                    for f in range(nf):
                        d = direction_at(schedule, level, u, f)
                        if conservative and rule.kinds[f] == FactorKind.PERMUTATION:
                            d = Directions.NONE
                        out.append(d)
                    dirs = tuple(out)
                memo[key] = dirs
            if dirs != u.dirs:
                u.dirs = dirs
                changed.append(u)
        return changed

    def run_to_fixed_point(self, only: list[Unit] | None = None) -> int:
        """Func-result links, the worklist until empty, func-result links again.

        `only`: the units to start from (default: all). When a round's level widens the
        directions, a unit whose directions did not change is already at its fixed point."""
        steps = 0
        self.queue = deque()
        for u in self.func_result_units:
            self.current = u
            self.step(u)
        # Program order first (it decides conflicts as Shardy does), then whatever the links woke.
        woken = list(self.queue)
        self.queue.clear()
        for u in woken:
            u.queued = False
        start = self.units if only is None else [u for u in only if u.kind != "func_result"]
        for u in (*start, *woken):
            if not u.queued:
                u.queued = True
                self.queue.append(u)
        cap = self.options.max_steps or (64 * len(self.units) + 10_000)
        while self.queue:
            u = self.queue.popleft()
            u.queued = False
            self.current = u
            self.step(u)
            steps += 1
            if steps > cap:
                self.report.warnings.append(f"worklist stopped after {steps} steps")
                for rest in self.queue:
                    rest.queued = False
                self.queue.clear()
                break
        for u in self.func_result_units:
            self.current = u
            self.step(u)
        for u in self.queue:
            u.queued = False
        self.queue.clear()
        self.current = None
        self.report.steps += steps
        return steps

    def run(self, write_back: bool = True) -> PropagationReport:
        priorities = self._init_priorities()
        schedule = OP_PRIORITY_SCHEDULE if self.options.op_priorities else NO_OP_PRIORITY_SCHEDULE
        if self.observer is not None:
            for h in self.holders:
                if h.sharding is not None:
                    self.observer.annotate(h, self.holder_name(h), h.sharding)
        self.queue = deque()
        for p in user_priority_rounds(set(priorities)):
            if p > 0:
                self._restore_priority(p, priorities[p])
            for level in range(len(schedule)):
                self.round = f"p{p}" + (f" op-priority {level}" if len(schedule) > 1 else "")
                changed = self.set_directions(schedule, level)
                # A round starts from every unit; a wider level only from units it widened.
                self.run_to_fixed_point(None if level == 0 else changed)
                self.report.rounds.append(self.round)
        if write_back:
            self.write_back()
        return self.report

    # -- user priorities -----------------------------------------------------------------------
    def _init_priorities(self) -> dict[int, list[tuple[Value | Holder, TensorSharding]]]:
        remembered: dict[int, list[tuple[Value | Holder, TensorSharding]]] = {}
        use = self.options.user_priorities
        for h in (*self.holders, *self.func_results.values()):
            s = h.sharding
            if s is None or all(d.priority is None for d in s.dims):
                continue
            mesh = self.resolve(s)
            dims = []
            rep = list(s.replicated)
            seen_p: set[int] = set()
            for d in s.dims:
                p = d.priority or 0
                if p == 0 or not use or mesh is None:
                    dims.append(DimSharding(d.axes, d.is_closed))
                else:
                    seen_p.add(p)
                    dims.append(DimSharding((), True))
                    rep.extend(d.axes)
            if mesh is not None:
                rep.sort(key=lambda a: a.sort_key(mesh))
            new = TensorSharding(s.mesh, tuple(dims), tuple(rep), s.unreduced)
            for p in seen_p:
                remembered.setdefault(p, []).append((h, s))
            self._set_quiet(h, new)
        return remembered

    def _set_quiet(self, h: Value | Holder, s: TensorSharding) -> None:
        for t in self.aliases.get(id(h), [h]):
            t.sharding = s

    def _restore_priority(self, p: int, entries: list) -> None:
        for h, original in entries:
            cur = h.sharding
            if cur is None:
                continue
            dims = list(cur.dims)
            restored: list[AxisRef] = []
            for i, d in enumerate(original.dims):
                if d.priority == p:
                    dims[i] = DimSharding(d.axes, d.is_closed)
                    restored.extend(d.axes)
            rep = tuple(a for a in cur.replicated if a not in restored)
            self._set_quiet(h, TensorSharding(cur.mesh, tuple(dims), rep, cur.unreduced))

    # -- results -------------------------------------------------------------------------------
    def write_back(self) -> None:
        """Leave the raw result on the IR: func results, constraints, manual in/out shardings."""
        for (name, i), h in self.func_results.items():
            if h.sharding is not None:
                set_func_result_sharding(self.module.funcs[name], i, h.sharding)
        for callee, i, v in self.callee_returns:
            if v.sharding is not None:
                set_func_result_sharding(callee, i, v.sharding)
        for op in self.constraints:
            s = op.results[0].sharding
            if s is not None:
                op.properties["sharding"] = s
            op.results[0].sharding = None
        for op, arg_slots in self.manuals:
            ins = []
            for slot in arg_slots:
                s = slot.get()
                ins.append(s if s is not None else self._default(slot.type))
            outs = []
            for r in op.results:
                outs.append(r.sharding if r.sharding is not None else self._default(r.type))
                r.sharding = None
            if ins:
                op.properties["in_shardings"] = ShardingPerValue(tuple(ins))
            if outs:
                op.properties["out_shardings"] = ShardingPerValue(tuple(outs))
            for a in op.regions[0].entry.args:
                a.sharding = None

    def _default(self, t: object) -> TensorSharding:
        mesh = next(iter(self.meshes), "mesh")
        return TensorSharding.open(mesh, _rank(t))


def _symbols_named_by_non_sdy_ops(module: Module, names: set[str]) -> set[str]:
    pattern = re.compile(r"@(" + "|".join(re.escape(n) for n in names) + r")\b")
    used: set[str] = set()
    for op in module.walk():
        if op.name.startswith("sdy.") or op.name in ("func.func", "builtin.module"):
            continue
        for attrs in (op.properties, op.attributes):
            if attrs:
                used.update(pattern.findall(attrs.body()))
    return used


def _parse_direction(raw: str) -> Direction:
    table = {
        "0": Directions.NONE,
        "1": Directions.FORWARD,
        "2": Directions.BACKWARD,
        "3": Directions.BOTH,
        "NONE": Directions.NONE,
        "FORWARD": Directions.FORWARD,
        "BACKWARD": Directions.BACKWARD,
        "BOTH": Directions.BOTH,
    }
    for key, d in table.items():
        if raw == key or raw.endswith(" " + key + ">") or raw.endswith(key):
            return d
    return Directions.NONE


def propagate(module: Module, options: PropagationOptions | None = None) -> PropagationReport:
    """Run the propagation on `module` (mutates it) and report what happened."""
    with suspended_gc():
        split_call_sites(module)  # the export merges or keeps them (call_sites.py)
        prop = Propagator(module, options or PropagationOptions())
        prop.build()
        return prop.run()


def all_shardings(module: Module) -> Iterable[tuple[str, TensorSharding | None]]:
    """Every value sharding of the module with a stable key (for fixed-point checks in tests)."""
    for fname, func in module.funcs.items():
        body = func_body(func)
        if body is None:
            continue
        for i, a in enumerate(body.args):
            yield f"@{fname} arg {i}", a.sharding
        for n, op in enumerate(func.walk()):
            for r in op.results:
                yield f"@{fname} op {n} {op.name} result {r.index}", r.sharding
            if op.name == "sdy.sharding_constraint":
                yield f"@{fname} op {n} constraint", op.properties.get("sharding")
