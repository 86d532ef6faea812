"""Dim shardings <-> per-factor axis lists (docs/propagation.md §2); pure, no IR.

Projection is where sub-axes are born: a factor smaller than the axis on its dim takes the gcd
part of it (`"x":(1)2`), and what cannot be expressed goes to the factor's overflow list.
Back-projection stops at the first factor that is not fully sharded, because appending the axes of
later factors would describe a strided layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd

from shardc.dialect.layout_math import axes_size
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding, make_axis_ref

AxisList = tuple[AxisRef, ...]


@dataclass(slots=True)
class FactorSharding:
    """The axes of one tensor along one factor (major to minor)."""

    axes: AxisList = ()
    closed: bool = False
    minor_most: bool = False
    overflow: AxisList = ()


@dataclass(slots=True)
class TensorFactorShardings:
    """One tensor projected on an op's factors; a factor absent from `factors` is not in it."""

    factors: dict[int, FactorSharding] = field(default_factory=dict)
    replicated: AxisList = ()
    unreduced: AxisList = ()


def append_axis(axes: list[AxisRef], a: AxisRef, mesh: Mesh) -> None:
    """Append `a`, merging it with the last axis when they are consecutive sub-axes."""
    if axes and axes[-1].can_merge(a, mesh):
        axes[-1] = axes[-1].merge(a, mesh)
    else:
        axes.append(a)


def _split(a: AxisRef, g: int, mesh: Mesh) -> tuple[AxisRef, AxisRef]:
    """The major `g` part of `a` and the rest."""
    pre, size = a.pre_size(), a.size(mesh)
    return make_axis_ref(a.name, pre, g, mesh), make_axis_ref(a.name, pre * g, size // g, mesh)


_OPEN_DIM = DimSharding((), is_closed=False)


def project(
    sharding: TensorSharding | None,
    dim_factors: tuple[tuple[int, ...], ...],
    factor_sizes: tuple[int, ...],
    mesh: Mesh,
) -> TensorFactorShardings:
    """Project a tensor sharding (None = fully open) onto the factors of its dims."""
    factors: dict[int, FactorSharding] = {}
    if sharding is None:
        for flist in dim_factors:
            if flist:
                last = flist[-1]
                for f in flist:
                    factors[f] = FactorSharding((), False, f == last)
        return TensorFactorShardings(factors)
    dims = sharding.dims
    n = len(dims)
    for d, flist in enumerate(dim_factors):
        if not flist:
            continue
        dim = dims[d] if d < n else _OPEN_DIM
        axes = dim.axes
        if not axes:  # (most dims: every factor of it empty, none overflows)
            closed = dim.is_closed
            last = flist[-1]
            for f in flist:
                factors[f] = FactorSharding((), closed, f == last)
        elif len(flist) == 1 and len(axes) == 1:  # (one factor takes the dim's one axis)
            factors[flist[0]] = FactorSharding(axes, dim.is_closed, True)
        else:
            _project_dim(dim, flist, factor_sizes, mesh, factors)
    return TensorFactorShardings(factors, sharding.replicated, sharding.unreduced)


def _project_dim(
    dim: DimSharding,
    flist: tuple[int, ...],
    factor_sizes: tuple[int, ...],
    mesh: Mesh,
    factors: dict[int, FactorSharding],
) -> None:
    """The factors of one dim with axes: each takes the major part its size divides, the
    minor-most the rest; what a factor cannot take overflows and closes the factors after it."""
    remaining = list(dim.axes)
    pos = 0
    cur: AxisRef | None = remaining[0] if remaining else None
    overflow_seen = False
    last = flist[-1]
    for f in flist:
        fs = FactorSharding(minor_most=(f == last))
        factors[f] = fs
        if overflow_seen:
            fs.closed = True
            break
        fs.closed = dim.is_closed
        if fs.minor_most:
            acc: list[AxisRef] = []
            if cur is not None:
                acc.append(cur)
                for a in remaining[pos + 1 :]:
                    append_axis(acc, a, mesh)
            fs.axes = tuple(acc)
            break
        r = factor_sizes[f]
        acc = []
        while cur is not None:
            size = cur.size(mesh)
            g = gcd(r, size)
            if g <= 1 and size > 1:
                break  # (an axis of size 1 divides any factor: the factor takes it)
            if size > g:
                major, cur = _split(cur, g, mesh)
                acc.append(major)
                r //= g
            else:
                acc.append(cur)
                r //= size
                pos += 1
                cur = remaining[pos] if pos < len(remaining) else None
        fs.axes = tuple(acc)
        if r > 1 and cur is not None:
            over = [cur]
            for a in remaining[pos + 1 :]:
                append_axis(over, a, mesh)
            fs.overflow = tuple(over)
            overflow_seen = True


def back_project(
    proj: TensorFactorShardings,
    old: TensorSharding | None,
    dim_factors: tuple[tuple[int, ...], ...],
    factor_sizes: tuple[int, ...],
    mesh: Mesh,
    mesh_ref: str | Mesh,
) -> TensorSharding:
    """The tensor sharding described by `proj`; dims without factors keep their old sharding."""
    dims: list[DimSharding] = []
    for d, flist in enumerate(dim_factors):
        if not flist:
            if old is not None and d < len(old.dims):
                od = old.dims[d]
                dims.append(DimSharding(od.axes, od.is_closed))
            else:
                dims.append(DimSharding((), is_closed=False))
            continue
        axes: list[AxisRef] = []
        closed = False
        for f in flist:
            fs = proj.factors.get(f)
            if fs is None:
                break
            closed |= fs.closed
            for a in fs.axes:
                append_axis(axes, a, mesh)
            if fs.overflow:
                for a in fs.overflow:
                    append_axis(axes, a, mesh)
                break
            if axes_size(fs.axes, mesh) < factor_sizes[f]:
                break
        dims.append(DimSharding(tuple(axes), closed))
    return TensorSharding(mesh_ref, tuple(dims), proj.replicated, proj.unreduced)


def is_strict_prefix(old: AxisList, new: AxisList, mesh: Mesh) -> bool:
    """`old` is a strict prefix of `new` (its last axis may be a sub-axis prefix of new's)."""
    if not new or old == new:
        return False
    if not old:
        return True
    n = len(old)
    if n > len(new):
        return False
    if old[: n - 1] != new[: n - 1]:
        return False
    last, other = old[n - 1], new[n - 1]
    if last == other:
        return n < len(new)
    return last.prefix_of(other, mesh)
