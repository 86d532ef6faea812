"""Which values the `pin` export must pin: those XLA's own propagation could lay out otherwise.

`NeighbourSelection` judges each value from the ops next to it: where shardc's
layouts agree factor by factor on every op around a value and a tensor XLA holds gives its
axes, XLA's propagation has nothing else to give it, whatever order it runs in; everywhere
else (a reshard, a conflict shardc settled, an op XLA treats otherwise) the value is pinned.
It costs one pass over the ops and no propagation. Checked on random programs: shardc's layout
compiled with this selection moves the bytes it moves fully pinned (tests/test_pin_select.py),
and the differential fuzzer compares it with Shardy's layout fully pinned.
"""

from __future__ import annotations

from collections.abc import Callable

from shardc.dialect.ir import Block, Operation, OpResult, Value
from shardc.dialect.op_views import ShardingConstraint
from shardc.dialect.rules.builder import pointwise_rule
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.rules.pointwise import ELEMENTWISE_OPS
from shardc.dialect.rules.registry import rule_for
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType

from .propagation.projection import TensorFactorShardings, axes_size, project

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


def splice_after(
    after: dict[int, list[Operation]], blocks: dict[int, Block], moved: set[int] | None = None
) -> None:
    """Put the ops queued in `after` (by `id` of an op of `blocks`) right after that op; an op
    of a block that is queued elsewhere (its `id` in `moved`) leaves its old place."""
    for block in blocks.values():
        ops: list[Operation] = []
        get = after.get
        for op in block.ops:
            if moved and id(op) in moved:
                continue
            ops.append(op)
            queued = get(id(op))
            if queued:
                _extend(ops, queued, get)
        block.ops = ops


def _extend(ops: list[Operation], queued: list[Operation], get: Callable) -> None:
    """`queued` into `ops`, each followed by what is queued after it in turn (an op the export
    moved after another, a redirected constraint, may have pins of its own)."""
    for q in queued:
        ops.append(q)
        more = get(id(q))
        if more:
            _extend(ops, more, get)


# -- the local selection: pin only where a neighbour could move a value -----------------------


class Wild:
    """The layout of a value XLA's Shardy clones per use (a constant, an iota, a broadcast
    scalar): each copy takes its user's layout, so it neither asks for nor gives one. `WILD`
    is its one instance."""


WILD = Wild()
_UNSET = object()  # a memo's mark for a key not looked up yet
_NOT_TENSOR = object()  # a value that is not a tensor (a token), in `projections`

# ops whose results XLA does not derive through a factor rule from their operands (data flow
# edges, calls, regions, kept op shardings, groups and barriers), or whose rule XLA was seen
# to apply otherwise than shardc (a gather's result, fuzzer seed 1313 #35): their operands and
# results are always pinned
OPAQUE_OPS = frozenset(
    {
        "stablehlo.while",
        "stablehlo.case",
        "stablehlo.if",
        "stablehlo.optimization_barrier",
        "stablehlo.custom_call",
        "stablehlo.send",
        "stablehlo.recv",
        "stablehlo.after_all",
        "stablehlo.gather",
        "stablehlo.scatter",
        "func.call",
        "func.return",
        "stablehlo.return",
        "sdy.return",
        "sdy.manual_computation",
        "sdy.sharding_group",
        "sdy.propagation_barrier",
        "sdy.sharding_constraint",
        "sdy.named_computation",
    }
)

# chlo ops XLA rewrites into one element-wise StableHLO op before its Shardy runs
# (reference/export-and-xla.md, 3: `chlo.square` is a multiply of the operand by itself); not
# `chlo.erf`, which becomes an `mhlo.erf` that Shardy has no rule for
LEGALISED_ELEMENTWISE = frozenset({"chlo.square"})

Layout = Callable[[Value], "TensorSharding | Wild | None"]


class NeighbourSelection:
    """Which values XLA lays out as shardc did without a pin, judged from their neighbours.

    In XLA every value that is not pinned starts without a sharding and takes axes only from
    the ops next to it, factor by factor. An op is *exact* when all its tensors (at the layouts
    shardc chose; a `Wild` one aside) give each factor the same axes, and shard no factor that
    needs replication, permutes data or is blocked: such an op never gives a neighbour more
    than shardc's layout, whatever order XLA visits it in (a conflict settled by priority, a
    dot with two candidate factors, a reshape whose split did not fit all show up as an op
    that is not exact). A value may go unpinned when its producer and every user are exact
    (or the user is a closed constraint or `@main`'s return to its very layout), and each of
    its sharded dims is given in full by a tensor XLA already holds at its layout: an operand
    of its producer or a tensor of a user, pinned, kept by XLA (a constraint, an `@main`
    argument, a manual computation's result) or itself left unpinned earlier on these grounds
    (so no cycle of unpinned values can keep each other empty)."""

    def __init__(
        self,
        layout: Layout,
        fixed: Callable[[Value], bool],
        resolve: Callable[[TensorSharding], Mesh | None],
        returned: Callable[[Operation, int], TensorSharding | None],
    ) -> None:
        self.layout = layout
        self.fixed = fixed
        self.resolve = resolve
        self.returned = returned
        # memos keyed on ops and values themselves (identity: no `id()` call per lookup)
        self._exact: dict[Operation, bool] = {}
        self._proj: dict[Operation, list[TensorFactorShardings | None] | None] = {}
        self._rules: dict[Operation, OpShardingRule | None] = {}
        self._same: dict[Operation, list[TensorSharding | None] | None] = {}
        # each value's layout, asked once; the memo keeps every layout alive, so that the other
        # memos may key on a layout's `id`
        self._lay: dict[Value, TensorSharding | Wild | None] = {}
        self._by_sig: dict[tuple[int, ...], list[TensorFactorShardings | None] | None] = {}
        self._agreed: dict[int, bool] = {}  # id of a list `_by_sig` holds -> `_agree` of it
        self._fits: dict[tuple[int, int], bool] = {}  # (id of a layout, id of a tensor type)
        self._decided: set[Value] = set()
        self._must: set[Value] = set()
        self._want: dict[int, list[int]] = {}  # id of a layout -> its sharded dims

    def unpinned(self, rest: list[tuple[OpResult, Operation, TensorSharding]]) -> set[Value]:
        """The values of `rest` (in program order: operands before their users) that need no
        pin."""
        out: set[Value] = set()
        must = self._must
        maybe = []
        memo = self._exact
        exact = self.exact
        for r, op, s in rest:
            ok = memo.get(op)
            if ok is None:
                ok = exact(op)
            if ok:
                # every user is exact or a constraint/@main's result to `s` (`_user_ok`); the
                # users alone decide all but a return's, which needs the operand index
                for user in r.users:
                    name = user.name
                    if name == "sdy.sharding_constraint":
                        c = ShardingConstraint(user).sharding
                        ok = c is s or c == s
                    elif name == "func.return":
                        ok = all(self._user_ok(u, i, s) for u, i in r.uses)
                        break
                    else:
                        ok = memo.get(user)
                        if ok is None:
                            ok = exact(user)
                    if not ok:
                        break
            if ok:
                maybe.append((r, op, s))
            else:
                must.add(r)
        decided = self._decided
        supported = self._supported
        for r, op, s in maybe:
            if supported(r, op, s):
                out.add(r)
            decided.add(r)
        return out

    def _layout(self, v: Value) -> TensorSharding | Wild | None:
        got = self._lay.get(v, _UNSET)
        if got is _UNSET:
            got = self._lay[v] = self.layout(v)
        return got  # type: ignore[return-value]

    # -- exactness ------------------------------------------------------------------------------
    def _user_ok(self, user: Operation, index: int, s: TensorSharding) -> bool:
        if user.name == "sdy.sharding_constraint":
            return ShardingConstraint(user).sharding == s
        if user.name == "func.return":
            return self.returned(user, index) == s
        return self.exact(user)

    def rule(self, op: Operation) -> OpShardingRule | None:
        """The factor rule XLA's Shardy applies to `op` (None: none, or not applied as
        shardc's)."""
        key = op
        if key in self._rules:
            return self._rules[key]
        rule = None
        if op.name in LEGALISED_ELEMENTWISE:
            rule = pointwise_rule(op)
        elif op.name not in OPAQUE_OPS:
            rule = rule_for(op)
        self._rules[key] = rule
        return rule

    def same_shape_layouts(self, op: Operation) -> list[TensorSharding | None] | None:
        """For an element-wise `op` whose tensors all have one shape, each tensor's layout
        (None: wild), where every layout divides that shape evenly: then a factor is a dim, and
        two tensors agree on every factor exactly when their layouts are equal (no projection
        needed). None for any other op (the general path projects). Where not None, `op` is
        exact when the layouts present are equal: that goes into `exact`'s memo on the way."""
        got = self._same.get(op, _UNSET)  # type: ignore[arg-type]
        if got is not _UNSET:
            return got  # type: ignore[return-value]
        out: list[TensorSharding | None] | None = None
        if op.name in SAME_SHAPE_OPS:
            memo = self._lay
            layout = self.layout
            seen = None  # the last type checked (types are shared objects: most tensors share one)
            shape = None
            fits = None  # the last layout found to divide `shape` (most tensors share one)
            equal = True  # (every layout present equals the one before it)
            out = []
            for v in (*op.operands, *op.results):
                t = v.type
                if t is not seen:
                    if not isinstance(t, TensorType) or (shape is not None and shape != t.shape):
                        out = None
                        break
                    seen = t
                    shape = t.shape
                s = memo.get(v, _UNSET)
                if s is _UNSET:
                    s = memo[v] = layout(v)
                if s is None:
                    out = None
                    break
                if s is WILD:  # (its one instance)
                    out.append(None)
                    continue
                if s is not fits:
                    if s.unreduced or not self._divides(s, t):  # type: ignore[union-attr]
                        out = None
                        break
                    if equal and fits is not None and s != fits:
                        equal = False
                    fits = s
                out.append(s)  # type: ignore[arg-type]
            if out is not None:
                self._exact[op] = equal
        self._same[op] = out
        return out

    def _divides(self, s: TensorSharding, t: TensorType) -> bool:
        key = (id(s), id(t))  # (layouts and types are shared objects, kept alive by the memos)
        got = self._fits.get(key)
        if got is None:
            shape = t.shape
            mesh = self.resolve(s)
            got = mesh is not None and all(
                d < len(shape) and shape[d] >= 0 and shape[d] % axes_size(dim.axes, mesh) == 0
                for d, dim in enumerate(s.dims)
            )
            self._fits[key] = got
        return got

    def projections(self, op: Operation) -> list[TensorFactorShardings | None] | None:
        """Each operand's then each result's layout on `op`'s factors (None: wild or not a
        tensor); None when `op` has no rule XLA applies as shardc does, or a tensor of it has
        no layout XLA holds."""
        key = op
        got = self._proj.get(key, _UNSET)  # type: ignore[arg-type]
        if got is not _UNSET:
            return got  # type: ignore[return-value]
        out: list[TensorFactorShardings | None] | None = None
        rule = self.rule(op)
        if (
            rule is not None
            and rule.num_operands == len(op.operands)
            and rule.num_results == len(op.results)
        ):
            layouts = [
                self._layout(v) if isinstance(v.type, TensorType) else _NOT_TENSOR
                for v in (*op.operands, *op.results)
            ]
            # ops of one rule with the same layout objects project alike (a model's layers
            # repeat a few hundred of them); every object in the key is kept alive by a memo
            sig = (id(rule), *map(id, layouts))
            got = self._by_sig.get(sig, _UNSET)  # type: ignore[arg-type]
            if got is _UNSET:
                got = self._by_sig[sig] = self._project(rule, layouts)
            out = got  # type: ignore[assignment]
        self._proj[key] = out
        return out

    def _project(
        self, rule: OpShardingRule, layouts: list[TensorSharding | Wild | None | object]
    ) -> list[TensorFactorShardings | None] | None:
        out: list[TensorFactorShardings | None] = []
        mesh_ref: object = None
        dims_of = (*rule.operand_dims, *rule.result_dims)
        for s, dims in zip(layouts, dims_of, strict=True):
            if s is _NOT_TENSOR or isinstance(s, Wild):
                out.append(None)
                continue
            mesh = self.resolve(s) if isinstance(s, TensorSharding) else None
            if (
                not isinstance(s, TensorSharding)
                or mesh is None
                or s.unreduced
                or (mesh_ref is not None and s.mesh != mesh_ref)
            ):
                return None
            mesh_ref = s.mesh
            out.append(project(s, dims, rule.factor_sizes, mesh))
        return out

    def exact(self, op: Operation) -> bool:
        """Whether every tensor of `op` gives each factor the same axes (see the class)."""
        key = op
        got = self._exact.get(key)
        if got is not None:
            return got
        if self.same_shape_layouts(op) is not None:
            return self._exact[key]  # (set on the way)
        ok = False
        projs = self.projections(op)
        if projs is not None:
            got = self._agreed.get(id(projs))  # (shared by the ops of one signature)
            if got is None:
                rule = self.rule(op)
                assert rule is not None
                got = self._agreed[id(projs)] = _agree(projs, rule)
            ok = got
        self._exact[key] = ok
        return ok

    # -- support ------------------------------------------------------------------------------
    def _known(self, v: Value) -> bool:
        return v in self._must or v in self._decided or self.fixed(v)

    def _supported(self, r: OpResult, op: Operation, s: TensorSharding) -> bool:
        """Each sharded dim of `r` is given in full by a tensor XLA holds at its layout."""
        want = self._want.get(id(s))
        if want is None:
            want = self._want[id(s)] = [d for d, dim in enumerate(s.dims) if dim.axes]
        if not want:
            return True
        # an element-wise side gives every dim or none (`_gives`), and needs no operand index:
        # those first, then the dims the other sides give one by one
        same_of = self.same_shape_layouts
        known = self._same  # (`exact` has asked for every side: its own and every user)
        same = known[op] if op in known else same_of(op)
        if same is not None and self._gives_same(op, same, r):
            return True
        general = same is None
        for user in r.users:
            if user.name in ("sdy.sharding_constraint", "func.return"):
                return True  # (a closed constraint or @main's result to `s` itself: `_user_ok`)
            same = known[user] if user in known else same_of(user)
            if same is None:
                general = True
            elif self._gives_same(user, same, r):
                return True
        if not general:
            return False
        sides = [(u, i) for u, i in r.uses if same_of(u) is None]
        if same_of(op) is None:
            sides.append((op, len(op.operands) + r.index))
        return all(any(self._gives(o, pos, d) for o, pos in sides) for d in want)

    def _gives_same(self, op: Operation, same: list[TensorSharding | None], r: Value) -> bool:
        """`_gives` for an element-wise `op` of one shape (exact: every layout present is
        `r`'s): a tensor of `op` but `r` (not held: it is being judged) is XLA's at its layout,
        whatever the dim."""
        must, decided, fixed = self._must, self._decided, self.fixed  # (`_known`, inlined)
        k = 0
        for v in op.operands:
            if v is not r and same[k] is not None and (v in must or v in decided or fixed(v)):
                return True
            k += 1
        for v in op.results:
            if v is not r and same[k] is not None and (v in must or v in decided or fixed(v)):
                return True
            k += 1
        return False

    def _gives(self, op: Operation, pos: int, d: int) -> bool:
        """Whether the tensors of exact `op` other than the one at `pos` (operands, then
        results), those XLA holds at their layout, give every factor of dim `d` of the tensor at
        `pos` its axes."""
        values = (*op.operands, *op.results)
        same = self.same_shape_layouts(op)
        if same is not None:
            return self._gives_same(op, same, values[pos])
        rule = self.rule(op)
        projs = self.projections(op)
        if rule is None or projs is None:
            return False
        mine = projs[pos]
        dims = (*rule.operand_dims, *rule.result_dims)[pos]
        if mine is None or d >= len(dims):
            return False
        for f in dims[d]:
            fs = mine.factors.get(f)
            if fs is None or not fs.axes:
                continue
            if not any(
                k != pos
                and p is not None
                and f in p.factors
                and p.factors[f].axes == fs.axes
                and self._known(values[k])
                for k, p in enumerate(projs)
            ):
                return False
        return True


def _agree(projs: list[TensorFactorShardings | None], rule: OpShardingRule) -> bool:
    """Every factor has one axis list over the tensors that have it, none overflows, and no
    factor that must stay replicated, permutes data or is blocked is sharded."""
    seen: dict[int, tuple] = {}
    for p in projs:
        if p is None:
            continue
        for f, fs in p.factors.items():
            if fs.overflow:
                return False
            if fs.axes and (rule.kinds[f] in STILL_KINDS or f in rule.blocked):
                return False
            prev = seen.setdefault(f, fs.axes)
            if prev != fs.axes:
                return False
    return True


# element-wise ops (one factor per dim, in every tensor alike): when all their tensors have one
# shape, their layouts are compared directly
SAME_SHAPE_OPS = (ELEMENTWISE_OPS - {"stablehlo.map"}) | LEGALISED_ELEMENTWISE
STILL_KINDS = frozenset({FactorKind.NEED_REPLICATION, FactorKind.PERMUTATION})
