"""`split-constants` and `merge-constants`: each use of a constant expression has its own copy
while propagating (docs/propagation.md §7.7), and the output has the input's ops again.

Shardy's import (`sdy-constant-or-scalar-splitter`) gives every user of a constant expression (a
constant or iota, or a broadcast, reshape, slice or element-wise op over constant expressions)
and of a broadcast of a scalar its own clone of the whole expression, so that one user's layout
does not reach another user through the shared constant: each device can make a constant in any
layout without communication. `split-constants` does the same on shardc's IR: the first user
keeps the original ops, every other user gets a copy of the expression (scalars are shared, as
Shardy shares them), placed right after the op it copies and marked `shardc.split_copy`.

Shardy's export (`sdy-constant-or-scalar-merger`) folds identical constants back, and so does
`merge-constants`, right after propagation, before anything reads the propagated IR (auto,
plan, export, the Python API): a marked copy laid out as its original (or an earlier copy kept)
is folded into it; one whose uses were given another layout stays, right after its original
(each device makes a constant in any layout for free: folding it would cost its users a
reshard). `PropagationOptions.split_constants=False` (`--no-split-constants`) leaves both passes
out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import AttrDict, Block, Module, Operation, OpResult, Value
from shardc.dialect.op_views import SHARDING_GROUP
from shardc.dialect.rules.pointwise import ELEMENTWISE_OPS
from shardc.dialect.types import TensorType
from shardc.dialect.value_names import SPLIT_COPY

from ..context import NONE, SAME_OPS, OpList, OpNames, PassContext
from ..propagation.report import PropagationReport

CONSTANT_OPS = frozenset({"stablehlo.constant", "sdy.constant", "stablehlo.iota"})
CONSTANT_EXPR_OPS = (
    frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.slice"})
    | ELEMENTWISE_OPS
)


@dataclass(frozen=True)
class SplitConstants:
    """The constant splitting pass (Shardy's constant-or-scalar splitter); no options."""

    name: ClassVar[str] = "split-constants"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        ops = ctx.analysis(OpList, module)
        after: list[Operation] = []
        if not split_constants(module, ops, after):
            ctx.preserve(*SAME_OPS)
        else:
            ctx.preserve(OpNames)
            ctx.provide(OpList, after)


@dataclass(frozen=True)
class MergeConstants:
    """Folds `split-constants`' copies back into their originals (after propagation)."""

    name: ClassVar[str] = "merge-constants"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        folded = merge_constants(module, ctx.analysis(OpList, module))
        report = ctx.result(PropagationReport)
        origins = report.origins if report is not None else None
        if folded and origins is not None:
            origins.fold(folded)  # an origin traced to a copy traces to its original


def _rank(v: Value) -> int:
    return v.type.rank if isinstance(v.type, TensorType) else 0


def constant_expressions(module: Module, ops: list[Operation] | None = None) -> list[Operation]:
    """The ops whose results are constant expressions, in program order (a broadcast of a
    scalar counts, whatever the scalar: Shardy's scalar expansion). `ops`:
    `list(module.walk())`, when the caller has it."""
    const: set[int] = set()
    found: list[Operation] = []
    for op in module.walk() if ops is None else ops:
        name = op.name
        if name in CONSTANT_OPS:
            pass
        elif name in CONSTANT_EXPR_OPS and op.operands and not op.regions:
            of_constants = True
            for v in op.operands:
                if id(v) not in const:
                    of_constants = False
                    break
            if not of_constants and not (
                name == "stablehlo.broadcast_in_dim" and _rank(op.operands[0]) == 0
            ):
                continue
        else:
            continue
        for r in op.results:
            const.add(id(r))
        found.append(op)
    return found


def split_constants(
    module: Module, ops: list[Operation] | None = None, ops_after: list[Operation] | None = None
) -> int:
    """Give every use but the first of each constant expression its own copy; returns the
    number of ops copied. `sdy.sharding_group` uses are not uses here: a copy joins the groups
    of what it copies (Shardy clones the group ops along). `ops`: `list(module.walk())`, when
    the caller has it; then `ops_after`, when given, receives that list with the copies (what
    `module.walk()` lists after the split)."""
    const_ops = constant_expressions(module, ops)
    splitter = _Splitter({id(op) for op in const_ops})
    for op in const_ops:
        for r in op.results:
            if r.num_uses < 2 or _rank(r) == 0:
                continue
            uses = [u for u in r.uses if u[0].name != SHARDING_GROUP]
            if len(uses) < 2:
                continue
            for user, index in uses[1:]:
                user.set_operand(index, splitter.copy_of(r))
    if splitter.copies_after:
        _insert_copies(const_ops, splitter.copies_after)
        if ops is not None and ops_after is not None:
            # each copy right after its original (a constant expression has no regions)
            copies = splitter.copies_after
            for op in ops:
                ops_after.append(op)
                if id(op) in copies:
                    ops_after.extend(copies[id(op)])
    return splitter.copied


class _Splitter:
    """The copies made so far (a class, not a recursive closure: a closure that calls itself is
    a reference cycle, which would leave the module to the cyclic GC)."""

    def __init__(self, const: set[int]) -> None:
        self.const = const
        self.original_of: dict[int, Operation] = {}  # id(copy) -> the input op it copies
        self.copies_after: dict[int, list[Operation]] = {}  # id(input op) -> its copies, in order
        self.copied = 0

    def copy_of(self, r: OpResult) -> Value:
        """A fresh copy of the expression computing `r` (its non-scalar constant operands
        copied too, so the copy shares nothing with the original but scalars)."""
        op = r.owner
        mapping: dict[int, Value] = {}
        for v in op.operands:
            if isinstance(v, OpResult) and id(v.owner) in self.const and _rank(v) > 0:
                mapping[id(v)] = self.copy_of(v)
        new = op.clone(mapping)
        new.attributes[SPLIT_COPY] = None
        self.const.add(id(new))  # a copy is split like its original when its own uses are
        source = self.original_of.get(id(op), op)
        self.original_of[id(new)] = source
        after = self.copies_after.setdefault(id(source), [])
        after.append(new)
        self.copied += 1
        for res, new_res in zip(op.results, new.results, strict=True):
            for user, _ in list(res.uses):
                if user.name == SHARDING_GROUP:
                    group = user.clone({id(res): new_res})
                    group.attributes[SPLIT_COPY] = None
                    after.append(group)
        return new.results[r.index]


def _insert_copies(originals: list[Operation], copies_after: dict[int, list[Operation]]) -> None:
    """Put each op's copies right after it, rebuilding each block's op list once (from slices:
    `originals` are in program order, so each is found from where the last one was)."""
    blocks: dict[int, tuple[Block, list[Operation]]] = {}
    for op in originals:
        if id(op) in copies_after and op.parent is not None:
            blocks.setdefault(id(op.parent), (op.parent, []))[1].append(op)
    for block, copied in blocks.values():
        old = block.ops
        ops: list[Operation] = []
        start = 0
        for op in copied:
            end = old.index(op, start) + 1
            ops += old[start:end]
            for c in copies_after[id(op)]:
                c.parent = block
                ops.append(c)
            start = end
        ops += old[start:]
        block.ops = ops


def merge_constants(module: Module, ops: list[Operation] | None = None) -> dict[int, Value]:
    """Fold every `shardc.split_copy` op into an identical op before it: its original, or an
    earlier copy kept (same operands once folded, same attributes, same result shardings), as
    Shardy's constant merger does; a copy whose uses got another sharding stays, unmarked.
    Returns id(folded copy's result) -> the result it was folded into. `ops`:
    `list(module.walk())`, when the caller has it."""
    folded: dict[int, Value] = {}
    blocks: dict[int, Block] = {}
    for op in module.walk() if ops is None else ops:
        if SPLIT_COPY in op.attributes and op.parent is not None:
            blocks[id(op.parent)] = op.parent
    for block in blocks.values():
        versions: list[Operation] = []  # the original and the copies of it kept so far
        kept: list[Operation] = []
        for op in block.ops:
            if SPLIT_COPY not in op.attributes:
                versions = [op]
                kept.append(op)
                continue
            if not op.results:  # a copied sdy.sharding_group: the original's group stays
                op.drop_operands()
                op.parent = None
                continue
            if not versions or versions[0].name != op.name:
                raise AssertionError(f"split copy of {op.name} does not follow its original")
            for i, v in enumerate(op.operands):
                into = folded.get(id(v))
                if into is not None:
                    op.set_operand(i, into)
            same = next((o for o in versions if _identical(o, op)), None)
            if same is None:  # its uses were given another layout: it stays, a copy of its own
                op.attributes.pop(SPLIT_COPY)
                versions.append(op)
                kept.append(op)
                continue
            for r, o in zip(op.results, same.results, strict=True):
                folded[id(r)] = o
                for user, index in list(r.uses):
                    user.set_operand(index, o)
            op.drop_operands()
            op.parent = None
        block.ops = kept
    return folded


def _identical(kept: Operation, copy: Operation) -> bool:
    """`copy` computes what `kept` does, laid out the same way."""
    return (
        copy.operands == kept.operands
        and all(a.sharding == b.sharding for a, b in zip(kept.results, copy.results, strict=True))
        and _texts(copy.properties) == _texts(kept.properties)
        and _texts(copy.attributes) == _texts(kept.attributes)
    )


def _texts(attrs: AttrDict) -> dict[str, str]:
    return {k: str(v) for k, v in attrs.items() if k != SPLIT_COPY}
