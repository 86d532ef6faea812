"""The propagation driver: the worklist rounds and the write-back (docs/propagation.md §3-§8).

`unit_builder.py` turns the module once into units (ops with rules, data-flow edges, barriers,
func-result links) that read and write shardings through slots. The driver runs the rounds of
user priority (p0, p1, ...) and, inside each, the op-priority levels; each level runs a worklist
to a fixed point, re-queueing only the units that read a value whose sharding changed. The
worklist is the one MLIR's greedy driver gives Shardy: every unit in program order, then a stack
(a unit woken after it ran runs next), because the order decides conflicts. Shardings
only grow (a factor's axes are replaced only by a list they are a strict prefix of), so every run
terminates. At the end the raw result is written back onto the IR for the export.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import ClassVar

from shardc.dialect.data_flow import DATA_FLOW_EDGE
from shardc.dialect.ir import (
    Module,
    Operation,
    Value,
    func_body,
)
from shardc.dialect.op_views import Func, ManualComputation, NamedComputation, ShardingConstraint
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding

from ..context import SAME_OPS, ImportNotes, OpList, PassContext
from .explain import Namer, dump_lines, explain_lines
from .factor_propagation import STRATEGIES, Direction, Directions, StepInput
from .options import PropagationOptions
from .origins import OriginRecorder
from .policies import (
    NO_OP_PRIORITY_SCHEDULE,
    OP_PRIORITY_SCHEDULE,
    direction_at,
    user_priority_rounds,
)
from .projection import back_project, project
from .report import PropagationReport
from .unit_builder import ModuleUnits
from .units import ANY_DIRS, Holder, Slot, Unit, holder_of, is_call_arg_edge, rank_of

_sharding_of = attrgetter("sharding")

__all__ = ["PropagatePass", "PropagationReport", "Propagator", "all_shardings", "propagate"]


class Propagator:
    """Runs the rounds of user and op priority over a module's units (built once by `build`)."""

    def __init__(
        self, module: Module, options: PropagationOptions, ops: list[Operation] | None = None
    ):
        self.module = module
        self.options = options
        self.report = PropagationReport()
        self.observer = OriginRecorder() if options.debug_origins else None
        self.report.origins = self.observer
        self.graph = ModuleUnits(module, options, self.report, ops)
        self.current: Unit | None = None
        self.round = ""
        self.strategy = STRATEGIES[options.strategy]
        self.queue: deque[Unit] = deque()
        self.step_memo: dict[tuple, tuple[tuple[int, TensorSharding], ...]] = {}
        self.step_kinds: dict[tuple, int] = {}  # what besides shardings decides a step -> id
        self.shardings: dict[TensorSharding, TensorSharding] = {}  # the steps' new ones
        # units alike in what decides their directions (set_directions), grouped once
        self._direction_classes: list[tuple[Unit, list[Unit]]] | None = None

    def build(self) -> None:
        """Build the units; their indexes are bound here because the worklist reads them a lot."""
        g = self.graph
        g.build()
        self.units = g.units
        self.func_result_units = g.func_result_units
        self.result_watchers = g.result_watchers
        self.readers = g.readers
        self.aliases = g.aliases
        self.holders = g.holders
        self.func_results = g.func_results
        self.meshes = g.meshes
        self.resolve = g.resolve

    # -- writing -------------------------------------------------------------------------------
    def write(self, holder: Value | Holder, sharding: TensorSharding) -> None:
        members = self.aliases.get(id(holder))
        targets = members if members is not None else [holder]
        for t in targets:
            t.sharding = sharding
        self.report.updates += 1
        cur = self.current
        readers = self.readers
        watchers = self.result_watchers
        for t in targets:
            if watchers:
                links = watchers.get(t)
                if links is not None:
                    for u in links:
                        u.clean = None
            users = readers.get(t)
            if users is None:
                continue
            if isinstance(users, Unit):  # (one reader: stored without a tuple, unit_builder)
                users = (users,)
            for u in users:
                u.clean = None
                if u is not cur and not u.queued:
                    u.queued = True
                    self.queue.append(u)

    # -- one step ------------------------------------------------------------------------------
    def step(self, u: Unit) -> None:
        """Propagate through one unit and write back what grew.

        A step's outcome is a pure function of the unit's rule, sizes and kind, its factor
        directions and its slots' shardings (all immutable), so it is memoized: modules repeat
        the same layer many times, and most steps have been computed before. A unit that no
        factor may cross at this level changes nothing (a third of the steps of a transformer
        stack): it returns at once. So does a unit none of whose slots has a sharding (a third
        of the rest): it changes nothing at any level, and stays settled until a slot of it is
        written (`ANY_DIRS`)."""
        dirs = u.dirs
        if not any(dirs):
            u.clean = dirs
            return
        slots = u.slots
        shardings = tuple(map(_sharding_of, slots))  # (a `Slot` view reads through `.sharding`)
        if not any(shardings):  # (a sharding is always true)
            if u.kind != "edge" or not is_call_arg_edge(u):
                u.clean = ANY_DIRS
            return
        static = u.step_key
        if static is None:  # one small int per distinct (rule, sizes, kind): cheap to hash
            what = (id(u.rule), u.sizes, u.elementwise, self._conservative(u))
            static = u.step_key = self.step_kinds.setdefault(what, len(self.step_kinds))
        key = (static, dirs, shardings)
        changes = self.step_memo.get(key)
        if changes is None:
            changes = self._changes(u, shardings)
            if len(self.step_memo) > 200_000:
                self.step_memo.clear()
            self.step_memo[key] = changes
        if not changes:
            # (a call's argument edge is not woken, so not dirtied, by its operand: never clean)
            if u.kind != "edge" or not is_call_arg_edge(u):
                u.clean = dirs
            return
        for i, new in changes:
            self.current = u
            slot = slots[i]
            if isinstance(slot, Slot):
                slot.set(new, self)
            else:
                self.write(slot, new)
            if self.observer is not None:
                h = holder_of(slot)
                targets = self.aliases.get(id(h)) or [h]
                self.observer.record(u, i, shardings, new, targets, self.round)

    def _changes(
        self, u: Unit, shardings: tuple[TensorSharding | None, ...]
    ) -> tuple[tuple[int, TensorSharding], ...]:
        """The (slot index, new sharding) pairs one step through `u` produces."""
        mesh: Mesh | None = None
        ref: str | Mesh | None = None
        for s in shardings:
            if s is None:
                continue
            m = self.resolve(s)
            if m is None:
                return ()
            if not m.axes and m.device_ids is None:
                continue
            if mesh is None:
                mesh, ref = m, s.mesh
            elif m != mesh:
                return ()
        if mesh is None or ref is None or mesh.is_maximal:
            return ()
        sizes = u.rule.factor_sizes
        projs = [project(sh, u.dims[i], sizes, mesh) for i, sh in enumerate(shardings)]
        n = u.n_operands
        step = StepInput(
            projs[:n], projs[n:], sizes, u.sizes, u.elementwise, self._conservative(u)
        )
        dirs = u.dirs
        updated = self.strategy(step, lambda f: dirs[f], mesh)
        out = []
        for i, upd in enumerate(updated):
            if not upd:
                continue
            old = shardings[i]
            # a sharding on an empty mesh (ignored when the common mesh was chosen) takes the
            # common mesh, as in Shardy: its dims never name another mesh's axes
            keep = old.mesh if old is not None and self.resolve(old) == mesh else ref
            new = back_project(projs[i], old, u.dims[i], sizes, mesh, keep)
            if old is None:
                if not any(d.axes for d in new.dims):
                    continue
            elif new == old:
                continue
            # one object per distinct sharding: memo keys holding it then compare by identity
            out.append((i, self.shardings.setdefault(new, new)))
        return tuple(out)

    def _conservative(self, u: Unit) -> bool:
        """Whether a step through `u` may not split an axis (`conservative`): as in Shardy, ops
        with a rule only; data-flow edges and func-result links are never conservative."""
        return self.options.conservative and u.kind == "op" and u.op_name != DATA_FLOW_EDGE

    # -- rounds --------------------------------------------------------------------------------
    def confirming_sweep(self) -> int:
        """Step every unit once more at the most permissive level; returns the updates made.

        Zero proves the fixed point (call before `write_back`). Call-argument edges are left
        out: as in Shardy, they run only in a level's first sweep (units.is_call_arg_edge), so an
        operand sharded after that may stay out of its callee."""
        self.set_directions(OP_PRIORITY_SCHEDULE, len(OP_PRIORITY_SCHEDULE) - 1)
        before = self.report.updates
        self.queue = deque()
        for u in self.units:
            if is_call_arg_edge(u):
                continue
            self.current = u
            self.step(u)
        self._step_func_result_links()
        self._drop_queue()
        return self.report.updates - before

    def set_directions(self, schedule: tuple, level: int) -> None:
        """Give every unit its factor directions at `level`.

        Directions depend only on what a unit is (op, kind, use count, rule), so units alike
        share one computation: rules are cached per shape, and big modules repeat a few ops."""
        if self._direction_classes is None:
            self._group_direction_classes()
        assert self._direction_classes is not None
        for rep, members in self._direction_classes:
            dirs = self._directions_of(rep, schedule, level)
            if dirs != rep.dirs:
                for u in members:
                    u.dirs = dirs

    def _group_direction_classes(self) -> None:
        """Units by what decides their directions (once per run: units never change class)."""
        index: dict[tuple, int] = {}
        classes: list[tuple[Unit, list[Unit]]] = []
        for u in (*self.units, *self.func_result_units):
            key = (u.op_name, u.kind, u.multi_use, u.call_target, id(u.rule), u.fixed_direction)
            c = index.get(key)
            if c is None:
                c = index[key] = len(classes)
                classes.append((u, []))
            classes[c][1].append(u)
        self._direction_classes = classes

    @staticmethod
    def _directions_of(u: Unit, schedule: tuple, level: int) -> tuple[Direction, ...]:
        rule = u.rule
        nf = len(rule.factor_sizes)
        if u.fixed_direction is not None:
            d = u.fixed_direction
            return tuple(Directions.NONE if f in rule.blocked else d for f in range(nf))
        return tuple(direction_at(schedule, level, u, f) for f in range(nf))

    def run_to_fixed_point(self) -> int:
        """Func-result links, the worklist from every unit until empty, func-result links
        again."""
        steps = 0
        self.queue = deque()
        self._step_func_result_links()
        # (what the links woke is among the units, all queued below: nothing to keep)
        self._drop_queue()
        # Shardy's worklist (MLIR's greedy driver): every unit in program order, then a stack:
        # a unit woken while not queued is run next, one still queued keeps its place. So each
        # unit runs at its place in the sweep, and the stack is emptied after each: a unit
        # still clean there (`Unit.clean`: its last step, at the same dirs, changed nothing,
        # and nothing it reads was written since) would change nothing, and is not stepped.
        units = self.units
        for u in units:
            u.queued = True
        queue = self.queue
        step = self.step
        cap = self.options.max_steps or (64 * (len(units) + self.graph.trivial) + 10_000)
        stopped = False
        for u in units:
            u.queued = False
            clean = u.clean
            if clean is not u.dirs and clean is not ANY_DIRS:
                self.current = u
                step(u)
            steps += 1
            if steps > cap:
                stopped = True
                break
            while queue:
                w = queue.pop()
                w.queued = False
                self.current = w
                step(w)
                steps += 1
                if steps > cap:
                    stopped = True
                    break
            if stopped:
                break
        if stopped:
            self.report.warnings.append(f"worklist stopped after {steps} steps")
            for rest in (*queue, *units):
                rest.queued = False
            queue.clear()
        self._step_func_result_links()
        self._drop_queue()
        self.report.steps += steps
        return steps

    def _step_func_result_links(self) -> None:
        for u in self.func_result_units:
            if u.clean is not u.dirs and u.clean is not ANY_DIRS:  # (else settled: `Unit.clean`)
                self.current = u
                self.step(u)

    def _drop_queue(self) -> None:
        for u in self.queue:
            u.queued = False
        self.queue.clear()
        self.current = None

    def run(self, write_back: bool = True) -> PropagationReport:
        if self.observer is not None:  # before the priorities hide the pN dims
            for h in self.holders:
                if h.sharding is not None:
                    self.observer.annotate(h, h.sharding)
        priorities = self._init_priorities()
        schedule = OP_PRIORITY_SCHEDULE if self.options.op_priorities else NO_OP_PRIORITY_SCHEDULE
        namer = Namer(self.module) if self.options.dump_rounds else None
        if namer is not None:
            self.report.round_dumps.extend(dump_lines(namer, self.holders, "import"))
        self.queue = deque()
        for p in user_priority_rounds(set(priorities)):
            if p > 0:
                self._restore_priority(p, priorities[p])
                for u in (*self.units, *self.func_result_units):  # (written quietly)
                    u.clean = None
            for level in range(len(schedule)):
                self.round = f"p{p}" + (f" op-priority {level}" if len(schedule) > 1 else "")
                self.set_directions(schedule, level)
                # Every level starts from every unit in program order, as Shardy's does: the
                # order decides conflicts, and call-argument edges run only then
                # (units.is_call_arg_edge).
                self.run_to_fixed_point()
                self.report.rounds.append(self.round)
                if namer is not None:
                    self.report.round_dumps.extend(dump_lines(namer, self.holders, self.round))
        if write_back:
            self.write_back()
        if self.observer is not None:
            self.report.explanation = explain_lines(self.module, self.observer)
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
        """Write the result the IR keeps on ops: func results, constraints, reshards, manual and
        named computations' in/out shardings (from their holders; every value's own sharding is on it already)."""
        g = self.graph
        funcs = self.module.funcs  # (a property that lists them: once)
        for (name, i), h in self.func_results.items():
            if h.sharding is not None:
                Func(funcs[name]).set_result_sharding(i, h.sharding)
        for callee, i, v in g.callee_returns:
            if v.sharding is not None:
                Func(callee).set_result_sharding(i, v.sharding)
        for op in (*g.constraints, *g.reshards):
            s = g.held(op.results[0]).sharding
            if s is not None:
                ShardingConstraint(op).sharding = s
        for op, arg_slots in g.manuals:
            ins = []
            for slot in arg_slots:
                s = slot.get()
                ins.append(s if s is not None else self._default(slot.type))
            outs = []
            for r in op.results:
                s = g.held(r).sharding
                outs.append(s if s is not None else self._default(r.type))
            view = ManualComputation(op)
            if ins:
                view.in_shardings = tuple(ins)
            if outs:
                view.out_shardings = tuple(outs)
        for op in g.named:
            # on the op, as Shardy keeps them; on the values too, for the passes after
            # propagation that do not walk into named computations (the plan)
            named = NamedComputation(op)
            args = op.regions[0].entry.args if op.regions else ()
            if args:
                named.in_shardings = tuple(self._held_or_default(a) for a in args)
            if op.results:
                named.out_shardings = tuple(self._held_or_default(r) for r in op.results)

    def _held_or_default(self, v: Value) -> TensorSharding:
        """`v`'s stand-in's sharding (a default where it has none), now `v`'s own too."""
        s = self.graph.held(v).sharding
        v.sharding = s if s is not None else self._default(v.type)
        return v.sharding

    def _default(self, t: object) -> TensorSharding:
        mesh = next(iter(self.meshes), "mesh")
        return TensorSharding.open(mesh, rank_of(t))


@dataclass(frozen=True)
class PropagatePass:
    """The propagation pass: Shardy's propagation with `options`; its `PropagationReport` (with
    the import steps' notes) is the run's result."""

    name: ClassVar[str] = "propagate"
    preserves: ClassVar[frozenset[type]] = SAME_OPS  # (it writes shardings, never ops)
    options: PropagationOptions = field(default_factory=PropagationOptions)

    def run(self, module: Module, ctx: PassContext) -> None:
        report = propagate(module, self.options, ctx.analysis(OpList, module))
        notes = ctx.result(ImportNotes)
        if notes is not None:
            report.warnings.extend(notes.warnings)
        ctx.put(report)


@dataclass(frozen=True)
class BasicPropagatePass(PropagatePass):
    """Shardy's `sdy-basic-propagate`: the basic strategy, no op or user priorities."""

    name: ClassVar[str] = "basic-propagate"
    options: PropagationOptions = field(
        default_factory=lambda: PropagationOptions(
            strategy="basic", op_priorities=False, user_priorities=False
        )
    )


@dataclass(frozen=True)
class AggressivePropagatePass(PropagatePass):
    """Shardy's `sdy-aggressive-propagate`: the aggressive strategy, no op or user priorities."""

    name: ClassVar[str] = "aggressive-propagate"
    options: PropagationOptions = field(
        default_factory=lambda: PropagationOptions(op_priorities=False, user_priorities=False)
    )


@dataclass(frozen=True)
class OpPriorityPropagatePass(PropagatePass):
    """Shardy's `sdy-op-priority-propagate`: op priorities, no user priorities."""

    name: ClassVar[str] = "op-priority-propagate"
    options: PropagationOptions = field(
        default_factory=lambda: PropagationOptions(user_priorities=False)
    )


@dataclass(frozen=True)
class UserPriorityPropagatePass(PropagatePass):
    """Shardy's `sdy-user-priority-propagate`: user priorities in rounds, then op priorities
    (what `propagate` runs by default)."""

    name: ClassVar[str] = "user-priority-propagate"


def propagate(
    module: Module,
    options: PropagationOptions | None = None,
    ops: list[Operation] | None = None,
) -> PropagationReport:
    """Run the propagation on `module` (mutates it) and report what happened; the import steps
    (passes/import_steps/) are the pipeline's, run before. `ops`: `list(module.walk())`, when
    the caller has it."""
    prop = Propagator(module, options or PropagationOptions(), ops)
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
                yield f"@{fname} op {n} constraint", ShardingConstraint(op).sharding
