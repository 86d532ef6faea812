"""Which values the `pin` export must pin: those XLA's own propagation would lay out otherwise.

XLA keeps only `@main`'s argument and result shardings, sharding constraints, manual
computations' in/out shardings and sharding groups of a module, and re-runs Shardy's
propagation from them (reference/export-and-xla.md, 1). shardc's propagation is Shardy's, so
most of what shardc chose is what XLA would choose anyway: a constraint there only makes XLA's
compile slower (each is a `Sharding` custom call through the HLO passes, and Shardy's round trip
reads its sharding back from a string). `xla_view_layouts` works out what XLA would give each
value: a copy of the exported module stripped to what XLA keeps, plus the constraints already
chosen, goes through shardc's own import steps and propagation with Shardy's default options.
The export pins a value where that layout differs from its chosen one, and asks again with
those pins until nothing more differs (a pin can move its neighbours' layouts).

What is stripped errs towards pinning: every op-level sharding, the shardings of region
arguments and of called or private functions (XLA inlines or keeps calls as it likes): where
XLA would keep one, the derived layout differs at worst, and the value is pinned as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Block, Module, Operation, OpResult, Value, callee_name
from shardc.dialect.op_views import Func, ShardingConstraint
from shardc.dialect.shardings import TensorSharding

from .context import Caller, PassContext

# ops whose shardings live in properties XLA reads (kept as they are)
KEPT_OPS = frozenset(
    {
        "builtin.module",
        "func.func",
        "sdy.mesh",
        "sdy.sharding_constraint",
        "sdy.manual_computation",
        "sdy.sharding_group",
        "sdy.propagation_barrier",
    }
)

Lookup = Callable[[Value], "TensorSharding | None"]


def xla_view_layouts(
    module: Module, pins: Iterable[tuple[Value, TensorSharding]]
) -> Lookup | None:
    """For each value of `module` (op results outside manual regions), the sharding shardc's
    propagation gives it from what XLA keeps of `module` plus a constraint to `s` after each
    `(value, s)` of `pins`; `None` where propagation of that view fails (the caller pins then
    as if nothing were re-derived)."""
    from .pipeline import IMPORT_STEPS  # (pipeline imports export, which imports this)
    from .propagation.driver import propagate
    from .propagation.options import PropagationOptions

    mapping: dict[int, Value] = {}
    view = Module(module.op.clone(mapping))
    _strip(view)
    _constrain([(mapping[id(v)], s) for v, s in pins if id(v) in mapping])
    ctx = PassContext(Caller(function="pin selection"))
    try:
        for step in IMPORT_STEPS:
            step.run(view, ctx)
            ctx.invalidate()
        propagate(view, PropagationOptions())
    except ShardcError:
        return None

    def lookup(v: Value) -> TensorSharding | None:
        got = mapping.get(id(v))
        return got.sharding if got is not None else None

    return lookup


def _strip(module: Module) -> None:
    """Drop every sharding XLA does not read: op results, region arguments, the arguments and
    results of called or private funcs (the entry's stay)."""
    callees = {callee_name(op) for op in module.walk() if op.name == "func.call"}
    for name, func in module.funcs.items():
        private = '"private"' in str(func.properties.get("sym_visibility", ""))
        if (name in callees or private) and func.regions and func.regions[0].blocks:
            view = Func(func)
            for a in func.regions[0].blocks[0].args:
                a.sharding = None
            for i in range(view.num_results):
                view.set_result_sharding(i, None)
    for op in module.op.walk():
        if op.name in KEPT_OPS:
            continue
        for r in op.results:
            r.sharding = None
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    a.sharding = None


def _constrain(pins: list[tuple[Value, TensorSharding]]) -> None:
    """A constraint after each value of `pins` (uses rewired), placed after its producer."""
    after: dict[int, list[Operation]] = {}
    blocks: dict[int, Block] = {}
    for v, s in pins:
        if isinstance(v, OpResult) and isinstance(v.owner.parent, Block):
            constrain_after(v, s, after, blocks)
    splice_after(after, blocks)


Uses = list[tuple[Operation, int]]


def constrain_after(
    v: OpResult, s: TensorSharding, after: dict[int, list[Operation]], blocks: dict[int, Block]
) -> tuple[Operation, Uses]:
    """A closed constraint of `v` to `s`, `v`'s uses rewired to it, queued in `after` to go
    right after `v`'s op (`splice_after` places the queue); returns it and `v`'s former uses."""
    owner = v.owner
    block = owner.parent
    assert isinstance(block, Block)
    uses = list(v.uses)
    c = ShardingConstraint.create(v, s, owner.loc).op
    for user, idx in uses:
        user.set_operand(idx, c.results[0])
    c.parent = block
    after.setdefault(id(owner), []).append(c)
    blocks[id(block)] = block
    return c, uses


def splice_after(after: dict[int, list[Operation]], blocks: dict[int, Block]) -> None:
    """Put the ops queued in `after` (by `id` of an op of `blocks`) right after that op."""
    for block in blocks.values():
        ops: list[Operation] = []
        for op in block.ops:
            ops.append(op)
            ops.extend(after.get(id(op), ()))
        block.ops = ops
