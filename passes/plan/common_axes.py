"""The sharding an op is computed at: one axis list per factor (after Shardy's `findCommonAxes`
in `explicit_reshards_util.cc`, our own code). Pure: projections, rule data and sizes in.

1. If every tensor that has a factor shards it the same way, need-replication factors are
   unsharded and no axis serves two factors, that is the answer (nothing to reshard).
2. An op with two non-scalar tensors, no need-replication factor and no compound dim keeps the
   preferred tensor's layout (no sharded permutation factor, then the bigger tensor, then the
   more sharded) and reshards the other one only.
3. Otherwise, greedily: every (factor, axes prefix) a tensor has is a candidate, scored by the
   total size of the tensors that have that prefix, then factor kind (pass-through, reduction,
   permutation, need-replication), then the sharding it adds; the best is assigned, candidates
   of the same factor that do not extend it are dropped, others are cut before any axis it took.
   Need-replication factors end unsharded.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardc.dialect.layout_math import axes_size
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import AxisRef, Mesh

from ..propagation.projection import FactorSharding, TensorFactorShardings

AxesPerFactor = list[tuple[AxisRef, ...]]

_PRECEDENCE = {
    FactorKind.PASS_THROUGH: 3,
    FactorKind.REDUCTION: 2,
    FactorKind.PERMUTATION: 1,
    FactorKind.NEED_REPLICATION: 0,
}


def _overlaps(axes: Sequence[AxisRef], seen: Sequence[AxisRef], mesh: Mesh) -> bool:
    return any(a.overlaps(b, mesh) for a in axes for b in seen)


def compatible_axes(
    projs: Sequence[TensorFactorShardings], rule: OpShardingRule, mesh: Mesh
) -> AxesPerFactor | None:
    """The common axes when the tensors already agree on every factor (case 1), else None."""
    out: AxesPerFactor = []
    seen: list[AxisRef] = []
    for f in range(rule.num_factors):
        common: tuple[AxisRef, ...] | None = None
        for p in projs:
            fs = p.factors.get(f)
            if fs is None:
                continue
            if common is None:
                common = fs.axes
            elif common != fs.axes:
                return None
        axes = common or ()
        if rule.kinds[f] == FactorKind.NEED_REPLICATION:
            if axes:
                return None
            out.append(())
            continue
        if _overlaps(axes, seen, mesh):
            return None
        out.append(axes)
        seen.extend(axes)
    return out


def _non_scalar(rule: OpShardingRule) -> list[int]:
    dims = (*rule.operand_dims, *rule.result_dims)
    return [i for i, t in enumerate(dims) if len(t) > 0]


def _sharding_size(p: TensorFactorShardings, mesh: Mesh) -> int:
    n = 1
    for fs in p.factors.values():
        n *= axes_size(fs.axes, mesh)
    return n


def _unary(
    projs: Sequence[TensorFactorShardings],
    rule: OpShardingRule,
    sizes: Sequence[int],
    mesh: Mesh,
    pair: list[int],
) -> AxesPerFactor:
    def pref(i: int) -> tuple[bool, int, int]:
        p = projs[i]
        permuted = any(
            rule.kinds[f] == FactorKind.PERMUTATION and fs.axes for f, fs in p.factors.items()
        )
        return (not permuted, sizes[i], _sharding_size(p, mesh))

    a, b = pair
    first, other = (a, b) if pref(a) >= pref(b) else (b, a)
    out: AxesPerFactor = [()] * rule.num_factors
    taken: list[AxisRef] = []
    for f, fs in projs[first].factors.items():
        out[f] = fs.axes
        taken.extend(fs.axes)
    for f, fs in projs[other].factors.items():
        if f not in projs[first].factors:
            out[f] = truncate(fs.axes, taken, mesh)
    return out


def truncate(
    axes: tuple[AxisRef, ...], taken: Sequence[AxisRef], mesh: Mesh
) -> tuple[AxisRef, ...]:
    """The longest prefix of `axes` that overlaps nothing in `taken`."""
    out: list[AxisRef] = []
    for a in axes:
        if any(a.overlaps(t, mesh) for t in taken):
            break
        out.append(a)
    return tuple(out)


def _score(
    key: tuple[int, tuple[AxisRef, ...]],
    total: int,
    assigned: AxesPerFactor,
    rule: OpShardingRule,
    mesh: Mesh,
    higher_factor: bool = False,
) -> tuple[int, int, int, int, int]:
    """Shardy's candidate order: source tensor size, factor kind, added sharding, then the
    lower factor (`higher_factor`: the higher one, as Shardy's own tie-break orders them) and
    the longer axes."""
    f, axes = key
    extra = axes_size(axes, mesh) // max(axes_size(assigned[f], mesh), 1)
    return (total, _PRECEDENCE[rule.kinds[f]], extra, f if higher_factor else -f, len(axes))


def _heuristic(
    projs: Sequence[TensorFactorShardings],
    rule: OpShardingRule,
    sizes: Sequence[int],
    mesh: Mesh,
    move: bool = True,
    higher_factor: bool = False,
) -> AxesPerFactor:
    cands: dict[tuple[int, tuple[AxisRef, ...]], int] = {}
    for p in projs:
        for f, fs in p.factors.items():
            for k in range(1, len(fs.axes) + 1):
                cands.setdefault((f, fs.axes[:k]), 0)
    for p, size in zip(projs, sizes, strict=True):
        for f, fs in p.factors.items():
            for k in range(1, len(fs.axes) + 1):
                cands[(f, fs.axes[:k])] += size
    assigned: AxesPerFactor = [()] * rule.num_factors
    live = dict(cands)
    while live:
        best = max(live, key=lambda k: _score(k, live[k], assigned, rule, mesh, higher_factor))
        bf, baxes = best
        assigned[bf] = baxes
        nxt: dict[tuple[int, tuple[AxisRef, ...]], int] = {}
        for (f, axes), total in live.items():
            if f == bf:
                if len(axes) > len(baxes) and axes[: len(baxes)] == baxes:
                    nxt[(f, axes)] = total
                continue
            cut = truncate(axes, baxes, mesh)
            if not cut or cut == assigned[f] or (cut[: len(assigned[f])] != assigned[f]):
                continue
            key = (f, cut)
            nxt[key] = max(nxt.get(key, 0), total)
        live = nxt
    _distribute_need_replication(assigned, rule, mesh, move)
    return assigned


def _batching_factors(rule: OpShardingRule) -> list[int]:
    """Pass-through factors every non-scalar tensor of the op has."""
    tensors = [t for t in (*rule.operand_dims, *rule.result_dims) if t]
    out = []
    for f, kind in enumerate(rule.kinds):
        if kind != FactorKind.PASS_THROUGH:
            continue
        if all(any(f in fl for fl in t) for t in tensors):
            out.append(f)
    return out


def _distribute_need_replication(
    assigned: AxesPerFactor, rule: OpShardingRule, mesh: Mesh, move: bool = True
) -> None:
    """A need-replication factor ends unsharded; when every tensor has it and `move`, its axes
    move to the batching factors that can take them (Shardy: the sort dim's axis moves to a
    batch dim, one all-to-all instead of an all-gather; XLA's partitioner gathers the dim)."""
    tensors = [t for t in (*rule.operand_dims, *rule.result_dims) if t]
    for f, kind in enumerate(rule.kinds):
        if kind != FactorKind.NEED_REPLICATION:
            continue
        axes = list(assigned[f])
        assigned[f] = ()
        if not move or not axes or not all(any(f in fl for fl in t) for t in tensors):
            continue
        for b in _batching_factors(rule):
            size = rule.factor_sizes[b]
            have = axes_size(assigned[b], mesh)
            if size == 0 or size % have:
                continue
            capacity = size // have
            while axes and capacity % axes[0].size(mesh) == 0:
                a = axes.pop(0)
                assigned[b] = (*assigned[b], a)
                capacity //= a.size(mesh)
            if not axes:
                break


def results_first(
    projs: Sequence[TensorFactorShardings],
    rule: OpShardingRule,
    sizes: Sequence[int],
    mesh: Mesh,
) -> AxesPerFactor | None:
    """XLA's choice for a pinned layout: the op's results keep their sharding (GSPMD partitions
    an op at its output sharding and reshards operands to it); the factors no result has are
    settled by the heuristic among the operands, around the axes the results took. None when
    the results disagree among themselves."""
    n = len(rule.operand_dims)
    out: AxesPerFactor = [()] * rule.num_factors
    fixed: set[int] = set()
    for p in projs[n:]:
        for f, fs in p.factors.items():
            if f in fixed and out[f] != fs.axes:
                return None
            out[f] = fs.axes
            fixed.add(f)
    taken = [a for f in fixed for a in out[f]]
    rest = [
        TensorFactorShardings(
            {f: _cut(fs, taken, mesh) for f, fs in p.factors.items() if f not in fixed}
        )
        for p in projs[:n]
    ]
    if any(r.factors for r in rest):
        sub = _heuristic(rest, rule, sizes[:n], mesh, move=False)
        for f in range(rule.num_factors):
            if f not in fixed:
                out[f] = sub[f]
    _distribute_need_replication(out, rule, mesh, move=False)
    return out


def _elementwise(rule: OpShardingRule) -> bool:
    """Every operand and result has the same factors, one per dim, all pass-through."""
    tensors = (*rule.operand_dims, *rule.result_dims)
    if not rule.result_dims or any(k != FactorKind.PASS_THROUGH for k in rule.kinds):
        return False
    first = rule.result_dims[0]
    return all(t == first for t in tensors if t)


def _cut(fs: FactorSharding, taken: Sequence[AxisRef], mesh: Mesh) -> FactorSharding:
    return FactorSharding(axes=truncate(fs.axes, taken, mesh))


def common_axes(
    projs: Sequence[TensorFactorShardings],
    rule: OpShardingRule,
    sizes: Sequence[int],
    mesh: Mesh,
    results_win: bool = False,
    move: bool = True,
    higher_factor: bool = False,
) -> AxesPerFactor:
    """The axes of every factor the op is computed at (see the module docstring).

    `projs` are the operands' then the results' projections, `sizes` their element counts.
    `results_win`: XLA's choice on a pinned layout (`results_first`) instead of Shardy's;
    `move`: a need-replication dim's axes move to a batch dim (else they are gathered);
    `higher_factor`: of two candidates equal in everything else the higher factor wins, as in
    Shardy's `insert-explicit-reshards` (its candidates compare by factor index last)."""
    compatible = compatible_axes(projs, rule, mesh)
    if compatible is not None:
        return compatible
    if results_win and _elementwise(rule):
        chosen = results_first(projs, rule, sizes, mesh)
        if chosen is not None:
            return chosen
    tensors = _non_scalar(rule)
    has_nr = any(k == FactorKind.NEED_REPLICATION for k in rule.kinds)
    compound = any(len(d) > 1 for t in (*rule.operand_dims, *rule.result_dims) for d in t)
    if len(tensors) == 2 and not has_nr and not compound:
        return _unary(projs, rule, sizes, mesh, tensors)
    return _heuristic(projs, rule, sizes, mesh, move=move, higher_factor=higher_factor)


def _axis_names(axes: Sequence[AxisRef]) -> set[str]:
    return {a.name for a in axes}


def xla_contraction(
    common: AxesPerFactor,
    projs: Sequence[TensorFactorShardings],
    rule: OpShardingRule,
    sizes: Sequence[int],
    mesh: Mesh,
) -> AxesPerFactor:
    """Where XLA's dot partitioning departs from a sharded contraction (docs/xla_partitioner.md,
    "dot: contracting dims"). The axes the other dims take (batch and non-contracting dims,
    XLA's device groups) are gathered off the contracting dims first. Then a contracting dim
    is computed sharded (partial results, then an all-reduce) where both operands shard it
    alike, or where one operand shards it over every device the other dims leave free, the
    other operand and the result are whole there, and that operand is bigger than the result
    (XLA's `should_partition_contracting_dim`); otherwise the sharded operand is gathered and
    the contraction computed whole. Freed axes go to the result's own dims when it has them."""
    if (
        len(rule.operand_dims) != 2
        or len(rule.result_dims) != 1
        or not all(rule.operand_dims)
        or len(projs) != 3
    ):
        return common
    # contracting factors only (in both operands): a gather's or a reduce's are not
    in_both = {f for fl in rule.operand_dims[0] for f in fl} & {
        f for fl in rule.operand_dims[1] for f in fl
    }
    reductions = [
        f
        for f, k in enumerate(rule.kinds)
        if k == FactorKind.REDUCTION
        and f in in_both
        and any(f in p.factors and p.factors[f].axes for p in projs[:2])
    ]
    if not reductions:
        return common
    out = list(common)
    group = {
        a.name for f, k in enumerate(rule.kinds) if k != FactorKind.REDUCTION for a in common[f]
    }
    rest = {a.name for a in mesh.axes if a.size > 1} - group
    result = projs[2]
    result_names = {a.name for fs in result.factors.values() for a in fs.axes}
    for f in reductions:
        have = [
            tuple(a for a in projs[i].factors[f].axes if a.name not in group)
            if f in projs[i].factors
            else ()
            for i in (0, 1)
        ]
        chosen: tuple[AxisRef, ...] = ()
        if have[0] and have[0] == have[1]:
            chosen = have[0]  # both operands shard it alike: partial results, an all-reduce
        else:
            holders = [i for i in (0, 1) if have[i]]
            if len(holders) == 1:
                p = holders[0]
                q_names = {a.name for fs in projs[1 - p].factors.values() for a in fs.axes}
                if (
                    _axis_names(have[p]) == rest
                    and not (q_names & rest)
                    and not (result_names & rest)
                    and sizes[p] > sizes[2]
                ):
                    chosen = have[p]
        taken = [a for g in range(rule.num_factors) if g != f for a in out[g]]
        out[f] = chosen if not _overlaps(chosen, taken, mesh) else ()
    taken = [a for g in range(rule.num_factors) for a in out[g]]
    for f, fs in result.factors.items():
        if rule.kinds[f] == FactorKind.REDUCTION or not fs.axes or out[f] == fs.axes:
            continue
        extra = [a for a in fs.axes if a not in out[f]]
        if out[f] == fs.axes[: len(out[f])] and not _overlaps(extra, taken, mesh):
            out[f] = fs.axes
            taken.extend(extra)
    return out
