"""The cost model of automatic sharding: pure functions of shapes, shardings and a mesh.

The measure is the communication plan's (design.md): per collective, the larger of its operand
and result local bytes. Reshard bytes are the plan's own (`passes.plan.cost.reshard_steps`, XLA's
partitioner model) and so are an op's (`graph.op_collectives`: `passes.plan.op_cost.op_steps`),
so that auto minimizes what `shardc plan` reports. Each collective's bytes may be weighted by the
slowest mesh axis it runs over (`--axis-cost data=4,model=1`). Memory is the plan's too
(problem.py builds the memory rows from its buffers): a tensor's local bytes (its size divided
by the product of the axes on its dims, rounded up as XLA pads), and a reshard's temporary is
the plan's buffer of its collectives (`reshard_buffer`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from shardc.dialect.errors import ShardcError, bad_value, unknown_axis
from shardc.dialect.layout_math import dim_axes
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding
from shardc.passes.plan.cost import Step, reshard_steps
from shardc.passes.plan.memory import aligned
from shardc.passes.plan.plan import collective_buffer

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
    if dim_axes(src, rank) == dim_axes(dst, rank):
        return 0.0
    a = src if src is not None else TensorSharding.replicated_of(mesh, rank)
    b = dst if dst is not None else TensorSharding.replicated_of(mesh, rank)
    steps = _steps(shape, elem_bytes, a, b, mesh)
    return sum(collective_weight(s.axes, weights) * s.bytes for s in steps)


def reshard_buffer(
    shape: tuple[int, ...],
    elem_bytes: int,
    src: TensorSharding | None,
    dst: TensorSharding | None,
    mesh: Mesh,
    returned: bool = False,
) -> int:
    """The temporary bytes per device the plan counts for turning layout `src` of a value into
    `dst` (`passes.plan.plan.collective_buffer` of the reshard's collectives, on XLA's 64-byte
    boundary; `returned`: the value is a function result); 0 where nothing moves."""
    rank = len(shape)
    if dim_axes(src, rank) == dim_axes(dst, rank):
        return 0
    a = src if src is not None else TensorSharding.replicated_of(mesh, rank)
    b = dst if dst is not None else TensorSharding.replicated_of(mesh, rank)
    return aligned(collective_buffer(_steps(shape, elem_bytes, a, b, mesh), mesh, returned))


def reshard_steps_of(
    shape: tuple[int, ...],
    elem_bytes: int,
    src: TensorSharding | None,
    dst: TensorSharding | None,
    mesh: Mesh,
) -> tuple[Step, ...]:
    """The plan's collectives of turning layout `src` of a value into `dst` (none where
    nothing moves)."""
    rank = len(shape)
    if dim_axes(src, rank) == dim_axes(dst, rank):
        return ()
    a = src if src is not None else TensorSharding.replicated_of(mesh, rank)
    b = dst if dst is not None else TensorSharding.replicated_of(mesh, rank)
    return _steps(shape, elem_bytes, a, b, mesh)


@functools.lru_cache(maxsize=1 << 16)
def _steps(
    shape: tuple[int, ...], elem_bytes: int, src: TensorSharding, dst: TensorSharding, mesh: Mesh
) -> tuple[Step, ...]:
    """The plan's collectives of a reshard (`reshard_steps`), once per reshard: the edge costs
    and the memory rows of one problem, and repeated layers, ask for the same ones."""
    return tuple(reshard_steps(shape, elem_bytes, src, dst, mesh))
