"""XLA's dot partitioning on mesh-axis shardings (pure: shapes, dim axes and a mesh in).

XLA's SPMD partitioner (`dot_handler.cc`, `PartitionDot`) partitions a dot recursively: it
first tries a base case on the shardings as they are, then groups the devices on the dims
where the operands and the output agree (batch dims, then non-contracting dims, then
contracting dims), partitions the smaller dot within each group the same way, and falls back
to resharding the operands to what the output needs. Each step may reshard an operand
(permuting blocks among devices, moving an axis to another dim, or gathering it), all-reduce
partial results, and reshard the result to the output's sharding.

This module follows that recursion on shardc's representation of a sharding: the mesh axes
(split into atoms, so that two are equal or disjoint) on each dim. A device group of XLA's is
the set of devices that agree on some axes: grouping removes those axes from the active set,
and a tensor that is "replicated" within a group uses none of the axes left active. XLA's
device order inside a tile assignment has no exact counterpart here: where XLA aligns groups
by permuting devices, the model swaps the atoms involved (a collective-permute).

`dot_plan` is the entry: the collectives of one dot, per operand (before it) and on its
result (after it), and the dims each tensor is computed at. docs/xla_partitioner.md ("dots")
says which of XLA's strategies are followed; tests/differential/test_plan_xla_rules.py
compiles cases with XLA and compares.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from shardc.dialect.layout_math import axes_layout, axes_size, dim_axes
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding

from .cost import _atoms, _split, reshard_steps
from .steps import ALL_REDUCE, Step, local_bytes, merge_axes, sort_axes

Atoms = tuple[tuple[AxisRef, ...], ...]  # axes (atoms) per dim, major to minor
Active = frozenset[AxisRef]


@dataclass(frozen=True)
class DotDims:
    """Which dims of a dot correspond: (lhs, rhs, output) per batch dim, (lhs, rhs) per
    contracting dim, (lhs, output) and (rhs, output) per non-contracting dim."""

    batch: tuple[tuple[int, int, int], ...]
    contracting: tuple[tuple[int, int], ...]
    lhs_free: tuple[tuple[int, int], ...]
    rhs_free: tuple[tuple[int, int], ...]


def dot_dims(rule: OpShardingRule) -> DotDims | None:
    """The dim correspondence of a two-operand, one-result rule with one factor per dim whose
    factors are batch (all three), contracting (both operands, a reduction) or free (one
    operand and the result): a dot_general's. None for any other rule."""
    if len(rule.operand_dims) != 2 or len(rule.result_dims) != 1:
        return None
    tensors = (rule.operand_dims[0], rule.operand_dims[1], rule.result_dims[0])
    where: dict[int, list[int | None]] = {}
    for t, dims in enumerate(tensors):
        for d, factors in enumerate(dims):
            if len(factors) != 1:
                return None
            slot = where.setdefault(factors[0], [None, None, None])
            if slot[t] is not None:
                return None
            slot[t] = d
    batch, contracting, lhs_free, rhs_free = [], [], [], []
    for f, (a, b, o) in sorted(where.items()):
        kind = rule.kinds[f]
        if a is not None and b is not None and o is not None and kind == FactorKind.PASS_THROUGH:
            batch.append((a, b, o))
        elif a is not None and b is not None and o is None and kind == FactorKind.REDUCTION:
            contracting.append((a, b))
        elif a is not None and b is None and o is not None and kind == FactorKind.PASS_THROUGH:
            lhs_free.append((a, o))
        elif a is None and b is not None and o is not None and kind == FactorKind.PASS_THROUGH:
            rhs_free.append((b, o))
        else:
            return None
    if not contracting and not batch:
        return None
    return DotDims(tuple(batch), tuple(contracting), tuple(lhs_free), tuple(rhs_free))


@dataclass(frozen=True)
class DotPlan:
    """The collectives of one dot: before it per operand, after it on the result; the layouts
    lhs, rhs and the result are computed at; the axes partial sums are reduced over."""

    operands: tuple[tuple[Step, ...], tuple[Step, ...]]
    result: tuple[Step, ...]
    computed: tuple[TensorSharding, TensorSharding, TensorSharding]
    reduced: tuple[AxisRef, ...]
    # per operand: the axes of the device group XLA reshards it within (empty: none); such a
    # reshard goes to that grouping's own cache (`CreatePerGroupPartitioningState`), which
    # only a dot grouped alike reuses
    groups: tuple[frozenset[AxisRef], frozenset[AxisRef]] = (frozenset(), frozenset())


LHS, RHS, OUT = 0, 1, 2


@dataclass(frozen=True)
class _Event:
    """One collective-making step: a reshard of tensor `which` (operand 0/1, or the result
    2) from `src` to `dst`, or an all-reduce (`which` = -1) of a tensor at `src` over
    `axes`."""

    which: int
    src: Atoms
    dst: Atoms
    axes: tuple[AxisRef, ...] = ()
    group: Active = frozenset()  # the axes of the device group it is made within (if any)


@dataclass(frozen=True)
class _Done:
    events: tuple[_Event, ...]
    result: Atoms  # the result's dims where the dot made it (before the reshards after it)
    lhs: Atoms  # the operands as the dot read them
    rhs: Atoms


Creator = Callable[[Atoms, Atoms, Active], tuple[tuple[_Event, ...], Atoms]]


class _Partitioner:
    def __init__(
        self,
        dims: DotDims,
        shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
        elem_bytes: tuple[int, int, int],
        mesh: Mesh,
    ):
        self.d = dims
        self.full: Active = frozenset()  # the mesh's atoms: a smaller active set is a group
        self.shapes = shapes
        self.elem = elem_bytes
        self.mesh = mesh
        # dim lists per tensor and kind
        self.batch = ([b[0] for b in dims.batch], [b[1] for b in dims.batch],
                      [b[2] for b in dims.batch])  # fmt: skip
        self.contr = ([c[0] for c in dims.contracting], [c[1] for c in dims.contracting])
        self.lfree = ([f[0] for f in dims.lhs_free], [f[1] for f in dims.lhs_free])
        self.rfree = ([f[0] for f in dims.rhs_free], [f[1] for f in dims.rhs_free])

    # -- sizes -----------------------------------------------------------------------------
    def size(self, atoms: Sequence[AxisRef]) -> int:
        return axes_size(atoms, self.mesh)

    def split_alike(
        self, t: Atoms, out: Atoms, free: Sequence[tuple[int, int]], active: Active
    ) -> list[tuple[int, int]]:
        """The (operand dim, result dim) pairs of `free` split into the same number of parts
        (more than one) on operand `t` and on the result."""
        pairs = []
        for d, o in free:
            n = self.size(self.act(t, d, active))
            if n > 1 and n == self.size(self.act(out, o, active)):
                pairs.append((d, o))
        return pairs

    def act(self, t: Atoms, d: int, active: Active) -> tuple[AxisRef, ...]:
        return tuple(a for a in t[d] if a in active)

    def parts(self, t: Atoms, dims: Sequence[int], active: Active) -> int:
        return self.size([a for d in dims for a in self.act(t, d, active)])

    def used(self, t: Atoms, active: Active) -> set[AxisRef]:
        return {a for d in t for a in d if a in active}

    def replicated(self, t: Atoms, active: Active) -> bool:
        return not self.used(t, active)

    def partial(self, t: Atoms, active: Active) -> bool:
        """XLA's `ReplicateOnLastTileDim`: split over some active axes, not all."""
        used = self.used(t, active)
        return bool(used) and self.size(list(used)) < self.size(list(active))

    def local_bytes(self, which: int, t: Atoms) -> int:
        return local_bytes(self.shapes[which], self.elem[which], t, self.mesh)

    def group_elements(self, which: int, t: Atoms, active: Active) -> int:
        """Elements of the per-group base shape: the dims split by the inactive axes."""
        n = 1
        for d, size in enumerate(self.shapes[which]):
            inactive = self.size([a for a in t[d] if a not in active])
            n *= -(-size // inactive)
        return n

    # -- shardings -------------------------------------------------------------------------
    def with_active(self, t: Atoms, active: Active, new: Sequence[Sequence[AxisRef]]) -> Atoms:
        """`t` with the active axes of each dim replaced by `new[d]` (inactive ones kept, major)."""
        return tuple(
            tuple(a for a in t[d] if a not in active) + tuple(new[d]) for d in range(len(t))
        )

    def active_dims(self, t: Atoms, active: Active) -> tuple[tuple[AxisRef, ...], ...]:
        return tuple(self.act(t, d, active) for d in range(len(t)))

    def _pairs(self, src: int, dst: int) -> list[tuple[int, int]]:
        """(src dim, dst dim) of the dims tensors `src` and `dst` share."""
        d = self.d
        out: list[tuple[int, int]] = []
        for b in d.batch:
            out.append((b[src], b[dst]))
        if {src, dst} == {LHS, RHS}:
            out += [(c[src], c[dst]) for c in d.contracting]
        if {src, dst} == {LHS, OUT}:
            out += [(f[0], f[1]) if src == LHS else (f[1], f[0]) for f in d.lhs_free]
        if {src, dst} == {RHS, OUT}:
            out += [(f[0], f[1]) if src == RHS else (f[1], f[0]) for f in d.rhs_free]
        return out

    def transpose(
        self, t: Atoms, src: int, dst: int, active: Active
    ) -> tuple[tuple[AxisRef, ...], ...]:
        """XLA's `TransposeShardingWithCollapsedDims`: `t`'s active axes moved onto the dims
        of tensor `dst` that correspond (the others are replicated)."""
        out: list[tuple[AxisRef, ...]] = [()] * len(self.shapes[dst])
        for a, b in self._pairs(src, dst):
            out[b] = self.act(t, a, active)
        return tuple(out)

    def reshard(
        self, which: int, t: Atoms, active: Active, new: Sequence[Sequence[AxisRef]]
    ) -> tuple[tuple[_Event, ...], Atoms]:
        target = self.with_active(t, active, new)
        if target == t:
            return (), t
        return (_Event(which, t, target, group=self.full - active),), target

    def replicate(self, which: int, t: Atoms, active: Active) -> tuple[tuple[_Event, ...], Atoms]:
        return self.reshard(which, t, active, [()] * len(t))

    def moves_only(self, which: int, t: Atoms, active: Active, new: Sequence[Sequence[AxisRef]]) -> bool:
        """Whether resharding to `new` needs no gather (a collective-permute or all-to-all:
        XLA's `CanReshardWithCollectivePermute` / `GetReshardAllToAllSourceTargetDims`)."""
        target = self.with_active(t, active, new)
        steps = reshard_steps(self.shapes[which], self.elem[which], _merged(t, self.mesh),
                              _merged(target, self.mesh), self.mesh, "xla")
        return all(s.kind not in ("all-gather",) for s in steps)

    def swap_into(
        self, t: Atoms, active: Active, fixed: dict[int, tuple[AxisRef, ...]]
    ) -> tuple[tuple[AxisRef, ...], ...]:
        """`t`'s active dims with `fixed[d]` on dim d; an atom of the fixed ones that `t` has
        on another dim takes the place of an atom the fixed dims gave up (devices permuted,
        as XLA's `AlignGroupsWith`), else is dropped."""
        cur = [list(self.act(t, d, active)) for d in range(len(t))]
        freed = [a for d, axes in fixed.items() for a in cur[d] if a not in axes]
        taken = {a for axes in fixed.values() for a in axes}
        for d in range(len(cur)):
            if d not in fixed:
                cur[d] = self._swapped(cur[d], taken, freed)
        for d, axes in fixed.items():
            cur[d] = list(axes)
        return tuple(tuple(r) for r in cur)

    # -- creating the dot ------------------------------------------------------------------
    def create(self, lhs: Atoms, rhs: Atoms, active: Active) -> tuple[tuple[_Event, ...], Atoms]:
        """The local dot of `lhs` and `rhs` as they are: its result's dims (batch and lhs
        free dims from the lhs, rhs free dims from the rhs); no collective."""
        out: list[tuple[AxisRef, ...]] = [()] * len(self.shapes[OUT])
        for a, _, o in self.d.batch:
            out[o] = lhs[a]
        for a, o in self.d.lhs_free:
            out[o] = lhs[a]
        for b, o in self.d.rhs_free:
            out[o] = rhs[b]
        return (), tuple(out)

    def all_reduce(self, at: Atoms, axes: Sequence[AxisRef]) -> tuple[_Event, ...]:
        axes = tuple(axes)
        return (_Event(-1, at, at, axes),) if axes else ()

    def contracting_axes(self, lhs: Atoms, active: Active) -> list[AxisRef]:
        return [a for d in self.contr[0] for a in self.act(lhs, d, active)]

    # -- the recursion ---------------------------------------------------------------------
    def partition(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active,
                  create: Creator) -> _Done:
        """XLA's `PartitionDot` without `require_matching_devices_to_group`: matching device
        groups first, then any, then the operands resharded to what the output needs."""
        for require in (True, False):
            done = self._partition(lhs, rhs, out, active, create, require)
            if done is not None:
                return done
        return self.reshard_to_output(lhs, rhs, out, active, create)

    def _partition(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active,
                   create: Creator, require: bool) -> _Done | None:
        for attempt in (
            lambda: self.base(lhs, rhs, out, active, create, False),
            lambda: self.group_batch(lhs, rhs, out, active, create, require),
            lambda: self.group_free(lhs, rhs, out, active, create, require),
            lambda: self.group_contracting(lhs, rhs, out, active, create, require),
            lambda: self.ungroup_output_replication(lhs, rhs, out, active, create),
            lambda: self.base(lhs, rhs, out, active, create, True),
        ):
            done = attempt()
            if done is not None:
                return done
        return None

    def finish(self, events: tuple[_Event, ...], made: Atoms, out: Atoms, lhs: Atoms,
               rhs: Atoms) -> _Done:
        tail = (_Event(OUT, made, out),) if made != out else ()
        return _Done(events + tail, made, lhs, rhs)

    def base(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active, create: Creator,
             may_reshard: bool) -> _Done | None:
        """XLA's `PartitionBaseCase`: the dot partitioned over every active device at once."""
        n = self.size(list(active))
        if self.partial(out, active):
            return None
        lb, rb = self.parts(lhs, self.batch[0], active), self.parts(rhs, self.batch[1], active)
        ob = self.parts(out, self.batch[2], active)
        lc, rc = self.parts(lhs, self.contr[0], active), self.parts(rhs, self.contr[1], active)
        lf, rf = self.parts(lhs, self.lfree[0], active), self.parts(rhs, self.rfree[0], active)
        olf = self.parts(out, self.lfree[1], active)
        orf = self.parts(out, self.rfree[1], active)
        al, ar, ao = (self.active_dims(t, active) for t in (lhs, rhs, out))
        l2r, r2l = self.transpose(lhs, LHS, RHS, active), self.transpose(rhs, RHS, LHS, active)
        l2o, r2o = self.transpose(lhs, LHS, OUT, active), self.transpose(rhs, RHS, OUT, active)
        o2l, o2r = self.transpose(out, OUT, LHS, active), self.transpose(out, OUT, RHS, active)

        def dot(ev: tuple[_Event, ...], lo: Atoms, r: Atoms) -> _Done:
            made_ev, made = create(lo, r, active)
            return self.finish(ev + made_ev, made, out, lo, r)

        if lb == rb == n and l2r == ar:
            return dot((), lhs, rhs)
        for allow_gather in (False, True):
            if lb == n and ob == n and l2o == ao:
                if allow_gather or self.moves_only(RHS, rhs, active, l2r):
                    ev, r = self.reshard(RHS, rhs, active, l2r)
                    return dot(ev, lhs, r)
            if rb == n and ob == n and r2o == ao:
                if allow_gather or self.moves_only(LHS, lhs, active, r2l):
                    ev, lo = self.reshard(LHS, lhs, active, r2l)
                    return dot(ev, lo, rhs)
        if lc == rc == n:
            if not may_reshard and not self.replicated(out, active) and self.size(
                list(self.used(out, active))
            ) != n:
                return None
            if self.group_bytes(LHS, lhs, active) < self.group_bytes(RHS, rhs, active):
                ev, lo = self.reshard(LHS, lhs, active, r2l)
                r = rhs
            else:
                ev, r = self.reshard(RHS, rhs, active, l2r)
                lo = lhs
            made_ev, made = create(lo, r, active)
            axes = self.contracting_axes(lo, active)
            split = self.split_by(out, set(axes), active)
            ar_ev = (self.reduce_then_slice(made, out, split, axes, active) if split
                     else self.all_reduce(made, axes))
            return self.finish(ev + made_ev + ar_ev, made, out, lo, r)
        if lf == n and olf == n and l2o == ao:
            ev, r = self.replicate(RHS, rhs, active)
            return dot(ev, lhs, r)
        if rf == n and orf == n and r2o == ao:
            ev, lo = self.replicate(LHS, lhs, active)
            return dot(ev, lo, rhs)
        if may_reshard:
            if ob == n:
                ev1, lo = self.reshard(LHS, lhs, active, o2l)
                ev2, r = self.reshard(RHS, rhs, active, o2r)
                return dot(ev1 + ev2, lo, r)
            if olf == n:
                ev1, lo = self.reshard(LHS, lhs, active, o2l)
                ev2, r = self.replicate(RHS, rhs, active)
                return dot(ev1 + ev2, lo, r)
            if orf == n:
                ev1, lo = self.replicate(LHS, lhs, active)
                ev2, r = self.reshard(RHS, rhs, active, o2r)
                return dot(ev1 + ev2, lo, r)
        if not self.replicated(out, active):
            return None
        out_elems = self.group_elements(OUT, out, active)
        if rc == n and self.replicated(lhs, active) and self.group_elements(
            RHS, rhs, active
        ) > out_elems:
            ev, lo = self.reshard(LHS, lhs, active, r2l)
            r = rhs
        elif lc == n and self.replicated(rhs, active) and self.group_elements(
            LHS, lhs, active
        ) > out_elems:
            ev, r = self.reshard(RHS, rhs, active, l2r)
            lo = lhs
        else:
            return None
        made_ev, made = create(lo, r, active)
        ar_ev = self.all_reduce(made, self.contracting_axes(lo, active))
        return self.finish(ev + made_ev + ar_ev, made, out, lo, r)

    def group_bytes(self, which: int, t: Atoms, active: Active) -> int:
        return self.group_elements(which, t, active) * self.elem[which]

    def group_batch(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active, create: Creator,
                    require: bool) -> _Done | None:
        """XLA's `PartitionDotGroupOnBatchDims`: devices grouped by the output's batch axes."""
        bl, br, bo = self.batch
        lb, rb = self.parts(lhs, bl, active), self.parts(rhs, br, active)
        ob = self.parts(out, bo, active)
        if not ((lb == ob or rb == ob) and ob > 1):
            return None
        matching = all(
            self.size(self.act(lhs, a, active)) == self.size(self.act(rhs, b, active))
            for a, b in zip(bl, br, strict=True)
        )
        if require and matching:
            matching = all(
                self.act(lhs, a, active) == self.act(rhs, b, active)
                for a, b in zip(bl, br, strict=True)
            )
        events: tuple[_Event, ...] = ()
        if matching:
            if self.local_bytes(LHS, lhs) > self.local_bytes(RHS, rhs):
                fixed = {b: self.act(lhs, a, active) for a, b in zip(bl, br, strict=True)}
                ev, rhs = self.reshard(RHS, rhs, active, self.swap_into(rhs, active, fixed))
            else:
                fixed = {a: self.act(rhs, b, active) for a, b in zip(bl, br, strict=True)}
                ev, lhs = self.reshard(LHS, lhs, active, self.swap_into(lhs, active, fixed))
            events += ev
            group = [a for d in bl for a in self.act(lhs, d, active)]
        else:
            group = [a for d in bo for a in self.act(out, d, active)]
            for which in (LHS, RHS):
                t = lhs if which == LHS else rhs
                got = self.to_output_batch(which, t, out, active, group, require)
                if got is None:
                    return None
                ev, t = got
                events += ev
                if which == LHS:
                    lhs = t
                else:
                    rhs = t
        inner_active = active - set(group)
        # the output within a group: its batch dims hold the group
        fixed_out = {o: self.act(lhs, a, active) for a, o in zip(bl, bo, strict=True)}
        inner_out = self.with_active(out, active, self.swap_into(out, active, fixed_out))
        done = self.partition(lhs, rhs, inner_out, inner_active, create)
        return self._wrap(events, done, inner_out, out)

    def _wrap(self, events: tuple[_Event, ...], done: _Done, inner_out: Atoms, out: Atoms) -> _Done:
        """An inner partition made for `inner_out`, resharded to `out` after."""
        evs = events + done.events
        tail = (_Event(OUT, inner_out, out),) if inner_out != out else ()
        return _Done(evs + tail, done.result, done.lhs, done.rhs)

    def to_output_batch(self, which: int, t: Atoms, out: Atoms, active: Active,
                        group: list[AxisRef], require: bool
                        ) -> tuple[tuple[_Event, ...], Atoms] | None:
        """XLA's `reshard_to_output_batch`: operand `which` with the output's batch axes on
        its batch dims (its other dims keep what fits)."""
        bt = self.batch[which]
        bo = self.batch[OUT]
        want = {d: self.act(out, o, active) for d, o in zip(bt, bo, strict=True)}
        if self.replicated(t, active):
            return self.reshard(which, t, active, [want.get(d, ()) for d in range(len(t))])
        n = self.size(list(active))
        rest = [d for d in range(len(t)) if d not in want]
        rest_parts = self.size([a for d in rest for a in self.act(t, d, active)])
        repl = n // self.size(list(self.used(t, active)))
        total = rest_parts * self.size([a for v in want.values() for a in v]) * repl
        new = [list(self.act(t, d, active)) for d in range(len(t))]
        if total > n:
            if total % n:
                return None
            ratio = total // n
            contr = self.contr[which] if which in (LHS, RHS) else []
            free = (self.lfree[0] if which == LHS else self.rfree[0])
            cparts = self.parts(t, contr, active)
            fparts = self.parts(t, free, active)
            other_c = self.parts(t, contr, active)
            if self.partial(t, active) and repl % ratio == 0:
                pass
            elif ratio == fparts and (ratio != cparts or cparts == other_c):
                for d in free:
                    new[d] = []
            elif ratio == cparts:
                for d in contr:
                    new[d] = []
            else:
                return None
        elif total < n:
            return None
        for d, axes in want.items():
            new[d] = list(axes)
        fixed = {d: want[d] for d in want}
        kept = self.swap_into(self.with_active(t, active, new), active, fixed)
        target = self.with_active(t, active, kept)
        if require and target != t:
            return None
        return self.reshard(which, t, active, kept)

    def group_free(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active, create: Creator,
                   require: bool) -> _Done | None:
        """XLA's `PartitionDotGroupOnNonContractingDims`: devices grouped by the axes an
        operand's non-contracting dims share with the output."""
        lf, rf = self.lfree, self.rfree
        lparts, rparts = self.parts(lhs, lf[0], active), self.parts(rhs, rf[0], active)
        olparts, orparts = self.parts(out, lf[1], active), self.parts(out, rf[1], active)
        may_l = lparts == olparts and lparts > 1
        may_r = rparts == orparts and rparts > 1
        matching: list[tuple[int, int]] = []
        if may_l or may_r:
            lhs_matching = may_l and (
                not may_r
                or lparts * self.local_bytes(RHS, rhs) < rparts * self.local_bytes(LHS, lhs)
            )
            matching = list(self.d.lhs_free if lhs_matching else self.d.rhs_free)
        elif lparts > 1 and olparts > 1:
            lhs_matching = True
            matching = self.split_alike(lhs, out, self.d.lhs_free, active)
        elif rparts > 1 and orparts > 1:
            lhs_matching = False
            matching = self.split_alike(rhs, out, self.d.rhs_free, active)
        if not matching:
            return None
        m_which, o_which = (LHS, RHS) if lhs_matching else (RHS, LHS)
        m, oth = (lhs, rhs) if lhs_matching else (rhs, lhs)
        group = [a for _, o in matching for a in self.act(out, o, active)]
        fixed = {d: self.act(out, o, active) for d, o in matching}
        m_new = self.swap_into(m, active, fixed)
        if require and self.with_active(m, active, m_new) != m:
            return None
        events: tuple[_Event, ...] = ()
        got = self.other_grouping(o_which, oth, out, active, group, m_which, m)
        if got is None and not self.replicated(oth, active):
            expected = self.expected_other(o_which, out, m, active)
            ev, cand = self.reshard(o_which, oth, active, expected)
            got2 = self.other_grouping(o_which, cand, out, active, group, m_which, m)
            if got2 is not None:
                got = (ev + got2[0], got2[1])
        if got is None:
            ev, oth = self.replicate(o_which, oth, active)
            events += ev
        else:
            events += got[0]
            oth = got[1]
        ev, m = self.reshard(m_which, m, active, m_new)
        events += ev
        inner_active = active - set(group)
        lhs2, rhs2 = (m, oth) if lhs_matching else (oth, m)
        done = self.partition(lhs2, rhs2, out, inner_active, create)
        return _Done(events + done.events, done.result, done.lhs, done.rhs)

    def other_grouping(self, which: int, t: Atoms, out: Atoms, active: Active,
                       group: list[AxisRef], m_which: int, m: Atoms
                       ) -> tuple[tuple[_Event, ...], Atoms] | None:
        """XLA's `GetNonContractingPartitionGroupedShardingForOtherOperand`, with the reshards
        that follow it: the other operand made replicated across the group's axes (its own
        dims keep theirs), or None where XLA gives up (it then gathers it)."""
        gset = set(group)
        used = self.used(t, active)
        free = [a for a in sorted(active, key=lambda a: a.sort_key(self.mesh)) if a not in used]
        gsize = self.size(group)
        repl = self.size(free)
        if self.replicated(t, active):
            return None
        if self.partial(t, active) and repl % gsize == 0:
            if gset <= set(free):
                return (), t  # already replicated across the group
            for d in reversed(range(len(t))):
                axes = self.act(t, d, active)
                if not axes or self.size(axes) % gsize:
                    continue
                if gset <= set(axes):
                    # swap the dim's axes with the replicated ones (a collective-permute)
                    new = list(self.active_dims(t, active))
                    new[d] = tuple(free)
                    return self.reshard(which, t, active, new)
            return self.regroup_replicated(which, t, active, gset)
        contr = self.contr[which]
        free_dims = self.lfree[0] if which == LHS else self.rfree[0]
        out_free = self.lfree[1] if which == LHS else self.rfree[1]
        oc = self.parts(t, contr, active)
        of = self.parts(t, free_dims, active)
        mc = self.parts(m, self.contr[m_which], active)
        out_of = self.parts(out, out_free, active)
        may_contr = oc == gsize and of == out_of
        may_free = gsize == of and mc == oc
        found = [d for d in range(len(t)) if self.act(t, d, active) and set(self.act(t, d, active)) <= gset]
        if found and set(a for d in found for a in self.act(t, d, active)) == gset:
            dims = found
        elif self.partial(t, active) and repl % gsize == 0:
            return self.regroup_replicated(which, t, active, gset)
        elif may_contr and (not may_free or self.local_bytes(which, t) <= local_bytes(
            self.shapes[OUT], self.elem[OUT], out, self.mesh
        )):
            dims = list(contr)
        elif may_free:
            dims = list(free_dims)
        else:
            return None
        # grouped on `dims`: those dims' axes become the group's (aligned), then replicated
        # within the group (gathered)
        fixed: dict[int, tuple[AxisRef, ...]] = {}
        dims_axes = [a for d in dims for a in self.act(t, d, active)]
        if set(dims_axes) != gset:
            # the dims' axes are permuted to the group's devices
            assigned = self._assign(dims, group, t, active)
            if assigned is None:
                return None
            fixed = assigned
        events: tuple[_Event, ...] = ()
        if fixed:
            ev, t = self.reshard(which, t, active, self.swap_into(t, active, fixed))
            events += ev
        keep = [tuple(a for a in self.act(t, d, active) if a not in gset) for d in range(len(t))]
        ev, t = self.reshard(which, t, active, keep)
        return events + ev, t

    def _assign(self, dims: list[int], group: list[AxisRef], t: Atoms,
                active: Active) -> dict[int, tuple[AxisRef, ...]] | None:
        """The group's axes spread over `dims` with each dim's size kept, or None."""
        rest = list(group)
        out: dict[int, tuple[AxisRef, ...]] = {}
        for d in dims:
            want = self.size(self.act(t, d, active))
            got: list[AxisRef] = []
            while rest and self.size(got) < want:
                got.append(rest.pop(0))
            if self.size(got) != want:
                return None
            out[d] = tuple(got)
        return out if not rest else None

    def regroup_replicated(self, which: int, t: Atoms, active: Active,
                           gset: set[AxisRef]) -> tuple[tuple[_Event, ...], Atoms]:
        """Group on the replication: the group's axes that `t` uses are swapped with axes it
        does not use (devices permuted so that each group holds the same blocks)."""
        used = self.used(t, active)
        spare = [a for a in sorted(active, key=lambda a: a.sort_key(self.mesh))
                 if a not in used and a not in gset]
        new = [tuple(self._swapped(self.act(t, d, active), gset, spare)) for d in range(len(t))]
        return self.reshard(which, t, active, new)

    def _swapped(self, axes: Iterable[AxisRef], taken: Collection[AxisRef],
                 spare: list[AxisRef]) -> list[AxisRef]:
        """`axes` with each one of `taken` replaced by the first axis of `spare` of its size
        (removed from `spare`), or dropped where `spare` has none."""
        row = []
        for a in axes:
            if a not in taken:
                row.append(a)
                continue
            same = next((f for f in spare if f.size(self.mesh) == a.size(self.mesh)), None)
            if same is not None:
                spare.remove(same)
                row.append(same)
        return row

    def expected_other(self, which: int, out: Atoms, m: Atoms,
                       active: Active) -> tuple[tuple[AxisRef, ...], ...]:
        """XLA's `InferDotOperandSharding` for operand `which` from the output and the other
        operand: batch and own free dims as the output has them, contracting dims as the
        other operand has them where no axis is taken twice."""
        new: list[tuple[AxisRef, ...]] = [()] * len(self.shapes[which])
        o2t = self.transpose(out, OUT, which, active)
        for d, axes in enumerate(o2t):
            new[d] = axes
        taken = {a for axes in new for a in axes}
        other = RHS if which == LHS else LHS
        m2t = self.transpose(m, other, which, active)
        for d in self.contr[which]:
            axes = m2t[d]
            if axes and not (set(axes) & taken):
                new[d] = axes
                taken |= set(axes)
        return tuple(new)

    def group_contracting(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active,
                          create: Creator, require: bool) -> _Done | None:
        """XLA's `PartitionDotGroupOnContractingDims`: devices grouped by the axes both
        operands split the contracting dims over; partial sums all-reduced across groups."""
        cl, cr = self.contr
        lc, rc = self.parts(lhs, cl, active), self.parts(rhs, cr, active)
        if lc == rc and lc > 1:
            dims = list(zip(cl, cr, strict=True))
        elif lc > 1 and rc > 1:
            dims = [
                (a, b) for a, b in zip(cl, cr, strict=True)
                if self.size(self.act(lhs, a, active)) > 1
                and self.size(self.act(lhs, a, active)) == self.size(self.act(rhs, b, active))
            ]  # fmt: skip
            if not dims:
                return None
        else:
            return None
        events: tuple[_Event, ...] = ()
        if self.local_bytes(LHS, lhs) > self.local_bytes(RHS, rhs):
            fixed = {b: self.act(lhs, a, active) for a, b in dims}
            new = self.swap_into(rhs, active, fixed)
            if require and self.with_active(rhs, active, new) != rhs:
                return None
            ev, rhs = self.reshard(RHS, rhs, active, new)
        else:
            fixed = {a: self.act(rhs, b, active) for a, b in dims}
            new = self.swap_into(lhs, active, fixed)
            if require and self.with_active(lhs, active, new) != lhs:
                return None
            ev, lhs = self.reshard(LHS, lhs, active, new)
        events += ev
        group = [x for a, _ in dims for x in self.act(lhs, a, active)]
        gset = set(group)
        inner_active = active - gset
        out_used = self.used(out, active)
        out_repl = [a for a in active if a not in out_used]
        # the output within a group, and the slice of the all-reduced partial sums after
        inner_out = out
        slice_dims: list[int] = []
        reduced_per_dim: list[int] = []  # output dims split on group axes alone
        if self.partial(out, active) and self.size(out_repl) % self.size(group) == 0:
            if not gset <= set(out_repl):
                inner_out = self.with_active(out, active, self._off_group(out, active, gset))
        else:
            found = self.split_by(out, gset, active)
            if found:
                slice_dims = reduced_per_dim = found
            elif not self.replicated(out, active):
                gsize = self.size(group)
                for dims_o in (self.lfree[1], self.rfree[1], self.batch[2]):
                    if self.parts(out, dims_o, active) == gsize:
                        slice_dims = list(dims_o)
                        fixed_o = self._assign(slice_dims, group, out, active)
                        if fixed_o is not None:
                            inner_out = self.with_active(out, active, self.swap_into(out, active, fixed_o))
                        break

        def inner_create(lo: Atoms, r: Atoms, act: Active) -> tuple[tuple[_Event, ...], Atoms]:
            ev, made = create(lo, r, act)
            if not reduced_per_dim:
                return ev + self.all_reduce(made, [a for a in group]), made
            return ev + self.reduce_then_slice(made, out, reduced_per_dim, group, active), made

        inner_for = inner_out
        if slice_dims:
            # within a group the output's slice dims are whole (the all-reduce precedes the
            # slice)
            inner_for = self.with_active(inner_out, active, [
                () if o in slice_dims else self.act(inner_out, o, active) for o in range(len(out))
            ])
        done = self.partition(lhs, rhs, inner_for, inner_active, inner_create)
        tail = (_Event(OUT, inner_for, out),) if inner_for != out else ()
        return _Done(events + done.events + tail, done.result, done.lhs, done.rhs)

    def split_by(self, out: Atoms, axes: Collection[AxisRef], active: Active) -> list[int]:
        """The output dims split on some of `axes` and on no other active axis."""
        return [o for o in range(len(out))
                if self.act(out, o, active) and set(self.act(out, o, active)) <= set(axes)]

    def reduce_then_slice(self, made: Atoms, out: Atoms, dims: Sequence[int],
                          group: Sequence[AxisRef], active: Active) -> tuple[_Event, ...]:
        """XLA's reduction of partial sums over a contracting group some of whose axes split
        output dims (`dims`): one all-reduce per such dim over its axes, on the whole partial
        result; then the result sliced to those dims, and the group's other axes reduced on
        the slice."""
        events: list[_Event] = []
        for o in dims:
            events.extend(self.all_reduce(made, self.act(out, o, active)))
        taken = {a for o in dims for a in self.act(out, o, active)}
        sliced = tuple(made[d] + self.act(out, d, active) if d in dims else made[d]
                       for d in range(len(made)))
        events.extend(self.all_reduce(sliced, [a for a in group if a not in taken]))
        return tuple(events)

    def _off_group(self, t: Atoms, active: Active, gset: set[AxisRef]) -> tuple[tuple[AxisRef, ...], ...]:
        used = self.used(t, active)
        spare = [a for a in sorted(active, key=lambda a: a.sort_key(self.mesh))
                 if a not in used and a not in gset]
        new = []
        for d in range(len(t)):
            row = []
            for a in self.act(t, d, active):
                if a in gset:
                    same = next((s for s in spare if s.size(self.mesh) == a.size(self.mesh)), None)
                    if same is None:
                        continue
                    spare.remove(same)
                    a = same
                row.append(a)
            new.append(tuple(row))
        return tuple(new)

    def ungroup_output_replication(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active,
                                   create: Creator) -> _Done | None:
        """XLA's `PartitionDotRemovingOutputPartialReplication`: both operands whole, the
        output split over some of the devices: the devices that hold the same output block
        form groups, and the dot is partitioned over the output's axes alone."""
        if not (self.replicated(lhs, active) and self.replicated(rhs, active)
                and self.partial(out, active)):
            return None
        inner = frozenset(self.used(out, active))
        return self.partition(lhs, rhs, out, inner, create)

    def reshard_to_output(self, lhs: Atoms, rhs: Atoms, out: Atoms, active: Active,
                          create: Creator) -> _Done:
        """XLA's last resort (`ReshardLHSRHSToMatchOutputSharding`): each operand resharded to
        what the output implies for it (contracting dims whole)."""
        ev1, lo = self.reshard(LHS, lhs, active, self.transpose(out, OUT, LHS, active))
        ev2, r = self.reshard(RHS, rhs, active, self.transpose(out, OUT, RHS, active))
        made_ev, made = create(lo, r, active)
        return self.finish(ev1 + ev2 + made_ev, made, out, lo, r)


def _merged(t: Atoms, mesh: Mesh) -> TensorSharding:
    return axes_layout(mesh, (merge_axes(d, mesh) for d in t))


def dot_plan(
    dims: DotDims,
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
    elem_bytes: tuple[int, int, int],
    tensors: tuple[TensorSharding, TensorSharding, TensorSharding],
    mesh: Mesh,
) -> DotPlan:
    """The collectives XLA's partitioner makes for a dot whose lhs, rhs and result are
    laid out as `tensors`, see the module docstring."""
    axes = [dim_axes(t, len(shape)) for t, shape in zip(tensors, shapes, strict=True)]
    refs = [a for t in axes for d in t for a in d]
    cuts = _atoms(refs + _mesh_refs(mesh), mesh)
    atoms = tuple(
        tuple(tuple(x for a in d for x in _split(a, cuts, mesh)) for d in t) for t in axes
    )
    active: Active = frozenset(
        x for a in _mesh_refs(mesh) for x in _split(a, cuts, mesh) if x.size(mesh) > 1
    )
    p = _Partitioner(dims, shapes, elem_bytes, mesh)
    p.full = active
    lhs, rhs, out = atoms
    done = p.partition(lhs, rhs, out, active, p.create)
    per: list[list[Step]] = [[], [], []]
    reduced: list[AxisRef] = []
    for e in done.events:
        if e.which == -1:
            per[OUT].append(
                Step(ALL_REDUCE, sort_axes(list(e.axes), mesh),
                     local_bytes(shapes[OUT], elem_bytes[OUT], e.src, mesh),
                     _merged(e.src, mesh))
            )
            reduced.extend(e.axes)
            continue
        per[e.which].extend(
            reshard_steps(shapes[e.which], elem_bytes[e.which], _merged(e.src, mesh),
                          _merged(e.dst, mesh), mesh, "xla")
        )
    computed = (_merged(done.lhs, mesh), _merged(done.rhs, mesh), _merged(done.result, mesh))
    groups = [frozenset(a for e in done.events if e.which == w for a in e.group)
              for w in (LHS, RHS)]  # fmt: skip
    return DotPlan((tuple(per[LHS]), tuple(per[RHS])), tuple(per[OUT]), computed,
                   sort_axes(reduced, mesh) if reduced else (), (groups[0], groups[1]))


def _mesh_refs(mesh: Mesh) -> list[AxisRef]:
    return [AxisRef(a.name) for a in mesh.axes]
