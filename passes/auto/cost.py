"""The cost model of automatic sharding: pure functions of shapes, shardings and a mesh.

The measure is the communication plan's (plan/cost.py): per collective, the larger of its operand
and result local bytes. A reshard gathers the axes a value loses (all-gather: the larger side is
its result), moves axes between dims at the same local size (all-to-all), and slices the axes it
gains for free; an op whose reduction factor is sharded leaves partial results that an all-reduce
(or a reduce-scatter, the same bytes by this measure) completes. Each collective's bytes may be
weighted by the slowest mesh axis it runs over (`--axis-cost data=4,model=1`). Memory is local
bytes: a tensor's size divided by the product of the axes on its dims (rounded up, as XLA pads).

Reshard bytes are the communication plan's own (`passes.plan.cost.reshard_steps`), so auto
minimizes what `shardc plan` reports; this module adds the axis weights and the per-device
memory terms of the live sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shardc.dialect.errors import ShardcError, bad_value, unknown_axis
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding
from shardc.passes.plan.cost import reshard_steps

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
        raise bad_value(
            "memory budget", text, "a size",
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
            raise unknown_axis(
                name, ", ".join(sorted(known)), sorted(known),
                given=f"axis cost {item!r} in {text!r}", cls=ShardcError,
            )
        out[name] = weight
    return out


def format_bytes(n: float) -> str:
    """`1.5 MiB`-style text for reports."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


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
    """Weighted bytes per device to turn layout `src` of a value into `dst`: the collectives the
    communication plan lists for that reshard (`passes.plan.cost.reshard_steps`: all-slices are
    free, all-to-alls move axes between dims, all-gathers what is left), each weighted by its
    slowest mesh axis."""
    rank = len(shape)
    a, b = _dim_axes(src, rank), _dim_axes(dst, rank)
    if a == b:
        return 0.0
    steps = reshard_steps(shape, elem_bytes, tuple(a), tuple(b), mesh)
    return sum(collective_weight(s.axes, weights) * s.bytes for s in steps)


def partial_reduce_bytes(
    result_local_bytes: int, reduced_axes: Iterable[AxisRef], weights: AxisWeights | None = None
) -> float:
    """Weighted bytes of completing a result left partial over `reduced_axes` (all-reduce)."""
    axes = list(reduced_axes)
    if not axes:
        return 0.0
    return collective_weight(axes, weights) * result_local_bytes
