"""How a module becomes propagation units (reference/propagation.md §1 steps 2-12, §7, §8).

`ModuleUnits.build` walks the module once, after the import steps (passes/import_steps/) have
put it in the form propagation expects: constants split per use (as views, not copies), one unit
per op with a rule and per data-flow edge, edge targets and sharding-group members aliased, and
for every holder the units that read it. Building changes no sharding on the IR except the
propagation's own working state (a constraint's result holds its target sharding, a manual
computation's body arguments and results their local and global shardings), which the driver's
`write_back` moves back into the ops.
"""

from __future__ import annotations

from shardc.dialect.ir import (
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    func_body,
)
from shardc.dialect.op_views import Func, ManualComputation, ShardingConstraint
from shardc.dialect.rules.builder import identity_rule
from shardc.dialect.rules.registry import rule_for
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType

from ..import_steps.sharding_groups import disagree, sharding_classes
from .factor_propagation import Directions
from .options import PropagationOptions
from .policies import ELEMENTWISE_OPS
from .report import PropagationReport
from .units import (
    Holder,
    ManualArgSlot,
    ManualBoundarySlot,
    ManualResultSlot,
    Slot,
    Unit,
    is_call_arg_edge,
    num_elements,
    parse_direction,
    rank_of,
    strip_manual,
)

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


# ops whose result edges Shardy places after the op, its regions included
_EDGES_AFTER_REGIONS = frozenset({"stablehlo.while", "stablehlo.case"})


class ModuleUnits:
    """The units of one module and the indexes the driver runs them with, built once."""

    def __init__(self, module: Module, options: PropagationOptions, report: PropagationReport):
        self.module = module
        self.options = options
        self.report = report
        self.meshes: dict[str, Mesh] = module.meshes
        self.units: list[Unit] = []
        self.func_result_units: list[Unit] = []
        self.readers: dict[int, list[Unit]] = {}
        self.aliases: dict[int, list[Value | Holder]] = {}
        self.func_results: dict[tuple[str, int], Holder] = {}
        self.callee_returns: list[tuple[Operation, int, Value]] = []
        self.split_values: set[int] = set()
        self.constraints: list[Operation] = []
        # equal size/dims tuples of units alike, stored once (a module repeats its layers)
        self._interned: dict[tuple, tuple] = {}
        # a reshard's result has the reshard's sharding; propagation never looks through it
        self.reshards: list[Operation] = []
        self.manuals: list[tuple[Operation, list[ManualArgSlot]]] = []
        self.holders: list[Value | Holder] = []
        self.dead: set[int] = set()  # ops Shardy would erase as dead before propagating
        self._loaded: set[str] = set()  # funcs whose ops have units
        self._callees: set[str] = set()

    def build(self) -> None:
        funcs = self.module.funcs
        callees = {callee_name(op) for op in self.module.walk() if op.name == "func.call"}
        self._find_constant_exprs()
        self.dead = dead_ops(self.module)
        self._callees = callees
        # A callee's units go where its call is, as in Shardy, which inlines it there (each call
        # site has its own callee: import_steps/call_sites.py); the rest in module order.
        for name, func in funcs.items():
            if name not in callees:
                self._load_func(name, func, funcs)
        for name, func in funcs.items():
            if name not in self._loaded:
                self._load_func(name, func, funcs)
        self._build_aliases()
        for u in self.units:
            self._index(u)

    def _load_func(self, name: str, func: Operation, funcs: dict[str, Operation]) -> None:
        self._loaded.add(name)
        body = func_body(func)
        if body is None:
            return
        self.holders.extend(body.args)
        if name not in self._callees:
            self._add_func_result_links(name, func)
        # pre-order, but a while's or case's edges after its regions, where Shardy's
        # `sdy.data_flow_edge` ops are (the order decides what a sweep sees); iterative
        stack: list[tuple[bool, Operation]] = [(False, op) for op in reversed(body.ops)]
        while stack:
            after, op = stack.pop()
            if after:
                self._add_unit_for(op, funcs)
                continue
            self._load_op(op)
            if id(op) not in self.dead:
                if op.name in _EDGES_AFTER_REGIONS:
                    stack.append((True, op))
                else:
                    self._add_unit_for(op, funcs)
            for region in reversed(op.regions):
                for block in reversed(region.blocks):
                    stack.extend((False, o) for o in reversed(block.ops))

    def resolve(self, s: TensorSharding) -> Mesh | None:
        if isinstance(s.mesh, Mesh):
            return s.mesh
        return self.meshes.get(s.mesh)

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
                    op.name == "stablehlo.broadcast_in_dim" and rank_of(op.operands[0].type) == 0
                )
            else:
                is_const = False
            if is_const:
                for r in op.results:
                    const.add(id(r))
                    if len(r.uses) > 1 and rank_of(r.type) > 0:
                        self.split_values.add(id(r))

    def operand_slot(self, op: Operation, index: int) -> Slot:
        v = op.operands[index]
        if id(v) in self.split_values and v.uses and v.uses[0] != (op, index):
            h = Holder(v.type, v.sharding, f"use {index} of {op.name}")
            return Slot(h)
        return self.value_slot(v)

    def value_slot(self, v: Value) -> Slot:
        """`v` as a reader sees it; a manual computation's result keeps its manual axes."""
        if isinstance(v, OpResult) and v.owner.name == "sdy.manual_computation":
            axes = ManualComputation(v.owner).manual_axes
            if axes:  # (size-one axes among them are dropped later: none can be added)
                return ManualBoundarySlot(v, frozenset(axes))
        return Slot(v)

    def _load_op(self, op: Operation) -> None:
        self.holders.extend(op.results)
        if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
            op.results[0].sharding = ShardingConstraint(op).sharding
            (self.constraints if op.name == "sdy.sharding_constraint" else self.reshards).append(op)

    def _add_func_result_links(self, name: str, func: Operation) -> None:
        body = func_body(func)
        assert body is not None
        ret = body.terminator
        if ret is None:
            return
        view = Func(func)
        for i, v in enumerate(ret.operands):
            s = view.result_sharding(i)
            h = Holder(v.type, s, f"@{name} result {i}")
            self.func_results[(name, i)] = h
            self.holders.append(h)
            if rank_of(v.type) == 0 and not isinstance(v.type, TensorType):
                continue
            shape = v.type.shape if isinstance(v.type, TensorType) else ()
            u = Unit(
                "func_result",
                "func.return",
                identity_rule(tuple(shape)),
                [self.value_slot(v)],
                [Slot(h)],
                fixed_direction=Directions.BOTH,
            )
            self._finish_unit(u)
            self.func_result_units.append(u)

    def _add_unit_for(self, op: Operation, funcs: dict[str, Operation]) -> None:
        name = op.name
        if name in STRUCTURAL_OPS:
            return
        if name == "stablehlo.while":
            self._add_while(op)
        elif name == "stablehlo.case":
            self._add_case(op)
        elif name == "stablehlo.optimization_barrier":
            for i, r in enumerate(op.results):
                self._add_edge(op, [self.operand_slot(op, i)], Slot(r))
        elif name == "sdy.manual_computation":
            self._add_manual(op)
        elif name == "func.call":
            self._add_call(op, funcs)
        elif name == "sdy.reshard":
            return  # no rule (reference): nothing crosses it; its result is fixed above
        elif name in ("sdy.sharding_constraint", "sdy.propagation_barrier", "sdy.data_flow_edge"):
            r = op.results[0]
            shape = r.type.shape if isinstance(r.type, TensorType) else ()
            u = Unit(
                "barrier" if name == "sdy.propagation_barrier" else "op",
                name,
                identity_rule(tuple(shape)),
                [self.operand_slot(op, 0)],
                [Slot(r)],
                op=op,
                elementwise=True,
            )
            if name == "sdy.propagation_barrier":
                raw = str(op.properties.get("allowed_direction", "0")).split(":")[0].strip()
                u.fixed_direction = parse_direction(raw)
            self._finish_unit(u)
        else:
            self._add_rule_unit(op)

    def _add_rule_unit(self, op: Operation) -> None:
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
        u = Unit("edge", op.name, identity_rule(t.shape, len(sources)), sources, [target], op=op)
        self._finish_unit(u)

    def _add_while(self, op: Operation) -> None:
        body = op.regions[1].entry
        body_ret = body.terminator
        for i, r in enumerate(op.results):
            if not isinstance(r.type, TensorType) or r.type.rank == 0:
                continue
            sources = [self.operand_slot(op, i)]
            if body_ret is not None and i < len(body_ret.operands):
                sources.append(self.value_slot(body_ret.operands[i]))
            self._add_edge(op, sources, Slot(r))

    def _add_case(self, op: Operation) -> None:
        for i, r in enumerate(op.results):
            sources = []
            for region in op.regions:
                ret = region.entry.terminator
                if ret is not None and i < len(ret.operands):
                    sources.append(self.value_slot(ret.operands[i]))
            self._add_edge(op, sources, Slot(r))

    def _add_manual(self, op: Operation) -> None:
        view = ManualComputation(op)
        ins = view.in_shardings
        outs = view.out_shardings
        manual = frozenset(view.manual_axes)
        body = op.regions[0].entry
        arg_slots: list[ManualArgSlot] = []
        for i, arg in enumerate(body.args):
            original = ins[i] if i < len(ins) else None
            if original is not None:
                arg.sharding = strip_manual(original, manual)
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
        name = callee_name(op)
        if name not in self._loaded:
            self._load_func(name, callee, funcs)
        ret = body.terminator
        for i, r in enumerate(op.results):
            if ret is not None and i < len(ret.operands):
                self._add_edge(op, [self.value_slot(ret.operands[i])], Slot(r))
                self.callee_returns.append((callee, i, ret.operands[i]))

    def _finish_unit(self, u: Unit) -> None:
        slots = [*u.operands, *u.results]
        sizes = tuple(num_elements(s.type) for s in slots)
        u.sizes = self._interned.setdefault(sizes, sizes)
        dims = u.rule.operand_dims + u.rule.result_dims
        u.dims = self._interned.setdefault(dims, dims)
        multi = False
        # An edge is Shardy's `sdy.data_flow_edge` on its owner, whose one use it is: an edge is
        # never multi-use, whatever its sources' uses.
        for s in () if u.kind == "edge" else u.operands:
            h = s.holder
            if rank_of(s.type) > 0 and isinstance(h, Value) and id(h) not in self.split_values:
                if sum(id(user) not in self.dead for user, _ in h.uses) > 1:
                    multi = True
                    break
        u.multi_use = multi
        if u.kind != "func_result":
            self.units.append(u)

    def _index(self, u: Unit) -> None:
        # a call's argument edge is not woken by its operand (units.is_call_arg_edge)
        slots: tuple[Slot, ...] | list[Slot] = (*u.operands, *u.results)
        if is_call_arg_edge(u):
            slots = u.results
        for s in slots:
            self.readers.setdefault(id(s.holder), []).append(u)

    def _build_aliases(self) -> None:
        """Sharding-group members and a while loop's value chain are one holder to propagation:
        a write to one writes them all (import-sharding-groups gave each class one sharding,
        or warned and left the members apart where they disagree)."""
        for members in sharding_classes(self.module):
            if disagree(members):
                continue
            aliased: list[Value | Holder] = list(members)
            for m in members:
                self.aliases[id(m)] = aliased


# stablehlo ops with effects (or that MLIR's dead-code rules keep): never dead
_EFFECTFUL = frozenset({
    "stablehlo.custom_call", "stablehlo.all_reduce", "stablehlo.all_gather",
    "stablehlo.all_to_all", "stablehlo.reduce_scatter", "stablehlo.collective_permute",
    "stablehlo.collective_broadcast", "stablehlo.send", "stablehlo.recv", "stablehlo.infeed",
    "stablehlo.outfeed", "stablehlo.after_all", "stablehlo.create_token",
    "stablehlo.optimization_barrier", "stablehlo.rng_bit_generator", "stablehlo.rng",
    "stablehlo.composite",
})  # fmt: skip


def dead_ops(module: Module) -> set[int]:
    """ids of the side-effect-free stablehlo/chlo ops whose results only dead ops use.

    Shardy's pipeline erases such ops before it propagates (MLIR's trivially-dead rule, to a
    fixed point), so they pull no axes into the values they read; shardc keeps them in its
    output (the same ops in the same order) but lets them decide nothing."""
    ops = [op for op in module.walk() if _removable(op)]
    ops.reverse()  # users before producers, nested regions before the ops holding them
    dead: set[int] = set()
    changed = True
    while changed:
        changed = False
        for op in ops:
            if id(op) in dead:
                continue
            if all(id(user) in dead for r in op.results for user, _ in r.uses):
                dead.add(id(op))
                changed = True
    return dead


def _removable(op: Operation) -> bool:
    if op.regions or not op.results or op.name in _EFFECTFUL:
        return False
    return op.name.startswith(("stablehlo.", "chlo."))

