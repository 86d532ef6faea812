"""Factor propagation strategies (docs/propagation.md §4-§5): pure functions on projections.

A step sees the operands and results of one op projected on its factors and a direction per
factor, and grows the factor shardings in place. Nothing here touches the IR: tests build
projections by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from math import gcd

from shardc.dialect.layout_math import axes_size
from shardc.dialect.shardings import AxisRef, Mesh, make_axis_ref

from .projection import AxisList, FactorSharding, TensorFactorShardings, is_strict_prefix

Direction = int  # bit flags below: union is `|`, intersection is `&` (plain ints: hot path)


class Directions:
    """Which way a factor may propagate."""

    NONE: Direction = 0
    FORWARD: Direction = 1
    BACKWARD: Direction = 2
    BOTH: Direction = 3


@dataclass(slots=True)
class StepInput:
    """The projected tensors of one op (operands first, then results) and what the op is."""

    operands: list[TensorFactorShardings]
    results: list[TensorFactorShardings]
    factor_sizes: tuple[int, ...]
    # each tensor's size by its factors (unit_builder._tensor_sizes), operands then results
    tensor_sizes: Sequence[int]
    elementwise: bool = False
    # conservative propagation: no axis is split into sub-axes (a candidate stops at the first
    # sub-axis a tensor would take, as Shardy's conservative-propagation does)
    conservative: bool = False


# ---------------------------------------------------------------------------------------------
# Axis relations (docs/sharding_model.md §2.3)


def can_coexist(a: AxisRef, b: AxisRef, mesh: Mesh) -> bool:
    if a.name != b.name or a.sub is None or b.sub is None:
        return True
    pa, na = a.pre_size(), a.next_pre_size(mesh)
    pb, nb = b.pre_size(), b.next_pre_size(mesh)
    lo, hi = min(pa, pb), max(pa, pb)
    nlo, nhi = min(na, nb), max(na, nb)
    if nlo > hi:
        return nlo % hi == 0 and hi % lo == 0 and nhi % nlo == 0
    return hi % nlo == 0


def prefix_without_overlap(a: AxisRef, b: AxisRef, mesh: Mesh) -> AxisRef | None:
    """The part of `a` major to `b` (all of `a` if they do not overlap; None if nothing)."""
    if a.name != b.name:
        return a
    if not can_coexist(a, b, mesh):
        return None
    if not a.overlaps(b, mesh):
        return a
    pa, pb = a.pre_size(), b.pre_size()
    if pa >= pb:
        return None
    return make_axis_ref(a.name, pa, pb // pa, mesh)


# ---------------------------------------------------------------------------------------------
# Compatible major axes (docs/propagation.md §4.1)


def _merge(old: AxisList, new: AxisList, can_expand: bool, mesh: Mesh) -> tuple[AxisList, bool]:
    res: list[AxisRef] = []
    i = 0
    while i < len(old) and i < len(new):
        o, n = old[i], new[i]
        if o.name != n.name:
            return tuple(res), False
        if o == n:
            res.append(n)
        elif n.prefix_of(o, mesh):
            if i + 1 < len(new):
                res.append(n)
                return tuple(res), False
            res.append(o)
        elif o.prefix_of(n, mesh):
            if not can_expand or i + 1 < len(old):
                res.append(o)
                return tuple(res), False
            res.append(n)
        else:
            return tuple(res), False
        i += 1
    res.extend(old[i:])
    if can_expand:
        res.extend(new[i:])
    return tuple(res), can_expand


def compatible_major_axes(step: StepInput, f: int, direction: Direction, mesh: Mesh) -> AxisList:
    """The longest axes list every tensor along `f` is a prefix of, within `direction`."""
    if direction == Directions.NONE:
        return ()
    if direction & Directions.FORWARD:
        first, second = step.operands, step.results
    else:
        first, second = step.results, step.operands
    res: AxisList = ()
    can = True
    for t in first:
        fs = t.factors.get(f)
        # (merging nothing keeps both; onto nothing, while it may expand, takes the new list)
        if fs is not None and fs.axes:
            if res or not can:
                res, can = _merge(res, fs.axes, can, mesh)
            else:
                res = fs.axes
    if direction != Directions.BOTH:
        can = False
    for t in second:
        fs = t.factors.get(f)
        if fs is not None and fs.axes:
            if res or not can:
                res, can = _merge(res, fs.axes, can, mesh)
            else:
                res = fs.axes
    return res


# ---------------------------------------------------------------------------------------------
# Conflicts (docs/propagation.md §4.2)


def _without_overlaps(a: AxisRef | None, others: AxisList, mesh: Mesh) -> AxisRef | None:
    for b in others:
        if a is None:
            return None
        a = prefix_without_overlap(a, b, mesh)
    return a


def prefix_within_factor(
    a: AxisRef, t: TensorFactorShardings, fs: FactorSharding, prev: int, fsize: int, mesh: Mesh
) -> AxisRef | None:
    """How much of `a` the tensor can take along one of its factors, given what it has."""
    r = _without_overlaps(a, t.replicated, mesh)
    r = _without_overlaps(r, t.unreduced, mesh)
    if r is None:
        return None
    a = r
    for b in fs.axes:
        if b.contains(a, mesh):
            return a
    if not fs.closed and not fs.overflow:
        if fs.minor_most:
            return a
        if fsize % prev == 0:
            size = a.size(mesh)
            g = gcd(fsize // prev, size)
            if g == size:
                return a
            if g > 1:
                return make_axis_ref(a.name, a.pre_size(), g, mesh)
    if fs.axes and fs.axes[-1].prefix_of(a, mesh):
        return fs.axes[-1]
    return None


def prefix_without_other_factors(
    a: AxisRef, t: TensorFactorShardings, f: int, mesh: Mesh
) -> AxisRef | None:
    r: AxisRef | None = a
    for g, gs in t.factors.items():
        if g == f:
            continue
        r = _without_overlaps(r, gs.overflow, mesh)
        r = _without_overlaps(r, gs.axes, mesh)
        if r is None:
            return None
    return r


def _truncate(
    axes: AxisList,
    fn: Callable[[AxisRef, int], AxisRef | None],
    mesh: Mesh,
    conservative: bool = False,
) -> AxisList:
    """Keep axes while `fn(axis, prev)` accepts them whole; a partial answer ends the list (with
    `conservative`, a sub-axis answer ends it before that axis)."""
    prev = 1
    for i, a in enumerate(axes):
        r = fn(a, prev)
        if r is None or (conservative and r.sub is not None):
            return axes[:i]
        if r != a:
            return (*axes[:i], r)
        prev *= r.size(mesh)
    return axes


def remove_conflicts_basic(step: StepInput, f: int, axes: AxisList, mesh: Mesh) -> AxisList:
    """Basic strategy: keep only the axes every tensor of the op can take along `f`."""
    fsize = step.factor_sizes[f]
    tensors = [*step.operands, *step.results]

    def accept(a: AxisRef, prev: int) -> AxisRef | None:
        r: AxisRef | None = a
        for t in tensors:
            assert r is not None
            r = prefix_without_other_factors(r, t, f, mesh)
            if r is None:
                return None
            fs = t.factors.get(f)
            if fs is not None:
                r = prefix_within_factor(r, t, fs, prev, fsize, mesh)
                if r is None:
                    return None
        return r

    return _truncate(axes, accept, mesh, step.conservative)


# ---------------------------------------------------------------------------------------------
# Strategies


DirectionFn = Callable[[int], Direction]


def propagate_basic(step: StepInput, direction: DirectionFn, mesh: Mesh) -> list[bool]:
    """Every tensor along a factor gets the same axes: those all of them can accept."""
    tensors = [*step.operands, *step.results]
    updated = [False] * len(tensors)
    for f in range(len(step.factor_sizes)):
        axes = compatible_major_axes(step, f, direction(f), mesh)
        if not axes:
            continue
        axes = remove_conflicts_basic(step, f, axes, mesh)
        for i, t in enumerate(tensors):
            fs = t.factors.get(f)
            if fs is not None and is_strict_prefix(fs.axes, axes, mesh):
                fs.axes = axes
                updated[i] = True
    return updated


def source_of_factor(step: StepInput, f: int, cand: AxisList, mesh: Mesh) -> tuple[int, int]:
    """(size, index) of the biggest tensor that already holds all of `cand` along `f`."""
    best = (0, 1 << 30)
    for i, t in enumerate([*step.operands, *step.results]):
        fs = t.factors.get(f)
        if fs is None:
            continue
        have = fs.axes
        if len(cand) > len(have) or have[: len(cand)] != cand:
            continue
        size = step.tensor_sizes[i]
        if size > best[0]:
            best = (size, i)
    return best


def factor_order(step: StepInput, cands: Sequence[AxisList], mesh: Mesh) -> list[int]:
    """The conflict rule: which factor gets a contested axis first on each tensor.

    Shardy's preference, kept as is: the factor whose source tensor (the biggest tensor already
    holding the whole candidate) is larger wins, because resharding the bigger tensor would cost
    more; for element-wise ops the more-sharded candidate comes next; then the lower tensor index
    (operands before results), then the factor index.
    """
    return _order_of(step, cands, range(len(cands)), mesh)


def _order_of(
    step: StepInput, cands: Sequence[AxisList], factors: Iterable[int], mesh: Mesh
) -> list[int]:
    """`factors` in `factor_order`'s order (each factor's key is its own: any subset keeps
    its relative order)."""
    keys = []
    for f in factors:
        cand = cands[f]
        size, index = source_of_factor(step, f, cand, mesh)
        sharded = -axes_size(cand, mesh) if step.elementwise else 0
        keys.append(((-size, sharded, index, f), f))
    keys.sort()
    return [f for _, f in keys]


def _truncate_within(
    axes: AxisList,
    t: TensorFactorShardings,
    fs: FactorSharding,
    fsize: int,
    mesh: Mesh,
    conservative: bool,
) -> AxisList:
    """`_truncate` by `prefix_within_factor` (inlined: the hot path of every step)."""
    prev = 1
    for i, a in enumerate(axes):
        r = prefix_within_factor(a, t, fs, prev, fsize, mesh)
        if r is None or (conservative and r.sub is not None):
            return axes[:i]
        if r != a:
            return (*axes[:i], r)
        prev *= r.size(mesh)
    return axes


def _truncate_without_others(
    axes: AxisList, t: TensorFactorShardings, f: int, mesh: Mesh, conservative: bool
) -> AxisList:
    """`_truncate` by `prefix_without_other_factors` (inlined, as above; it needs no running
    size of the axes kept)."""
    for i, a in enumerate(axes):
        r = prefix_without_other_factors(a, t, f, mesh)
        if r is None or (conservative and r.sub is not None):
            return axes[:i]
        if r != a:
            return (*axes[:i], r)
    return axes


def _lacked(visit: list[tuple[int, TensorFactorShardings, bool]], f: int, cand: AxisList) -> bool:
    """Whether a tensor along `f` does not hold all of `cand`."""
    for _, t, _ in visit:
        fs = t.factors.get(f)
        if fs is not None and fs.axes != cand:
            return True
    return False


def propagate_aggressive(step: StepInput, direction: DirectionFn, mesh: Mesh) -> list[bool]:
    """Each tensor takes as much of each factor's candidate as it can (results first)."""
    nfactors = len(step.factor_sizes)
    cands = [compatible_major_axes(step, f, direction(f), mesh) for f in range(nfactors)]
    n_ops = len(step.operands)
    updated = [False] * (n_ops + len(step.results))
    visit = [(n_ops + i, t, False) for i, t in enumerate(step.results)]
    visit += [(i, t, True) for i, t in enumerate(step.operands)]
    # only a factor with a candidate that some tensor lacks can change anything (a tensor
    # holding the whole candidate is skipped below, and its factor's axes stay as they are):
    # the order among those factors is all that matters
    active = [f for f in range(nfactors) if cands[f] and _lacked(visit, f, cands[f])]
    if not active:
        return updated
    order = active if len(active) == 1 else _order_of(step, cands, active, mesh)
    conservative = step.conservative
    for index, t, is_operand in visit:
        for f in order:
            fs = t.factors.get(f)
            cand = cands[f]
            # (a tensor holding the whole candidate already can take nothing more)
            if fs is None or not cand or fs.axes == cand:
                continue
            new = _truncate_within(cand, t, fs, step.factor_sizes[f], mesh, conservative)
            if not is_strict_prefix(fs.axes, new, mesh):
                continue
            new = _truncate_without_others(new, t, f, mesh, conservative)
            if is_operand and step.elementwise:
                for r in step.results:
                    rfs = r.factors.get(f)
                    if rfs is not None and is_strict_prefix(rfs.axes, new, mesh):
                        new = rfs.axes
            if is_strict_prefix(fs.axes, new, mesh):
                fs.axes = new
                updated[index] = True
    return updated


STRATEGIES: dict[str, Callable[[StepInput, DirectionFn, Mesh], list[bool]]] = {
    "aggressive": propagate_aggressive,
    "basic": propagate_basic,
}
