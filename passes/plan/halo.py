"""Halo exchanges: what XLA's partitioner sends between neighbours to compute a pad, slice,
reverse or reduce_window on a dim that stays sharded (docs/xla_partitioner.md, "halos").

Shardy's model computes such an op at the sharding its operand and result share and moves
nothing. XLA's partitioner (`ReshardAsWindowedInput`, `ExchangeHalo`) gives device k the
output rows [k*B', (k+1)*B') (B' the result's block size) and device k holds the input rows
[k*B, (k+1)*B) (B the operand's); the input rows an output block reads outside the device's
own block are fetched from its neighbours: a left halo of L rows (the most any device needs
from below) in ceil(L / B) collective-permutes of up to B rows each (one per neighbour
distance), and a right halo likewise. A reverse reads the mirror device's whole block: one
collective-permute. Pure: shapes, windows and device counts in, bytes out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shardc.dialect.ir import Operation

# output position -> the input positions it reads (lo, hi inclusive), None: padding only
Source = Callable[[int], tuple[int, int] | None]


def _ints(text: object) -> list[int]:
    """The integers of an `array<i64: ...>` or `dense<...>` attribute."""
    raw = str(text or "")
    m = re.search(r"array<\w+:([^>]*)>", raw) or re.search(r"dense<(.*)>", raw)
    return [int(x) for x in re.findall(r"-?\d+", m.group(1))] if m else []


def source_of(op: Operation, dim: int, in_size: int) -> Source | None:
    """Which input rows of `dim` each output row of a pad, slice, reverse or reduce_window
    reads; None for another op (or a dim it does not move)."""
    name = op.name
    if name == "stablehlo.pad":
        lows = _ints(op.attr("edge_padding_low"))
        inner = _ints(op.attr("interior_padding"))
        if dim >= len(lows):
            return None
        low, step = lows[dim], (inner[dim] if dim < len(inner) else 0) + 1
        if low == 0 and step == 1:
            return None

        def pad_src(j: int) -> tuple[int, int] | None:
            k, r = divmod(j - low, step)
            return (k, k) if r == 0 and 0 <= k < in_size else None

        return pad_src
    if name == "stablehlo.slice":
        starts = _ints(op.attr("start_indices"))
        strides = _ints(op.attr("strides"))
        if dim >= len(starts):
            return None
        start, stride = starts[dim], (strides[dim] if dim < len(strides) else 1)
        if start == 0 and stride == 1:
            return lambda j: (j, j)
        return lambda j: (start + j * stride, start + j * stride)
    if name == "stablehlo.reverse":
        if dim not in _ints(op.attr("dimensions")):
            return None
        return lambda j: (in_size - 1 - j, in_size - 1 - j)
    if name == "stablehlo.reduce_window":
        window = _ints(op.attr("window_dimensions"))
        strides = _ints(op.attr("window_strides"))
        padding = _ints(op.attr("padding"))
        if dim >= len(window):
            return None
        w = window[dim]
        stride = strides[dim] if dim < len(strides) else 1
        low = padding[2 * dim] if 2 * dim < len(padding) else 0
        if w == 1 and stride == 1 and low == 0:
            return None

        def window_src(j: int) -> tuple[int, int] | None:
            lo, hi = max(j * stride - low, 0), min(j * stride - low + w - 1, in_size - 1)
            return (lo, hi) if lo <= hi else None

        return window_src
    return None


def halo_rows(source: Source, in_size: int, out_size: int, devices: int) -> list[int]:
    """The rows of each collective-permute of the halo exchange (see the module docstring)."""
    if devices <= 1 or in_size <= 0 or out_size <= 0:
        return []
    b_in = -(-in_size // devices)
    b_out = -(-out_size // devices)
    left = right = 0
    mirrored = True
    for k in range(devices):
        lo_own, hi_own = k * b_in, min((k + 1) * b_in, in_size) - 1
        reads = [source(j) for j in range(k * b_out, min((k + 1) * b_out, out_size))]
        spans = [r for r in reads if r is not None]
        if not spans:
            continue
        lo, hi = min(r[0] for r in spans), max(r[1] for r in spans)
        if lo < lo_own:
            left = max(left, lo_own - lo)
        if hi > hi_own:
            right = max(right, hi - hi_own)
        mine = lo_own <= lo and hi <= hi_own
        mirror = (devices - 1 - k) * b_in <= lo and hi <= min((devices - k) * b_in, in_size) - 1
        mirrored = mirrored and (mine or mirror)
    if mirrored and (left or right):
        return [b_in]  # a reverse: every device swaps its block with its mirror
    rows = []
    for halo in (left, right):
        while halo > 0:
            rows.append(min(halo, b_in))
            halo -= b_in
    return rows
