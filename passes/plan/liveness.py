"""Which ops and values of a module run: those with a path to an entry func's result or to a
side effect (the rest is what XLA's dead-code elimination, and Shardy's import before it, drop).

JAX's autodiff leaves values nothing reads (the compare/select chains of a max's JVP, unused
broadcasts, loop carries no iteration reads): planning them would cost collectives XLA never
runs. The analysis is a backward worklist over values, with the data-flow edges of the control
ops spelled out: a `stablehlo.while` result, carry or body argument k keeps carry k alive (its
init, its body's returned value k; XLA's while-loop simplifier drops the other carries), a
`stablehlo.case`/`if` result keeps each branch's returned value, a `func.call` result keeps its
callee's returned value and a live callee argument keeps the call's operand, a manual
computation's result and body argument keep the body's returned value and the operand. Any
other op that runs keeps every operand and everything in its regions (a reduction's body).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shardc.dialect.data_flow import BRANCH_OPS, CALL, WHILE, callee
from shardc.dialect.ir import (
    Block,
    BlockArgument,
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    func_body,
    symbol_name,
)
from shardc.dialect.op_views import FUNC, MANUAL_COMPUTATION, Func
from shardc.dialect.types import TensorType

# ops that run for their effect, whatever reads their results (XLA's HasSideEffect: host
# transfers, random state, side-effecting custom calls)
_EFFECT_OPS = frozenset(
    {
        "stablehlo.outfeed",
        "stablehlo.infeed",
        "stablehlo.send",
        "stablehlo.recv",
        "stablehlo.rng",
        "stablehlo.rng_bit_generator",
    }
)


def has_side_effect(op: Operation) -> bool:
    """An op XLA keeps although nothing reads its results."""
    if op.name in _EFFECT_OPS:
        return True
    if op.name == "stablehlo.custom_call":
        return "true" in str(op.attr("has_side_effect", "")).lower()
    return False


def reads(op: Operation) -> list[Value]:
    """The operands whose values an op's result depends on (what XLA's algebraic simplifier
    leaves it reading): a dynamic_update_slice whose update covers the whole operand reads only
    the update and the indices, a pad that keeps no element of its operand only the padding
    value, an op with an empty result nothing."""
    if any(_elements(r) == 0 for r in op.results):
        return []
    if op.name == "stablehlo.dynamic_update_slice" and len(op.operands) >= 2:
        if _shape(op.operands[0]) is not None and _shape(op.operands[0]) == _shape(op.operands[1]):
            return op.operands[1:]
    if op.name == "stablehlo.pad" and len(op.operands) == 2 and not _pad_keeps_any(op):
        return op.operands[1:]
    return list(op.operands)


def _shape(v: Value) -> tuple[int, ...] | None:
    t = v.type
    return t.shape if isinstance(t, TensorType) else None


def _elements(v: Value) -> int | None:
    shape = _shape(v)
    if shape is None or any(d < 0 for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


def _pad_keeps_any(op: Operation) -> bool:
    """Whether a pad's result holds any element of its operand."""
    shape = _shape(op.operands[0])
    lows, highs, inner = (
        _ints(op.attr(k, "")) for k in ("edge_padding_low", "edge_padding_high", "interior_padding")
    )
    if shape is None or not (len(lows) == len(highs) == len(inner) == len(shape)):
        return True
    for n, lo, hi, it in zip(shape, lows, highs, inner, strict=True):
        size = lo + hi + n + max(n - 1, 0) * it
        if not any(0 <= lo + k * (it + 1) < size for k in range(n)):
            return False
    return True


def _ints(attr: object) -> list[int]:
    """The integers of an `array<i64: 1, -2>` or `dense<[1, -2]> : tensor<2xi64>` attribute."""
    text = str(attr or "")
    m = re.search(r"array<\w+:([^>]*)>", text) or re.search(r"dense<([^>]*)>", text)
    return [int(x) for x in re.findall(r"-?\d+", m.group(1))] if m else []


@dataclass
class Liveness:
    """The live ops and values of a module (by identity); everything else is dead."""

    ops: set[int] = field(default_factory=set)
    values: set[int] = field(default_factory=set)
    carries: set[tuple[int, int]] = field(default_factory=set)  # (id(while), carry index)

    def op_live(self, op: Operation) -> bool:
        return id(op) in self.ops

    def value_live(self, v: Value) -> bool:
        return id(v) in self.values

    def carry_live(self, loop: Operation, i: int) -> bool:
        return (id(loop), i) in self.carries


def liveness(module: Module) -> Liveness:
    """The live part of `module`: what the entry funcs' results and the side effects need."""
    return _Analysis(module).run()


# ops Shardy's import keeps whatever reads their results (MLIR erases unused ops whose effects
# it knows are none, regions included: calls and custom calls stay)
_SHARDY_KEPT = frozenset({CALL, "stablehlo.custom_call", "func.return"})


def shardy_liveness(module: Module) -> Liveness:
    """What Shardy's pipeline keeps: every op but the unused effect-free ones (erased until
    none is left; loops, conditionals and shard_maps too), with everything a kept op reads and
    everything in its regions."""
    a = _Analysis(module)
    for func in module.funcs.values():
        for op in func.walk():
            if op.name in _SHARDY_KEPT or has_side_effect(op):
                a.keep(op)
    a.drain()
    for func in module.funcs.values():  # an op that stays computes all its results
        for op in func.walk():
            if a.live.op_live(op):
                a.live.values.update(id(r) for r in op.results)
    return a.live


class _Analysis:
    def __init__(self, module: Module):
        self.module = module
        self.funcs = module.funcs
        self.live = Liveness()
        self.calls: dict[str, list[Operation]] = {}
        self.work: list[Value] = []

    def run(self) -> Liveness:
        called: set[str] = set()
        effects: list[Operation] = []
        for func in self.funcs.values():
            for op in func.walk():
                if op.name == CALL:
                    name = callee_name(op)
                    called.add(name)
                    self.calls.setdefault(name, []).append(op)
                elif has_side_effect(op):
                    effects.append(op)
        for name, func in self.funcs.items():
            body = func_body(func)
            if name in called or body is None or body.terminator is None:
                continue
            if Func(func).is_private:
                continue  # nothing calls it: not an entry either
            self.op(func)
            self.op(body.terminator)
            for v in body.terminator.operands:
                self.mark(v)
        for op in effects:
            self.effect(op)
        self.drain()
        return self.live

    # -- marking -------------------------------------------------------------------------------
    def mark(self, v: Value) -> None:
        if id(v) not in self.live.values:
            self.live.values.add(id(v))
            self.work.append(v)

    def drain(self) -> None:
        while self.work:
            v = self.work.pop()
            if isinstance(v, OpResult):
                self._result(v.owner, v.index)
            elif isinstance(v, BlockArgument):
                self._argument(v.block, v.index)

    def _result(self, op: Operation, i: int) -> None:
        self.op(op)
        name = op.name
        if name == WHILE:
            self.carry(op, i)
        elif name in BRANCH_OPS or name == MANUAL_COMPUTATION:
            for region in op.regions:
                for b in region.blocks:
                    self._returned(b, i)
        elif name == CALL:
            f = callee(op, self.funcs)
            body = func_body(f) if f is not None else None
            if body is not None:
                self._returned(body, i)

    def _argument(self, block: Block, i: int) -> None:
        owner = block.parent.parent if block.parent is not None else None
        if owner is None:
            return
        if owner.name == FUNC:
            for call in self.calls.get(symbol_name(owner), ()):
                if id(call) in self.live.ops and i < len(call.operands):
                    self.mark(call.operands[i])
        elif owner.name == WHILE:
            self.carry(owner, i)
        elif owner.name == MANUAL_COMPUTATION and i < len(owner.operands):
            self.mark(owner.operands[i])

    def _returned(self, block: Block, i: int) -> None:
        ret = block.terminator
        if ret is not None and i < len(ret.operands):
            self.op(ret)
            self.mark(ret.operands[i])

    def carry(self, loop: Operation, i: int) -> None:
        """Carry i of a while loop runs: its init and the body's returned value i."""
        key = (id(loop), i)
        if key in self.live.carries:
            return
        self.live.carries.add(key)
        self.op(loop)
        if i < len(loop.operands):
            self.mark(loop.operands[i])
        if len(loop.regions) > 1 and loop.regions[1].blocks:
            self._returned(loop.regions[1].entry, i)

    def op(self, op: Operation) -> None:
        """`op` runs: what it reads runs too, and so does the op that holds it."""
        if id(op) in self.live.ops:
            return
        self.live.ops.add(id(op))
        name = op.name
        if name == WHILE:
            cond = op.regions[0].entry if op.regions and op.regions[0].blocks else None
            if cond is not None and cond.terminator is not None:
                self.op(cond.terminator)
                for v in cond.terminator.operands:
                    self.mark(v)
        elif name in BRANCH_OPS:
            for v in op.operands:
                self.mark(v)
        elif name == CALL:
            f = callee(op, self.funcs)
            body = func_body(f) if f is not None else None
            if body is not None:
                for i, a in enumerate(body.args):
                    if id(a) in self.live.values and i < len(op.operands):
                        self.mark(op.operands[i])
        elif name == MANUAL_COMPUTATION:
            body = op.regions[0].entry if op.regions and op.regions[0].blocks else None
            if body is not None:
                for i, a in enumerate(body.args):
                    if id(a) in self.live.values and i < len(op.operands):
                        self.mark(op.operands[i])
        elif name not in (FUNC, "func.return", "stablehlo.return", "sdy.return"):
            for v in reads(op):
                self.mark(v)
            for region in op.regions:
                for b in region.blocks:
                    for inner in b.ops:
                        self.op(inner)

    def keep(self, op: Operation) -> None:
        """`op` runs, with every operand and everything in its regions (Shardy keeps it)."""
        self.op(op)
        for v in op.operands:
            self.mark(v)
        for inner in op.walk():
            if inner is not op:
                self.keep(inner) if inner.regions else self.op(inner)
                for v in inner.operands:
                    self.mark(v)
        for r in op.results:  # (a call's callee, a loop's carries, a branch's results)
            self.mark(r)

    def effect(self, op: Operation) -> None:
        """A side-effecting `op` runs, and so does every op that holds it (every call of a func
        that holds it): a live result makes its holder live, an effect climbs by itself."""
        seen: set[int] = set()
        work = [op]
        while work:
            cur = work.pop()
            if id(cur) in seen:
                continue
            seen.add(id(cur))
            self.op(cur)
            parent = cur.parent_op
            if parent is None:
                continue
            if parent.name == "func.func":
                work.extend(self.calls.get(symbol_name(parent), ()))
            else:
                work.append(parent)
