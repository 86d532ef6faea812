"""Fixes a user can act on: an annotation the user wrote, changed to another sharding.

A `Candidate` names the annotation (`Locator`: an entry func's argument, a sharding constraint,
an entry func's result) and the sharding it would get. A candidate is only offered as a fix
once the whole program, propagated again with the annotation changed, plans a lower total
(`compiler/api_plan.py` does that; here: building candidates and applying one to a fresh copy
of the module, pure IR).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shardc.dialect.ir import BlockArgument, Module, Operation, OpResult, func_body, symbol_name
from shardc.dialect.shardings import TensorSharding

from . import layout

_CONSTRAINT = "sdy.sharding_constraint"


@dataclass(frozen=True)
class Locator:
    """Where an annotation sits, found again in another import of the same module: argument
    or result `index` of func `func`, or the `index`-th constraint with location `loc` and
    type `type` in it."""

    kind: str  # "argument" | "constraint" | "result"
    func: str
    index: int
    loc: str | None = None
    type: str = ""


@dataclass(frozen=True)
class Candidate:
    """An annotation change: `locator` gets `sharding` (closed dims on the annotation's mesh,
    `layout_math.axes_layout`); `text` says it."""

    locator: Locator
    sharding: TensorSharding
    text: str


def _func_of(op: Operation | None) -> Operation | None:
    while op is not None and op.name != "func.func":
        op = op.parent_op
    return op


def locate(module: Module, holder: Any, entries: set[str]) -> Locator | None:
    """The annotation `holder` is, if a user wrote it: an argument or result (`"@f result i"`)
    of an entry func in `entries`, or the result of a sharding constraint."""
    if isinstance(holder, str) and holder.startswith("@") and " result " in holder:
        name, _, index = holder[1:].rpartition(" result ")
        return Locator("result", name, int(index)) if name in entries else None
    if isinstance(holder, BlockArgument):
        owner = holder.block.parent.parent if holder.block.parent is not None else None
        if owner is None or owner.name != "func.func":
            return None
        name = symbol_name(owner)
        return Locator("argument", name, holder.index) if name in entries else None
    if isinstance(holder, OpResult) and holder.owner.name == _CONSTRAINT:
        op = holder.owner
        func = _func_of(op)
        if func is None:
            return None
        same = [c for c in func.walk() if c.name == _CONSTRAINT and _key(c) == _key(op)]
        return Locator("constraint", symbol_name(func), same.index(op), op.loc, _key(op)[1])
    return None


def _key(op: Operation) -> tuple[str | None, str]:
    return op.loc, str(op.results[0].type) if op.results else ""


def apply(module: Module, candidate: Candidate) -> bool:
    """Change the annotation `candidate` names in `module` (another import of the planned
    module); False when it is not there."""
    loc = candidate.locator
    func = module.funcs.get(loc.func)
    body = func_body(func) if func is not None else None
    if func is None or body is None:
        return False
    new = candidate.sharding
    if loc.kind == "argument":
        if loc.index >= len(body.args):
            return False
        layout.set_value_sharding(body.args[loc.index], new)
        return True
    if loc.kind == "result":
        if body.terminator is None or loc.index >= len(body.terminator.operands):
            return False
        layout.set_declared_result_sharding(func, loc.index, new)
        return True
    same = [
        c
        for c in func.walk()
        if c.name == _CONSTRAINT and c.loc == loc.loc and _key(c)[1] == loc.type
    ]
    if loc.index >= len(same):
        return False
    layout.set_constraint_sharding(same[loc.index], new)
    return True
