"""How often a collective runs per run of the entry, as XLA's compiled program runs it.

A collective inside a `stablehlo.while` body runs once per iteration (the loop's known trip
count, `trip_count.py`), inside a func once per call of it. But XLA's while-loop invariant code
motion moves computations out of a loop when nothing they read changes from one iteration to
the next: the all-gather of a scanned array (a carry the body passes through unchanged, which
JAX's scan indexes with the loop counter) runs once, before the loop, not once per iteration.
So a collective on values that vary in none of the enclosing loops is counted once per run of
the code around the outermost loop it is invariant in, through calls too (a callee's argument
is invariant in a caller's loop when the call's operand is).

A value varies in a loop when it depends on a carry the loop changes (a body argument whose
returned value is not the argument itself), or on an op with a side effect inside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardc.dialect.data_flow import CALL, WHILE
from shardc.dialect.ir import (
    BlockArgument,
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    symbol_name,
)
from shardc.dialect.op_views import FUNC, MANUAL_COMPUTATION

from .liveness import Liveness, has_side_effect
from .trip_count import trip_count

# (func arguments it reads, ids of the while loops it varies in)
Deps = tuple[frozenset[int], frozenset[int]]
_NONE: Deps = (frozenset(), frozenset())
_CONSTANT_OPS = frozenset({"stablehlo.constant", "sdy.constant", "stablehlo.iota"})


class Runs:
    """Run counts of funcs and of computations at ops (see the module docstring).

    `hoist=False` counts every collective in a loop body trip-count times (Shardy's model)."""

    def __init__(self, module: Module, live: Liveness | None = None, hoist: bool = True):
        self.funcs = module.funcs
        self.hoist = hoist
        self.sites: dict[str, list[Operation]] = {}  # the calls that run, per callee
        for func in self.funcs.values():
            for op in func.walk():
                if op.name == CALL:
                    calls = self.sites.setdefault(callee_name(op), [])
                    if live is None or live.op_live(op):
                        calls.append(op)
        self._func_runs: dict[str, int] = {}
        self._arg_runs: dict[tuple[str, frozenset[int]], int] = {}
        self._deps: dict[int, Deps] = {}
        self._active: set[str] = set()

    # -- public --------------------------------------------------------------------------------
    def func_runs(self, name: str) -> int:
        """Runs of func `name` per run of the entry (its calls times their enclosing loops'
        trip counts; 1 for a func nothing calls)."""
        if name in self._func_runs:
            return self._func_runs[name]
        sites = self.sites.get(name)
        if sites is None:
            return 1  # an entry
        if name in self._active:
            return 0  # recursion: not a program XLA compiles
        self._active.add(name)
        total = sum(self.full_runs(c) for c in sites)
        self._active.discard(name)
        self._func_runs[name] = total
        return total

    def full_runs(self, op: Operation) -> int:
        """Runs of `op` per run of the entry, nothing hoisted."""
        n = self.func_runs(_func_of(op))
        for loop in _loops(op):
            n *= trip_count(loop) or 1
        return n

    def runs(self, op: Operation, values: Sequence[Value]) -> int:
        """Runs per run of the entry of a computation at `op` that reads `values` only, moved
        out of the loops none of them varies in."""
        if not self.hoist:
            return self.full_runs(op)
        args: frozenset[int] = frozenset()
        varying: set[int] = set()
        for v in values:
            a, w = self.deps(v)
            args |= a
            varying |= w
        loops = _loops(op)
        for k, loop in enumerate(loops):
            if id(loop) in varying:
                n = self.func_runs(_func_of(op))
                for outer in loops[k:]:
                    n *= trip_count(outer) or 1
                return n
        return self._runs_of_args(_func_of(op), args)

    # -- internals -----------------------------------------------------------------------------
    def _runs_of_args(self, name: str, args: frozenset[int]) -> int:
        """Runs of a computation of func `name` that reads only its arguments `args`."""
        sites = self.sites.get(name)
        if sites is None:
            return 1
        key = (name, args)
        if key in self._arg_runs:
            return self._arg_runs[key]
        if name in self._active:
            return 0
        self._active.add(name)
        total = 0
        for call in sites:
            operands = [call.operands[a] for a in args if a < len(call.operands)]
            total += self.runs(call, operands)
        self._active.discard(name)
        self._arg_runs[key] = total
        return total

    def deps(self, v: Value) -> Deps:
        """The func arguments `v` reads and the while loops it varies in."""
        hit = self._deps.get(id(v))
        if hit is not None:
            return hit
        stack = [v]
        while stack:
            top = stack[-1]
            if id(top) in self._deps:
                stack.pop()
                continue
            inputs, extra, args = _inputs(top)
            missing = [u for u in inputs if id(u) not in self._deps]
            if missing:
                stack.extend(missing)
                continue
            a: frozenset[int] = frozenset(args)
            w: set[int] = set(extra)
            for u in inputs:
                ua, uw = self._deps[id(u)]
                a |= ua
                w |= uw
            self._deps[id(top)] = (a, frozenset(w))
            stack.pop()
        return self._deps[id(v)]


def _inputs(v: Value) -> tuple[list[Value], list[int], list[int]]:
    """What `v` is computed from: values, loops it varies in by itself, func arguments."""
    if isinstance(v, BlockArgument):
        owner = v.block.parent.parent if v.block.parent is not None else None
        if owner is None:
            return [], [], []
        if owner.name == FUNC:
            return [], [], [v.index]
        if owner.name == WHILE and v.index < len(owner.operands):
            init = owner.operands[v.index]
            body = owner.regions[1].entry if len(owner.regions) > 1 else None
            ret = body.terminator if body is not None else None
            passthrough = (
                ret is not None
                and v.index < len(ret.operands)
                and ret.operands[v.index] is body.args[v.index]  # type: ignore[union-attr]
            )
            return [init], ([] if passthrough else [id(owner)]), []
        if owner.name == MANUAL_COMPUTATION and v.index < len(owner.operands):
            return [owner.operands[v.index]], [], []
        return [], [], []
    if not isinstance(v, OpResult):
        return [], [], []
    op = v.owner
    if op.name in _CONSTANT_OPS:
        return [], [], []
    extra = [id(loop) for loop in _loops(op)] if has_side_effect(op) else []
    inputs = list(op.operands)
    if op.regions and op.name != WHILE:
        inputs += _captured(op)
    return inputs, extra, []


def _captured(op: Operation) -> list[Value]:
    """Values an op's regions read from outside it (a case branch's captures)."""
    inside: set[int] = set()
    out: list[Value] = []
    for inner in op.walk():
        if inner is op:
            continue
        for r in inner.results:
            inside.add(id(r))
        for region in inner.regions:
            for b in region.blocks:
                inside.update(id(a) for a in b.args)
    for region in op.regions:
        for b in region.blocks:
            inside.update(id(a) for a in b.args)
    for inner in op.walk():
        if inner is op:
            continue
        out.extend(u for u in inner.operands if id(u) not in inside)
    return out


def _loops(op: Operation) -> list[Operation]:
    """The while loops around `op` in its func, innermost first (not `op` itself)."""
    out = []
    cur = op.parent_op
    while cur is not None and cur.name != FUNC:
        if cur.name == WHILE:
            out.append(cur)
        cur = cur.parent_op
    return out


def _func_of(op: Operation) -> str:
    cur: Operation | None = op
    while cur is not None and cur.name != FUNC:
        cur = cur.parent_op
    return symbol_name(cur) if cur is not None else ""
