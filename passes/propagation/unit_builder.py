"""How a module becomes propagation units (docs/propagation.md §1, §3, §7).

`ModuleUnits.build` walks the module once, after the import steps (passes/import_steps/) have
put it in the form propagation expects (constants split per use by `split-constants`): one unit
per op with a rule and per data-flow edge, edge targets and sharding-group members aliased, and
for every holder the units that read it. An op whose rule has no factor in two tensors (a scalar
op, a broadcast of a scalar) gets no unit: no step through it could change anything. Ops alike
(name, types, attribute texts) share one rule lookup. Building changes nothing on the IR: a
value whose sharding the IR keeps on an op (a constraint's or reshard's result, a manual
computation's body arguments and results) is held during propagation by a stand-in `Holder`
(`stand_ins`), which the driver's `write_back` writes into that op at the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from operator import attrgetter

from shardc.dialect.data_flow import (
    CALL,
    DATA_FLOW_EDGE,
    FUNC_DATA_FLOW_EDGE,
    KIND_OF,
    NAMED_COMPUTATION,
    OPTIMIZATION_BARRIER,
    SHARDY_EDGE_OPS,
    SHARDY_REGION_RESULT_OPS,
    WALKED_FLOW_OPS,
    FlowKind,
    callee,
    operand_source,
    region_arg_sources,
    returned_sources,
    shardy_main_func,
)
from shardc.dialect.ir import (
    BlockArgument,
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    func_body,
)
from shardc.dialect.op_views import (
    MANUAL_COMPUTATION,
    RESHARD,
    SHARDING_CONSTRAINT,
    Func,
    ManualComputation,
    NamedComputation,
    ShardingConstraint,
)
from shardc.dialect.rules.builder import identity_rule
from shardc.dialect.rules.model import OpShardingRule
from shardc.dialect.rules.registry import (
    RULE_ATTR,
    checked_rule,
    registered_ops,
    rule_keyed_on_signature,
)
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType

from ..import_steps.constants import CONSTANT_OPS
from ..import_steps.constraints import redirects_manual_operand, redirects_uses
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
    SlotLike,
    Unit,
    holder_of,
    is_call_arg_edge,
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

PROPAGATION_BARRIER = "sdy.propagation_barrier"
# ops whose one result is its operand under a sharding of its own (an identity unit)
_IDENTITY_OPS = frozenset({SHARDING_CONSTRAINT, PROPAGATION_BARRIER, DATA_FLOW_EDGE})

# the data-flow ops whose edges are units (data_flow.py): those Shardy puts edges on (a named
# computation's too: propagation crosses it as Shardy's does, though the walkers after it do not)
_EDGE_KINDS = {n: KIND_OF[n] for n in SHARDY_EDGE_OPS & (WALKED_FLOW_OPS | {NAMED_COMPUTATION})}

# ops `_add_units_of` does not hand to `_add_rule_unit` (every other op is a rule unit's)
_SPECIAL_OPS = STRUCTURAL_OPS | frozenset(_EDGE_KINDS) | _IDENTITY_OPS | {FUNC_DATA_FLOW_EDGE, RESHARD}


class ModuleUnits:
    """The units of one module and the indexes the driver runs them with, built once."""

    def __init__(
        self,
        module: Module,
        options: PropagationOptions,
        report: PropagationReport,
        ops: list[Operation] | None = None,
    ):
        self.module = module
        # every op, pre-order (`list(module.walk())`; the pipeline's shared list when given)
        self._ops = ops
        self.options = options
        self.report = report
        self.meshes: dict[str, Mesh] = module.meshes
        self.units: list[Unit] = []
        self.func_result_units: list[Unit] = []
        # holder -> the func-result links that read it (they are stepped by the driver, not
        # woken: a write only tells them they may change again, `Unit.clean`)
        self.result_watchers: dict[Value | Holder, list[Unit]] = {}
        # holder -> the units that read it: one unit, a tuple of a few, or a list of many
        self.readers: dict[Value | Holder, Unit | tuple[Unit, ...] | list[Unit]] = {}
        self.aliases: dict[int, list[Value | Holder]] = {}
        self.func_results: dict[tuple[str, int], Holder] = {}
        self.callee_returns: list[tuple[Operation, int, Value | Holder]] = []
        self.constraints: list[Operation] = []
        # equal size/dims tuples of units alike, stored once (a module repeats its layers)
        self._interned: dict[tuple, tuple] = {}
        # id(rule) -> (`_tensor_sizes`, its dims: operands then results)
        self._rule_shapes: dict[int, tuple[tuple[int, ...], tuple]] = {}
        self._rules: list[object] = []
        # a reshard's result has the reshard's sharding; propagation never looks through it
        self.reshards: list[Operation] = []
        self.manuals: list[tuple[Operation, list[ManualArgSlot]]] = []
        # named computations: their in/out shardings are their stand-ins', written back at the end
        self.named: list[Operation] = []
        self.holders: list[Value | Holder] = []
        self.dead: set[int] = set()  # ops Shardy would erase as dead before propagating
        # id(value) -> the holder of its working sharding, for values whose sharding is an op's
        self.stand_ins: dict[int, Holder] = {}
        # id(data-flow target) -> what its readers read instead (a closed constraint's result
        # holder) and the one reader that reads the target itself (that constraint; None for
        # the constraint a manual computation's closed in_sharding stands for, which has no op)
        self.redirects: dict[int, tuple[Holder | Value, Operation | None]] = {}
        self._made_constraints: dict[int, Holder] = {}  # id(target) -> the op-less one's result
        self._redirected_uses: dict[int, list[tuple[Operation, int]]] = {}  # id(holder) -> uses
        self._loaded: set[str] = set()  # funcs whose ops have units
        self._callees: set[str] = set()
        # ops alike (the key in `_add_rule_unit`) -> their rule's entry (`_rule_entry`): a
        # module repeats a few hundred signatures over thousands of ops
        self._by_signature: dict[tuple, tuple] = {}
        # ops whose rule can move nothing get no unit (`_moves_nothing`), unless a step cap
        # counts steps (`max_steps`): how many were left out (the default cap counts them)
        self.skip_trivial = not options.max_steps
        self.trivial = 0
        self._keyed: dict[str, bool | str] = {}  # op name -> _rule_lookup_of(name)
        self._has_manual = False  # a manual computation anywhere (value_slot has more to do)
        # callees shared by their call sites (`sdy.func_data_flow_edge`s in the module, as
        # Shardy's dedup-functions-fully leaves it): only those edges cross a call, and every
        # func's units come in module order; callee -> its calls
        self._func_edges = False
        self._calls_of: dict[str, list[Operation]] = {}

    def build(self) -> None:
        funcs = self.module.funcs
        if self._ops is None:
            self._ops = list(self.module.walk())
        # (before the stand-ins: a dead constraint sends no reader through itself)
        self.dead = dead_ops(
            self.module,
            self._ops,
            xla=self.options.xla_dead_code,
            constraints=self.options.xla_dead_constraints,
        )
        self._make_stand_ins()  # (and the callees, in the same pass over the ops)
        if self._func_edges:
            self._callees.clear()  # (no callee is inlined where it is called)
        callees = self._callees
        # A callee's units go where its call is, as in Shardy, which inlines it there (each call
        # site has its own callee: import_steps/call_sites.py); the rest in module order.
        for name, func in funcs.items():
            if name not in callees:
                self._load_func(name, func, funcs)
        for name, func in funcs.items():
            if name not in self._loaded:
                self._load_func(name, func, funcs)
        self._build_aliases()

    def _load_func(self, name: str, func: Operation, funcs: dict[str, Operation]) -> None:
        self._loaded.add(name)
        body = func_body(func)
        if body is None:
            return
        self.holders.extend(body.args)
        if self._func_edges:  # (as Shardy: the main func's results only)
            if name == shardy_main_func(funcs):
                self._add_func_result_links(name, func)
        elif name not in self._callees:
            self._add_func_result_links(name, func)
        # pre-order, but a while's or case's edges after its regions, where Shardy's
        # `sdy.data_flow_edge` ops are (the order decides what a sweep sees); iterative: a
        # stack of (a block's ops still to load, the op whose unit comes when they are done)
        holders = self.holders
        stand_ins = self.stand_ins
        dead = self.dead
        add_rule_unit = self._add_rule_unit
        add_units_of = self._add_units_of
        stack: list[tuple[Iterator[Operation], Operation | None]] = [(iter(body.ops), None)]
        while stack:
            ops, after = stack[-1]
            for op in ops:
                if stand_ins:
                    for r in op.results:
                        holders.append(stand_ins.get(id(r), r))
                else:
                    holders += op.results
                live = id(op) not in dead
                if op.regions:
                    deferred = live and op.name in SHARDY_REGION_RESULT_OPS
                    if live and not deferred:
                        self._add_unit_for(op, funcs)
                    # its regions' ops next, then (for a while or case) its own unit
                    stack.append((iter(()), op if deferred else None))
                    for region in reversed(op.regions):
                        for block in reversed(region.blocks):
                            stack.append((iter(block.ops), None))
                    break
                if live:
                    if op.name in _SPECIAL_OPS:
                        add_units_of(op, funcs)
                    else:
                        add_rule_unit(op)
                    if self._made_constraints:
                        self._add_made_constraints(op)
            else:
                stack.pop()
                if after is not None:
                    self._add_unit_for(after, funcs)

    def resolve(self, s: TensorSharding) -> Mesh | None:
        if isinstance(s.mesh, Mesh):
            return s.mesh
        return self.meshes.get(s.mesh)

    def _make_stand_ins(self) -> None:
        """Holders for the values whose sharding lives on an op, made before any slot reads one
        (a func's result link or a while's body may read a value defined later in the walk);
        the names of the funcs called (`_callees`), in the same pass over the ops."""
        assert self._ops is not None
        callees = self._callees
        for op in self._ops:
            name = op.name
            if name == CALL:
                callees.add(callee_name(op))
                self._calls_of.setdefault(callee_name(op), []).append(op)
            elif name == FUNC_DATA_FLOW_EDGE:
                self._func_edges = True
            elif name in ShardingConstraint.OP_NAMES:
                r = op.results[0]
                self._stand_in(r, ShardingConstraint(op).sharding, "target")
                (self.constraints if name == SHARDING_CONSTRAINT else self.reshards).append(op)
                if (
                    redirects_uses(op)
                    and id(op.operands[0]) not in self.redirects
                    and id(op) not in self.dead
                ):
                    self._redirect(op)
            elif name == MANUAL_COMPUTATION:
                self._has_manual = True
                for i, v in enumerate(op.operands):
                    s = redirects_manual_operand(op, i)
                    if s is not None and id(v) not in self.redirects:
                        self._redirect_to_made_constraint(v, s)
                view = ManualComputation(op)
                ins, outs = view.in_shardings, view.out_shardings
                manual = frozenset(view.manual_axes)
                for i, arg in enumerate(op.regions[0].entry.args):
                    local = strip_manual(ins[i], manual) if i < len(ins) else arg.sharding
                    self._stand_in(arg, local, f"body arg {i}")
                for i, r in enumerate(op.results):
                    self._stand_in(r, outs[i] if i < len(outs) else r.sharding, f"result {i}")
            elif name == NAMED_COMPUTATION:
                named = NamedComputation(op)
                ins, outs = named.in_shardings, named.out_shardings
                for i, arg in enumerate(op.regions[0].entry.args if op.regions else ()):
                    self._stand_in(arg, ins[i] if i < len(ins) else arg.sharding, f"body arg {i}")
                for i, r in enumerate(op.results):
                    self._stand_in(r, outs[i] if i < len(outs) else r.sharding, f"result {i}")

    def _redirect(self, c: Operation) -> None:
        """Readers of `c`'s input but `c` read `c`'s result: their uses count as its uses."""
        v, r = c.operands[0], c.results[0]
        self.redirects[id(v)] = (self.held(r), c)
        self._redirected_uses[id(self.held(r))] = [
            *r.uses, *((u, i) for u, i in v.uses if u is not c)
        ]
        self._redirected_uses[id(v)] = [(c, 0)]

    def _redirect_to_made_constraint(self, v: Value, s: TensorSharding) -> None:
        """Every reader of `v` reads a closed constraint to `s` that Shardy makes after `v`
        (its unit comes right after `v`'s op: `_add_made_constraints`)."""
        h = Holder(v.type, s, f"constraint made for {v}")
        self.redirects[id(v)] = (h, None)
        self._made_constraints[id(v)] = h
        self._redirected_uses[id(h)] = list(v.uses)
        self._redirected_uses[id(v)] = []

    def _add_made_constraints(self, op: Operation) -> None:
        for r in op.results:
            h = self._made_constraints.get(id(r))
            if h is None:
                continue
            shape = r.type.shape if isinstance(r.type, TensorType) else ()
            u = Unit(
                "op",
                "sdy.sharding_constraint",
                identity_rule(tuple(shape)),
                [self.held(r)],
                [h],
                elementwise=True,
            )
            self._finish_unit(u)

    def _stand_in(self, v: Value, sharding: TensorSharding | None, what: str) -> None:
        self.stand_ins[id(v)] = Holder(v.type, sharding, f"{what} of {v}", of=v)

    def held(self, v: Value) -> Value | Holder:
        """What holds `v`'s sharding during propagation: its stand-in, or `v` itself."""
        return self.stand_ins.get(id(v), v)

    def operand_slot(self, op: Operation, index: int) -> SlotLike:
        return self.value_slot(op.operands[index], op)

    def value_slot(self, v: Value, reader: Operation | None = None) -> SlotLike:
        """`v` as a reader sees it; a manual computation's result keeps its manual axes; a
        data-flow target with a closed constraint is read through the constraint (as Shardy
        redirects its uses), by every reader but the constraint."""
        if self.redirects:
            redirect = self.redirects.get(id(v))
            if redirect is not None and redirect[1] is not reader:
                return redirect[0]
        if isinstance(v, OpResult) and v.owner.name == MANUAL_COMPUTATION:
            axes = ManualComputation(v.owner).manual_axes
            if axes:  # (size-one axes among them are dropped later: none can be added)
                return ManualBoundarySlot(self.held(v), frozenset(axes))
        return self.held(v)

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
                [h],
                fixed_direction=Directions.BOTH,
            )
            self._finish_unit(u)
            self.func_result_units.append(u)
            for s in u.slots:
                self.result_watchers.setdefault(holder_of(s), []).append(u)

    def _add_unit_for(self, op: Operation, funcs: dict[str, Operation]) -> None:
        self._add_units_of(op, funcs)
        if self._made_constraints:
            self._add_made_constraints(op)

    def _add_units_of(self, op: Operation, funcs: dict[str, Operation]) -> None:
        name = op.name
        if name in STRUCTURAL_OPS:
            return
        kind = _EDGE_KINDS.get(name)
        if kind is FlowKind.REGION:
            if name == MANUAL_COMPUTATION:
                self._add_manual(op)
            else:
                self._add_named(op)
        elif kind is FlowKind.CALL:
            if not self._func_edges:  # (else only the func data-flow edges cross it)
                self._add_call(op, funcs)
        elif kind is not None:  # a loop, a branch, a barrier: an edge on every result
            self._add_result_edges(op)
        elif name == FUNC_DATA_FLOW_EDGE:
            self._add_func_edge(op, funcs)
        elif name == RESHARD:
            return  # no rule (docs/op_rules.md §3.9): nothing crosses it; its result is fixed above
        elif name in _IDENTITY_OPS:
            r = op.results[0]
            shape = r.type.shape if isinstance(r.type, TensorType) else ()
            u = Unit(
                "barrier" if name == PROPAGATION_BARRIER else "op",
                name,
                identity_rule(tuple(shape)),
                [self.operand_slot(op, 0)],
                [self.held(r)],
                op=op,
                elementwise=True,
            )
            if name == PROPAGATION_BARRIER:
                raw = str(op.properties.get("allowed_direction", "0")).split(":")[0].strip()
                u.fixed_direction = parse_direction(raw)
            self._finish_unit(u)
        else:
            self._add_rule_unit(op)

    def _add_rule_unit(self, op: Operation) -> None:
        name = op.name
        key = None
        keyed = self._keyed.get(name)
        if keyed is None:
            keyed = self._keyed[name] = _rule_lookup_of(name, self.options.conservative)
        if keyed is _CONSTANT:
            if RULE_ATTR not in op.attributes:
                return  # (no rule, and a constant is not counted: `_rule_entry`'s _NOTHING)
        elif keyed:
            # what decides the rule (rule_keyed_on_signature): the name, the attribute texts
            # (None once a dict was changed since parsing) and the operand and result types, by
            # identity (the parser interns types; the module keeps them alive meanwhile)
            props = op.properties.text_key()
            attrs = op.attributes.text_key()
            if props is not None and attrs is not None:
                key = (
                    name,
                    props,
                    attrs,
                    *map(id, map(_type_of, op.operands)),
                    None,
                    *map(id, map(_type_of, op.results)),
                )
        entry = self._by_signature.get(key) if key is not None else None
        if entry is None:
            entry = self._rule_entry(op)
            if key is not None:
                self._by_signature[key] = entry
        rule, what, sizes, dims = entry
        if what is not _UNIT:
            if what is _NO_RULE:
                self.report.ops_without_rules[name] = self.report.ops_without_rules.get(name, 0) + 1
            elif what is _TRIVIAL:
                self.trivial += 1
            return
        target = None
        if name == "stablehlo.custom_call":  # (reading attributes parses their text)
            target = op.attributes.get("call_target_name") or op.properties.get(
                "call_target_name"
            )
        stand_ins = self.stand_ins
        if self.redirects or self._has_manual:
            operands = [self.value_slot(v, op) for v in op.operands]
            results = [stand_ins.get(id(r), r) for r in op.results]
        elif stand_ins:
            operands = [stand_ins.get(id(v), v) for v in op.operands]
            results = [stand_ins.get(id(r), r) for r in op.results]
        else:  # (most modules: every slot is the IR value itself)
            operands, results = op.operands, op.results
        u = Unit(
            "op",
            name,
            rule,
            operands,
            results,
            op,
            str(target).strip('"') if target else None,
            name in ELEMENTWISE_OPS,
        )
        u.sizes = sizes
        u.dims = dims
        if self._redirected_uses:
            multi_use = self._multi_use
            for s in operands:
                if multi_use(s):
                    u.multi_use = True
                    break
        else:
            for s in operands:
                # (a value read once is not multi-use: most operands, decided without a call)
                if (not isinstance(s, Value) or s.num_uses > 1) and self._multi_use(s):
                    u.multi_use = True
                    break
        self.units.append(u)
        if operands is op.operands:  # (plain values: `_index`, inline)
            readers = self.readers
            for v in u.slots:
                users = readers.get(v)
                if users is None:
                    readers[v] = u
                elif isinstance(users, Unit):
                    readers[v] = (users, u)
                elif isinstance(users, tuple):
                    readers[v] = (*users, u) if len(users) < 8 else [*users, u]
                else:
                    users.append(u)
        else:
            self._index(u)

    def _rule_entry(self, op: Operation) -> tuple:
        """(rule, what to do, element counts, rule dims) of `op`: a unit, none (no rule counted
        in the report; one that can move nothing: `_moves_nothing`; an unusable one, noted)."""
        rule, why = checked_rule(op, self.options.conservative)
        if why is not None:  # (ops alike have a rule alike: noted once for all of them)
            self.report.rule_problems.note(op.name, why)
            return (None, _NOTHING, (), ())
        if rule is None:
            counted = op.name not in CONSTANT_OPS and any(
                isinstance(v.type, TensorType) for v in (*op.operands, *op.results)
            )
            return (None, _NO_RULE if counted else _NOTHING, (), ())
        rule = block_dynamic_dims(rule, [v.type for v in (*op.operands, *op.results)])
        if self.skip_trivial and _moves_nothing(rule):
            return (rule, _TRIVIAL, (), ())
        return (rule, _UNIT, *self._shape_of(rule))

    def _add_edge(self, op: Operation, sources: list[SlotLike], target: SlotLike) -> None:
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

    def _add_result_edges(self, op: Operation) -> None:
        """The edge on every result of a loop, branch or barrier: its own operand (as `op`
        reads it) and what its regions return are the sources (data_flow.py)."""
        for i, r in enumerate(op.results):
            if not isinstance(r.type, TensorType) or r.type.rank == 0:
                continue
            own = operand_source(op, i)
            sources = [] if own is None else [self.operand_slot(op, i)]
            sources += [self.value_slot(v) for v in returned_sources(op, i)]
            self._add_edge(op, sources, self.held(r))

    def _add_manual(self, op: Operation) -> None:
        view = ManualComputation(op)
        ins = view.in_shardings
        manual = frozenset(view.manual_axes)
        arg_slots: list[ManualArgSlot] = []
        for i, (arg, operand) in enumerate(region_arg_sources(op)):
            original = ins[i] if i < len(ins) else None
            slot = ManualArgSlot(self.held(arg), operand.type, original, manual)
            arg_slots.append(slot)
            self._add_edge(op, [self.operand_slot(op, i)], slot)
        for i, r in enumerate(op.results):
            for local in returned_sources(op, i):
                self._add_edge(
                op,
                    [self.held(local)],
                    ManualResultSlot(self.held(r), local.type, manual),
                )
        self.manuals.append((op, arg_slots))

    def _add_named(self, op: Operation) -> None:
        """A named computation's edges, as if its body were inline: operand i to body argument
        i, the body's returned value i to result i."""
        for i, (arg, _) in enumerate(region_arg_sources(op)):
            self._add_edge(op, [self.operand_slot(op, i)], self.held(arg))
        for i, r in enumerate(op.results):
            for v in returned_sources(op, i):
                self._add_edge(op, [self.value_slot(v)], self.held(r))
        self.named.append(op)

    def _add_call(self, op: Operation, funcs: dict[str, Operation]) -> None:
        func = callee(op, funcs)
        body = func_body(func) if func is not None else None
        if func is None or body is None:
            self.report.ops_without_rules[CALL] = self.report.ops_without_rules.get(CALL, 0) + 1
            return
        for i, arg in enumerate(body.args):
            if i < len(op.operands):
                self._add_edge(op, [self.operand_slot(op, i)], self.held(arg))
        name = callee_name(op)
        if name not in self._loaded:
            self._load_func(name, func, funcs)
        for i, r in enumerate(op.results):
            for v in returned_sources(op, i, funcs):
                self._add_edge(op, [self.value_slot(v)], self.held(r))
                self.callee_returns.append((func, i, self.held(v)))

    def _add_func_edge(self, op: Operation, funcs: dict[str, Operation]) -> None:
        """A `sdy.func_data_flow_edge`: on a func argument, its sources are that operand of
        every call of the func; on a call result, the callee's returned value."""
        v = op.operands[0]
        sources: list[SlotLike] = []
        if isinstance(v, BlockArgument):
            func = v.block.parent.parent if v.block.parent is not None else None
            if func is not None and func.name == "func.func":
                for call in self._calls_of.get(Func(func).name, ()):
                    if v.index < len(call.operands):
                        sources.append(self.operand_slot(call, v.index))
        elif isinstance(v, OpResult) and v.owner.name == CALL:
            func = callee(v.owner, funcs)
            for ret in returned_sources(v.owner, v.index, funcs):
                returned = self.value_slot(ret)
                sources.append(returned)
                self.callee_returns.append((func, v.index, holder_of(returned)))
        if sources:  # (a func nothing calls has none: nothing to do, as in Shardy)
            self._add_edge(op, sources, self.held(op.results[0]))

    def _finish_unit(self, u: Unit) -> None:
        u.rule = block_dynamic_dims(u.rule, [s.type for s in u.slots])
        u.sizes, u.dims = self._shape_of(u.rule)
        self._append_unit(u)

    def _shape_of(self, rule: OpShardingRule) -> tuple[tuple[int, ...], tuple]:
        """`_tensor_sizes(rule)` and the rule's dims (operands then results), interned, once
        per rule object (rules are shared by ops alike)."""
        shape = self._rule_shapes.get(id(rule))
        if shape is None:
            sizes, dims = _tensor_sizes(rule), rule.operand_dims + rule.result_dims
            shape = (self._interned.setdefault(sizes, sizes), self._interned.setdefault(dims, dims))
            self._rule_shapes[id(rule)] = shape
            self._rules.append(rule)  # (keeps the id valid while the builder lives)
        return shape

    def _append_unit(self, u: Unit) -> None:
        # An edge is Shardy's `sdy.data_flow_edge` on its owner, whose one use it is: an edge is
        # never multi-use, whatever its sources' uses.
        u.multi_use = u.kind != "edge" and any(self._multi_use(s) for s in u.operands)
        if u.kind != "func_result":
            self.units.append(u)
            self._index(u)

    def _multi_use(self, s: SlotLike) -> bool:
        """A non-scalar value that more than one live op reads."""
        if isinstance(s, Value) and s.num_uses < 2 and not self._redirected_uses:
            return False  # (most operands: a value with one use)
        h = holder_of(s)
        redirected = self._redirected_uses.get(id(h)) if self._redirected_uses else None
        users: Iterable[Operation]
        if redirected is not None:
            if len(redirected) < 2:
                return False
            users = (user for user, _ in redirected)
        else:
            if isinstance(h, Holder):
                h = h.of  # a stand-in: its value's uses (None for other holders)
            if h is None or h.num_uses < 2:
                return False
            users = h.users
        if rank_of(s.type) == 0:
            return False
        dead = self.dead
        live = 0
        for user in users:
            if id(user) not in dead:
                live += 1
                if live > 1:
                    return True
        return False

    def _index(self, u: Unit) -> None:
        """`u` among the readers of each of its holders (as it joins `units`: each holder's
        readers in unit order)."""
        # a call's argument edge is not woken by its operand (units.is_call_arg_edge)
        slots = u.slots
        if u.kind == "edge" and is_call_arg_edge(u):
            slots = u.results
        readers = self.readers
        for s in slots:
            key = s.holder if isinstance(s, Slot) else s  # (hashed by identity)
            users = readers.get(key)
            if users is None:
                readers[key] = u  # most holders have one or two readers: no list for them
            elif isinstance(users, Unit):
                readers[key] = (users, u)
            elif isinstance(users, tuple) and len(users) < 8:
                readers[key] = (*users, u)
            elif isinstance(users, tuple):
                readers[key] = [*users, u]
            else:
                users.append(u)

    def _build_aliases(self) -> None:
        """Sharding-group members and a while loop's value chain are one holder to propagation:
        a write to one writes them all (import-sharding-groups gave each class one sharding,
        or warned and left the members apart where they disagree)."""
        for members in sharding_classes(self.module, self._ops):
            aliased: list[Value | Holder] = [self.held(m) for m in members]
            if disagree(aliased):
                continue
            for m in aliased:
                self.aliases[id(m)] = aliased


_type_of = attrgetter("type")

# a constant op name with no registered rule: without an attached rule, no unit and no count
_CONSTANT = "constant"


def _rule_lookup_of(name: str, conservative: bool) -> bool | str:
    """How `_add_rule_unit` finds the rule of ops named `name`: memoized on their signature
    (True), looked up per op (False), or none for a rule-less constant (`_CONSTANT`, about a
    fifth of a train step's ops: each differs in its value, so no signature memo helps)."""
    if name in CONSTANT_OPS and name not in registered_ops():
        return _CONSTANT
    return rule_keyed_on_signature(name, conservative)

# what `_rule_entry` says to do with an op
_UNIT, _NO_RULE, _NOTHING, _TRIVIAL = "unit", "no rule", "nothing", "trivial"


def block_dynamic_dims(rule: OpShardingRule, types: list[object]) -> OpShardingRule:
    """`rule` with every factor of a dynamic dim of its tensors (`types`, operands then results)
    blocked: a dim of unknown size is never sharded by propagation (its tensor's static dims
    propagate as usual). Most rules touch no dynamic dim and come back as they are."""
    blocked: set[int] | None = None
    for t, dims in zip(types, (*rule.operand_dims, *rule.result_dims), strict=False):
        if isinstance(t, TensorType) and -1 in t.shape:
            for d, size in enumerate(t.shape):
                if size < 0 and d < len(dims):
                    if blocked is None:
                        blocked = set(rule.blocked)
                    blocked.update(dims[d])
    if blocked is None or blocked == rule.blocked:
        return rule
    return replace(rule, blocked=frozenset(blocked))


def _tensor_sizes(rule: OpShardingRule) -> tuple[int, ...]:
    """Each tensor's size as the conflict rule of factor propagation weighs it (operands then
    results): the product of the sizes of the factors its dims map, as Shardy's aggressive
    propagation takes a factor's source tensor size. It is the element count wherever each dim
    is its factors, not where a rule gives a dim a factor of another tensor's size: a
    concatenate's operands take the result's concat dim, a slice's or a pad's result the
    operand's (`RuleBuilder`'s sizes, as Shardy's builder gives them); a dim with no factor
    (a conservative concatenate's concat dim) counts as 1."""
    out = []
    sizes = rule.factor_sizes
    for tensor in (*rule.operand_dims, *rule.result_dims):
        n = 1
        for f in {f for dim in tensor for f in dim}:
            n *= max(sizes[f], 0)
        out.append(n)
    return tuple(out)


def _moves_nothing(rule: OpShardingRule) -> bool:
    """No factor is in two of the rule's tensors (a scalar op, a broadcast of a scalar): a
    step through it never changes a sharding, whatever its directions and shardings (each
    factor's candidate axes are a prefix of its one tensor's own: factor_propagation.py)."""
    seen: set[int] = set()
    for tensor in (*rule.operand_dims, *rule.result_dims):
        factors = {f for dim in tensor for f in dim}
        if not seen.isdisjoint(factors):
            return False
        seen |= factors
    return True


# stablehlo ops with effects (or that MLIR's dead-code rules keep): never dead
_EFFECTFUL = frozenset({
    "stablehlo.custom_call", "stablehlo.all_reduce", "stablehlo.all_gather",
    "stablehlo.all_to_all", "stablehlo.reduce_scatter", "stablehlo.collective_permute",
    "stablehlo.collective_broadcast", "stablehlo.send", "stablehlo.recv", "stablehlo.infeed",
    "stablehlo.outfeed", "stablehlo.after_all", "stablehlo.create_token",
    OPTIMIZATION_BARRIER, "stablehlo.rng_bit_generator", "stablehlo.rng",
    "stablehlo.composite",
})  # fmt: skip


# ops with regions that jaxlib's pipeline keeps until after propagation even when dead: those
# whose results Shardy's edges own (data_flow.SHARDY_REGION_RESULT_OPS)
_KEPT_WITH_REGIONS = SHARDY_REGION_RESULT_OPS


def dead_ops(
    module: Module,
    ops: list[Operation] | None = None,
    xla: bool = False,
    constraints: bool = False,
) -> set[int]:
    """ids of the side-effect-free stablehlo/chlo ops whose results only dead ops use.

    Shardy's pipeline erases such ops before it propagates (MLIR's trivially-dead rule, to a
    fixed point), so they pull no axes into the values they read; shardc keeps them in its
    output (the same ops in the same order) but lets them decide nothing. An op with regions
    (reduce, sort, scatter, reduce_window, map, if) is erased too when nothing in its regions
    has an effect, and everything in it with it; a `while` or a `case` is not (checked against
    jaxlib's pipeline). `xla`: what XLA deletes before its own Shardy runs (its dead-code and
    call-inlining passes): also unused calls of effect-free callees, loops and conditionals;
    with `constraints`, unused sharding constraints too (XLA drops them as well, see
    `PropagationOptions.xla_dead_constraints`).
    `ops`: `list(module.walk())`, when the caller has it."""
    removable: dict[int, bool] = {}  # id(op) -> whether it may be erased once unused
    funcs = module.funcs if xla else {}
    pure_funcs: dict[str, bool] = {}

    def can_remove(op: Operation) -> bool:
        got = removable.get(id(op))
        if got is None:
            got = removable[id(op)] = (
                _removable(op, funcs, pure_funcs, constraints) if xla else _removable(op)
            )
        return got

    unused: list[Operation] = []  # removable ops none of whose results has a use
    for op in module.walk() if ops is None else ops:
        results = op.results
        if not results:
            continue
        for r in results:
            if r.num_uses:
                break
        else:
            if can_remove(op):
                unused.append(op)
    if not unused:
        return set()
    dead: set[int] = set()

    def users_dead(op: Operation) -> bool:
        for r in op.results:
            for user in r.users:
                if id(user) not in dead:
                    return False
        return True

    # The least fixed point ("every user is dead"), by a worklist from the ops with no use at
    # all (every dead op is one, or reached from one): when an op dies, with its regions' ops,
    # the producers of what they read are looked at again.
    stack = unused[::-1]
    while stack:
        gone = stack.pop()
        if id(gone) in dead:
            continue
        inner_ops = list(gone.walk())  # the op and its regions' ops
        dead.update(id(inner) for inner in inner_ops)
        for inner in inner_ops:
            for v in inner.operands:
                if isinstance(v, OpResult):
                    p = v.owner
                    if id(p) not in dead and can_remove(p) and users_dead(p):
                        stack.append(p)
    return dead


def _removable(
    op: Operation,
    funcs: dict[str, Operation] | None = None,
    pure_funcs: dict[str, bool] | None = None,
    constraints: bool = False,
) -> bool:
    """Whether `op` goes once unused: Shardy's rule, or with `funcs` (the module's) XLA's,
    which also removes loops, conditionals and calls of callees without effects (and, with
    `constraints`, sharding constraints)."""
    if not op.results:
        return False
    if funcs is not None and pure_funcs is not None:
        if op.name == CALL:
            return _pure_func(callee_name(op), funcs, pure_funcs)
        if op.name == SHARDING_CONSTRAINT:
            # XLA's `Sharding` custom call has no effect: its dead-code pass drops it
            return constraints
        if not _effect_free(op):
            return False
        return all(
            _effect_free(inner)
            or inner.name in _REGION_TERMINATORS
            or (inner.name == CALL and _pure_func(callee_name(inner), funcs, pure_funcs))
            for inner in op.walk()
        )
    if not _effect_free(op):
        return False
    if op.regions:
        return op.name not in _KEPT_WITH_REGIONS and all(
            _effect_free(inner) for inner in op.walk()
        )
    return True


# ops that end a region or func and compute nothing
_REGION_TERMINATORS = frozenset({"stablehlo.return", "func.return", "sdy.return"})


def _pure_func(name: str, funcs: dict[str, Operation], pure: dict[str, bool]) -> bool:
    """Whether func `name` (and every func it calls) is free of effects (an unknown or
    recursive callee is not)."""
    got = pure.get(name)
    if got is not None:
        return got
    pure[name] = False  # (a call cycle is not known to be pure)
    func = funcs.get(name)
    body = func_body(func) if func is not None else None
    if body is None:
        return False
    ok = True
    for op in func.walk():  # type: ignore[union-attr]
        if op is func or op.name in _REGION_TERMINATORS:
            continue
        if op.name == CALL:
            if not _pure_func(callee_name(op), funcs, pure):
                ok = False
                break
        elif not _effect_free(op):
            ok = False
            break
    pure[name] = ok
    return ok


_EFFECT_FREE_DIALECTS = ("stablehlo.", "chlo.")


def _effect_free(op: Operation) -> bool:
    return op.name not in _EFFECTFUL and op.name.startswith(_EFFECT_FREE_DIALECTS)

