"""Layouts XLA is known to partition wrongly when pinned: the op/dim patterns `pin` must not force.

Each entry maps an op name to a function giving the dims of that op's result that the pinned
layout keeps replicated (docs/xla_boundary.md §6, item 3; each pattern has a test in
`tests/test_pin_hazards.py` that compiles and runs it). Such a result is pinned with those dims
closed and empty, so XLA reshards around the op instead of partitioning it along them; its other
dims keep their axes. Data, not control flow: a new pattern is one entry and one test.

Seen on XLA 0.10.2 (CPU SPMD partitioner), and why the fix is a replicated pin, not no pin:

* `stablehlo.pad` with interior padding `i` on a dim and a negative low edge padding that is
  not a multiple of `i + 1` (the padded result starts between two operand elements):
  partitioned along that dim, XLA aborts (`Check failed:
  get_first_valid_element_offset_on_dilated_shard(0) == swd->padding_low()`). A sweep
  (`python -m tests.fuzz.pad_sweep`) compiled pads of f32[8] and f32[16] with low edge in
  -3..3, high edge -1, 0 or 3 (every one in -3..3 on f32[8] over 4 devices) and interior 1 or
  2, the result pinned over 2, 4 and 8 devices along the dim and the operand laid out alike:
  exactly those aborted, and every other one compiled and computed right (a negative high
  edge, or a low edge that drops whole dilated elements, as (-2, 3, 1), partitions). Leaving
  the result unpinned does not help: XLA's own propagation then shards the pad from its
  neighbours' pinned layouts and aborts the same way (jax.jit does on such pads); a pin that
  keeps the dim replicated compiles and computes right.
* `stablehlo.pad` with interior padding on a dim, its result sharded along that dim and its
  operand not (or otherwise): XLA's HLO verifier rejects the partitioned pad (`Expected
  instruction to have shape equal to f32[4,15], actual shape is f32[4,16]`), whatever the edge
  padding, or computes wrong numbers (the sweep above with the operand replicated: every pad
  either aborted, was rejected or computed wrong numbers); the same pad whose operand is
  sharded like its result compiles. It arises after the
  pattern above: a pad made safe there is replicated along the dim, and the next interior pad
  of its result must not be pinned sharded along it, and after a `shard_map` whose out_specs
  replicate the dim (the manual computation's out_sharding fixes its result's layout, and
  XLA's own propagation shards the pad from its readers: jax.jit's program is rejected too,
  so the pin is forced whatever XLA would derive). The operand's layout is what the module
  holds it to for its readers (the constraint that produces it, a manual computation's
  out_sharding, else its own sharding); where it says nothing, the pad is left as it is.
* `stablehlo.dynamic_update_slice` whose update is one row along a dim (size 1 of a larger
  operand dim) at a start that is not a constant: sharded along that dim, XLA writes the row
  into the shard whose range holds the start as given, where the op's semantics clamp it first
  (`start` at most `dim - 1`): with a start past the end, no shard takes the row and the
  result keeps the old values (f32[8, 8] over 4 devices along dim 1, a row at start 9: the
  unsharded op writes column 7, the partitioned one nothing). jax.jit's program has the same
  fault wherever XLA's own layout shards that dim, so the export only keeps its own pins from
  creating it (`XLA_OWN_HAZARDS`): where XLA's own layout keeps the dim whole and shardc's
  shards it, the update is pinned with the dim replicated and its operand constrained alike
  before it (a pin of the result alone left XLA partitioning the op at its operand's layout,
  and the row was lost again); that computes right. An update of two or more rows there is partitioned
  otherwise (the operand gathered whole) and is right. A start plainly in range is safe
  (`value_bounds`: a constant, or a scan's loop counter on its stacked dim); one past the end
  is not (constant 9 there fails the same way), and neither is any start whose range the
  export cannot see.

Not listed, because no pin avoids them: a `dynamic_slice` whose start is clamped (size 8 of
f32[10]) computes wrong numbers once its result is sharded along the sliced dim, also when the
pinned slice result is replicated and only a later op is sharded there, and also under XLA's own
layout of the unpinned module (so Shardy's output fails the same way).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shardc.dialect.data_flow import CALL, WHILE
from shardc.dialect.ir import BlockArgument, Operation, OpResult, Value, callee_name, symbol_name
from shardc.dialect.op_views import FUNC, constrained_sharding
from shardc.dialect.shardings import DimSharding, TensorSharding
from shardc.dialect.types import TensorType

from .plan.trip_count import constant_int, trip_count


def _ints(op: Operation, key: str) -> list[int]:
    raw = op.properties.get(key) if op.properties else None
    if raw is None and op.attributes:
        raw = op.attributes.get(key)
    return [int(x) for x in re.findall(r"-?\d+", str(raw).split(":", 1)[-1])] if raw else []


def pad_negative_edge_with_interior(op: Operation) -> frozenset[int]:
    """Dims of a pad with interior padding and a negative low edge padding that does not drop
    whole dilated elements (not a multiple of interior + 1)."""
    low = _ints(op, "edge_padding_low")
    interior = _ints(op, "interior_padding")
    return frozenset(
        d
        for d, (lo, it) in enumerate(zip(low, interior, strict=False))
        if it > 0 and lo < 0 and lo % (it + 1)
    )


def pad_interior_from_another_layout(op: Operation, sharding: TensorSharding) -> frozenset[int]:
    """Dims of a pad with interior padding that `sharding` shards otherwise than the pad's
    operand is laid out: the layout the module holds the operand to for its readers (a
    constraint's, a manual computation's out_sharding, else its own)."""
    interior = _ints(op, "interior_padding")
    operand = constrained_sharding(op.operands[0], manual_results=True) if op.operands else None
    if operand is None or len(operand.dims) != len(sharding.dims):
        return frozenset()
    return frozenset(
        d
        for d, it in enumerate(interior)
        if it > 0
        and d < len(sharding.dims)
        and sharding.dims[d].axes
        and operand.dims[d].axes != sharding.dims[d].axes
    )


def dus_one_row_at_a_dynamic_start(
    op: Operation, sharding: TensorSharding, sites: CallSites | None = None
) -> frozenset[int]:
    """Dims of a dynamic_update_slice where the update is one row of a larger operand dim and
    the start index is not plainly in range (`value_bounds`; `sites`: the module's calls)."""
    if len(op.operands) < 2:
        return frozenset()
    operand, update = op.operands[0].type, op.operands[1].type
    if not isinstance(operand, TensorType) or not isinstance(update, TensorType):
        return frozenset()
    starts = op.operands[2:]
    return frozenset(
        d
        for d, (size, rows) in enumerate(zip(operand.shape, update.shape, strict=False))
        if rows == 1 < size and d < len(starts) and not _in_range(starts[d], size, sites)
    )


def _in_range(start: Value, size: int, sites: CallSites | None) -> bool:
    """Whether `start` (one row's) is plainly in range on a dim of `size`: no clamping."""
    bounds = value_bounds(start, sites=sites)
    return bounds is not None and 0 <= bounds[0] and bounds[1] < size


class CallSites:
    """The `func.call` ops of a module by callee name, from one walk: where `value_bounds`
    finds a callee argument's values. It holds the call ops, not their operands (read when
    asked), so rewiring a call's operands keeps it exact; a pass that adds, removes or
    retargets calls (a callee copied per call site, copies merged) builds a new one after."""

    def __init__(self, top: Operation) -> None:
        self.top = top
        self.calls: dict[str, list[Operation]] = {}
        for op in top.walk():
            if op.name == CALL:
                self.calls.setdefault(callee_name(op), []).append(op)

    def of(self, func: str) -> list[Operation]:
        """The calls of `func`, in walk order."""
        return self.calls.get(func, [])


# how deep `value_bounds` follows values (calls and wraps nest a few levels in JAX's lowering)
_BOUNDS_DEPTH = 8


def value_bounds(
    v: Value, depth: int = 0, sites: CallSites | None = None
) -> tuple[int, int] | None:
    """Lower and upper bounds of an integer scalar where the module makes them plain: a
    constant, a counted loop's counter (`trip_count`: scan's and fori_loop's), a callee's
    argument (every call's operand), a constant added, and JAX's wrap of a negative index
    (`select(x < 0, x + n, x)`); None otherwise. `sites`: the module's calls (`CallSites`),
    else each callee argument met walks the module for them."""
    if depth > _BOUNDS_DEPTH:
        return None
    c = constant_int(v)
    if c is not None:
        return (c, c)
    if isinstance(v, BlockArgument):
        return _argument_bounds(v, depth, sites)
    if not isinstance(v, OpResult):
        return None
    op = v.owner
    if op.name == "stablehlo.add" and len(op.operands) == 2:
        a, b = (value_bounds(x, depth + 1, sites) for x in op.operands)
        return (a[0] + b[0], a[1] + b[1]) if a is not None and b is not None else None
    if op.name == "stablehlo.select" and len(op.operands) == 3:
        return _select_bounds(op, depth, sites)
    return None


def _argument_bounds(
    v: BlockArgument, depth: int, sites: CallSites | None
) -> tuple[int, int] | None:
    region = v.block.parent
    owner = region.parent if region is not None else None
    if owner is None:
        return None
    if owner.name == WHILE and owner.regions[1] is region:
        return _counter_bounds(owner, v.index)
    if owner.name != FUNC:
        return None
    top = owner.parent_op
    if top is None:
        return None
    if sites is None or sites.top is not top:
        sites = CallSites(top)
    calls = sites.of(symbol_name(owner))
    if not calls:
        return None
    got = [
        value_bounds(c.operands[v.index], depth + 1, sites)
        for c in calls
        if v.index < len(c.operands)
    ]
    if not got or any(g is None for g in got):
        return None
    return (min(g[0] for g in got if g), max(g[1] for g in got if g))


def _counter_bounds(loop: Operation, k: int) -> tuple[int, int] | None:
    """The values carry `k` of a counted loop takes inside its body (its counter)."""
    n = trip_count(loop)
    cond = loop.regions[0].entry
    ret = cond.terminator
    cmp = getattr(ret.operands[0], "owner", None) if ret is not None and ret.operands else None
    counter = cmp.operands[0] if cmp is not None and cmp.operands else None
    if not n or not isinstance(counter, BlockArgument) or counter.index != k:
        return None
    init = constant_int(loop.operands[k])
    return (init, init + n - 1) if init is not None else None


def _select_bounds(
    op: Operation, depth: int, sites: CallSites | None
) -> tuple[int, int] | None:
    """`select(x < 0, x + n, x)`: the wrap of a negative index; other selects, both sides."""
    pred, a, b = op.operands
    cmp = pred.owner if isinstance(pred, OpResult) else None
    if (
        cmp is not None
        and cmp.name == "stablehlo.compare"
        and "LT" in str(cmp.attr("comparison_direction", ""))
        and cmp.operands[0] is b
        and constant_int(cmp.operands[1]) == 0
        and isinstance(a, OpResult)
        and a.owner.name == "stablehlo.add"
        and b in a.owner.operands
    ):
        x = value_bounds(b, depth + 1, sites)
        shifted = value_bounds(a, depth + 1, sites)
        if x is None or shifted is None:
            return None
        lo, hi = x
        shift = shifted[0] - lo  # (a = x + n)
        parts = []
        if lo < 0:
            parts.append((lo + shift, min(hi, -1) + shift))
        if hi >= 0:
            parts.append((max(lo, 0), hi))
        return (min(p[0] for p in parts), max(p[1] for p in parts))
    x, y = value_bounds(a, depth + 1, sites), value_bounds(b, depth + 1, sites)
    return (min(x[0], y[0]), max(x[1], y[1])) if x is not None and y is not None else None


def pad_hazards(
    op: Operation, sharding: TensorSharding, sites: CallSites | None = None
) -> frozenset[int]:
    """Both pad patterns above."""
    return pad_negative_edge_with_interior(op) | pad_interior_from_another_layout(op, sharding)


# hazards XLA's own layout runs into as well (jax.jit's program computes the same numbers):
# the export only keeps its pins from creating one, where XLA's own layout keeps the dims whole
XLA_OWN_HAZARDS = frozenset({"stablehlo.dynamic_update_slice"})

# op name -> (op, the layout asked about, the module's calls or None) -> the dims to keep whole
PIN_HAZARDS: dict[
    str, Callable[[Operation, TensorSharding, CallSites | None], frozenset[int]]
] = {
    "stablehlo.pad": pad_hazards,
    "stablehlo.dynamic_update_slice": dus_one_row_at_a_dynamic_start,
}


def pinnable(
    op: Operation, sharding: TensorSharding, sites: CallSites | None = None
) -> TensorSharding:
    """`sharding` for `op`'s result with the dims XLA mis-partitions made closed and empty.
    `sites`: the module's calls (`CallSites`), where the caller asks about many ops of one
    module; without it, each callee argument a start comes from walks the module."""
    hazard = PIN_HAZARDS.get(op.name)
    if hazard is None:
        return sharding
    dims = hazard(op, sharding, sites)
    if not any(d < len(sharding.dims) and sharding.dims[d].axes for d in dims):
        return sharding
    new = tuple(
        DimSharding((), True) if i in dims else d for i, d in enumerate(sharding.dims)
    )
    return TensorSharding(sharding.mesh, new, sharding.replicated, sharding.unreduced)
