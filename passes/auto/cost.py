"""The cost model of automatic sharding: pure functions of shapes, shardings and a mesh.

The measure is the communication plan's (design.md): per collective, the larger of its operand
and result local bytes. A reshard gathers the axes a value loses (all-gather: the larger side is
its result), moves axes between dims at the same local size (all-to-all), and slices the axes it
gains for free; an op whose reduction factor is sharded leaves partial results that an all-reduce
(or a reduce-scatter, the same bytes by this measure) completes. Each collective's bytes may be
weighted by the slowest mesh axis it runs over (`--axis-cost data=4,model=1`). Memory is local
bytes: a tensor's size divided by the product of the axes on its dims (rounded up, as XLA pads).

This module is shardc's own copy of the plan's measure, kept separate so the plan pass (issue 11)
can replace it function by function.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shardc.dialect.errors import ShardcError
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding

AxisWeights = Mapping[str, float]

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6,
          "mib": 1 << 20, "g": 1 << 30, "gb": 10**9, "gib": 1 << 30}  # fmt: skip


def parse_size(text: str | int) -> int:
    """`"512MiB"`, `"1.5 GiB"`, `"2e9"` or an int -> bytes."""
    if isinstance(text, int):
        return text
    raw = text.strip()
    num = raw.rstrip("kKmMgGiIbB ")
    unit = raw[len(num) :].strip().lower()
    try:
        value = float(num)
    except ValueError:
        value = -1.0
    if unit not in _UNITS or value < 0:
        raise ShardcError(
            f"memory budget {text!r} is not a size",
            hint="give bytes, or a number with KiB, MiB or GiB (e.g. 64MiB)",
        )
    return int(value * _UNITS[unit])


def parse_axis_costs(text: str, mesh_axes: Iterable[str] | None = None) -> dict[str, float]:
    """`"data=4,model=1"` -> {"data": 4.0, "model": 1.0} (axes not named weigh 1)."""
    out: dict[str, float] = {}
    known = set(mesh_axes) if mesh_axes is not None else None
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip().strip('"')
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not sep or weight < 0:
            raise ShardcError(
                f"axis cost {item!r} in {text!r} is not AXIS=WEIGHT",
                hint="write e.g. data=4,model=1 (a non-negative weight per mesh axis)",
            )
        if known is not None and name not in known:
            raise ShardcError(
                f"axis cost {item!r} names axis {name!r}, which is not a mesh axis "
                f"({', '.join(sorted(known))})",
                hint="name the mesh's own axes",
            )
        out[name] = weight
    return out


def format_bytes(n: float) -> str:
    """`1.5 MiB`-style text for reports."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def axes_product(axes: Iterable[AxisRef], mesh: Mesh) -> int:
    n = 1
    for a in axes:
        n *= a.size(mesh)
    return n


def local_bytes(
    shape: tuple[int, ...], elem_bytes: int, s: TensorSharding | None, mesh: Mesh
) -> int:
    """Per-device bytes of a tensor of `shape` laid out as `s` (None: replicated)."""
    n = elem_bytes
    for i, d in enumerate(shape):
        k = axes_product(s.dims[i].axes, mesh) if s is not None and i < len(s.dims) else 1
        n *= -(-max(d, 0) // k)
    return n


def collective_weight(axes: Iterable[AxisRef], weights: AxisWeights | None) -> float:
    """A collective over `axes` costs as its slowest axis (weight 1 where none is given)."""
    names = {a.name for a in axes}
    if not names:
        return 0.0
    if not weights:
        return 1.0
    return max(weights.get(n, 1.0) for n in names)


def _dim_axes(s: TensorSharding | None, rank: int) -> list[tuple[AxisRef, ...]]:
    if s is None:
        return [()] * rank
    return [s.dims[i].axes if i < len(s.dims) else () for i in range(rank)]


def reshard_bytes(
    shape: tuple[int, ...],
    elem_bytes: int,
    src: TensorSharding | None,
    dst: TensorSharding | None,
    mesh: Mesh,
    weights: AxisWeights | None = None,
) -> float:
    """Weighted bytes per device to turn layout `src` of a value into `dst`.

    Each dim keeps the longest common prefix of its axes; the other source axes are lost. Lost
    axes that `dst` puts on other dims move there by all-to-all (bytes: the source's local size);
    any other loss is an all-gather (bytes: the gathered, larger, local size). Gaining axes is a
    local slice and costs nothing."""
    rank = len(shape)
    a, b = _dim_axes(src, rank), _dim_axes(dst, rank)
    if a == b:
        return 0.0
    kept: list[tuple[AxisRef, ...]] = []
    lost: list[AxisRef] = []
    for sa, da in zip(a, b, strict=True):
        n = 0
        while n < len(sa) and n < len(da) and sa[n] == da[n]:
            n += 1
        kept.append(sa[:n])
        lost.extend(sa[n:])
    if not lost:
        return 0.0
    dst_axes = {x for d in b for x in d}
    w = collective_weight(lost, weights)
    src_local = local_bytes(shape, elem_bytes, src, mesh)
    if all(x in dst_axes for x in lost):
        return w * src_local  # all-to-all: same size in and out
    mid = TensorSharding(mesh, tuple(_dim(k) for k in kept))
    return w * local_bytes(shape, elem_bytes, mid, mesh)


def _dim(axes: tuple[AxisRef, ...]) -> DimSharding:

    return DimSharding(axes)


def partial_reduce_bytes(
    result_local_bytes: int, reduced_axes: Iterable[AxisRef], weights: AxisWeights | None = None
) -> float:
    """Weighted bytes of completing a result left partial over `reduced_axes` (all-reduce)."""
    axes = list(reduced_axes)
    if not axes:
        return 0.0
    return collective_weight(axes, weights) * result_local_bytes
