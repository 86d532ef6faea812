"""The plan's byte model: pure functions on shapes, shardings and meshes (no IR).

This is the cost function the plan uses and that automatic sharding may use too:

* a tensor's per-device shape and bytes under a sharding: `dialect/layout_math.py`.
* `reshard_steps`: the collectives that turn one sharding of a tensor into another, in Shardy's
  order (`sdy-reshard-to-collectives`: all-slice, collective-permute, all-to-all, all-gather),
  each with its bytes.
* `reduction_steps`: the all-reduce (or reduce-scatter, where the next reshard slices the same
  axis) that a sharded reduction factor leaves on an op result.
* `reshard_bytes`: the total of `reshard_steps`, the "cost of resharding v from A to B".

The byte measure of a collective is the one read from XLA's partitioned HLO: the larger of its
operand and result local bytes (times enclosing loop trip counts, applied by the caller). An
all-slice is a local dynamic-slice, not a collective: it moves nothing and costs 0 bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardc.dialect.layout_math import axes_layout, axes_size, dim_axes, sharded_local_bytes
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding, make_axis_ref

from .steps import (
    ALL_GATHER,
    ALL_REDUCE,
    ALL_SLICE,
    ALL_TO_ALL,
    COLLECTIVE_PERMUTE,
    KINDS,
    REDUCE_SCATTER,
    Step,
    local_bytes,
    local_shape,
    merge_axes,
    sort_axes,
)
from .xla_reshard import xla_reshard_steps

__all__ = [
    "ALL_GATHER",
    "ALL_REDUCE",
    "ALL_SLICE",
    "ALL_TO_ALL",
    "COLLECTIVE_PERMUTE",
    "KINDS",
    "REDUCE_SCATTER",
    "Step",
    "local_bytes",
    "local_shape",
    "merge_axes",
    "peak_live",
    "reduction_steps",
    "reshard_bytes",
    "reshard_steps",
    "sort_axes",
]


# ---------------------------------------------------------------------------------------------
# Sub-axis atoms: every axis ref of both shardings split at the union of their boundaries, so
# two atoms are either equal or disjoint (Shardy aligns sub-axes the same way).


def _atoms(refs: list[AxisRef], mesh: Mesh) -> dict[str, list[int]]:
    cuts: dict[str, set[int]] = {}
    for a in refs:
        pre, nxt = a.range(mesh)
        cuts.setdefault(a.name, {1, mesh.size_of(a.name)}).update((pre, nxt))
    return {n: sorted(c) for n, c in cuts.items()}


def _split(a: AxisRef, cuts: dict[str, list[int]], mesh: Mesh) -> list[AxisRef]:
    pre, nxt = a.range(mesh)
    points = [c for c in cuts[a.name] if pre <= c <= nxt]
    return [
        make_axis_ref(a.name, lo, hi // lo, mesh)
        for lo, hi in zip(points, points[1:], strict=False)
    ]


def _common_prefix(a: list[AxisRef], b: list[AxisRef]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def reshard_steps(
    shape: tuple[int, ...],
    elem_bytes: int,
    src: TensorSharding,
    dst: TensorSharding,
    mesh: Mesh,
    style: str = "xla",
) -> list[Step]:
    """The collectives that reshard a tensor from layout `src` to `dst`, in Shardy's order
    (only the dims' axes count: a dim past a sharding's end is whole).

    Per round: all-slice the target axes the tensor does not use yet (free), collective-permute
    when every dim keeps its local size but devices hold other blocks, all-to-all the axes that
    move to another dim, all-gather what is left over; repeat until the shardings match.
    Between block-aligned layouts (`_aligned`) `style="shardy"` slices, permutes and gathers
    as Shardy does; `style="xla"` does so only where nothing is gathered (XLA's partitioner
    gathers a merge of blocks whole and slices it, measured on the differential suite).
    """
    if style == "xla":
        return xla_reshard_steps(shape, elem_bytes, src, dst, mesh)
    rank = len(shape)
    src_axes, dst_axes = dim_axes(src, rank), dim_axes(dst, rank)
    refs = [a for d in (*src_axes, *dst_axes) for a in d]
    if not refs:
        return []
    cuts = _atoms(refs, mesh)
    cur = [[x for a in d for x in _split(a, cuts, mesh)] for d in src_axes]
    tgt = [[x for a in d for x in _split(a, cuts, mesh)] for d in dst_axes]
    aligned = _aligned(shape, elem_bytes, cur, tgt, mesh)
    if aligned is not None and (style == "shardy" or aligned[-1].kind != ALL_GATHER):
        return aligned
    steps = _rounds(shape, elem_bytes, cur, tgt, mesh, False, one_gather=style == "shardy")
    if style == "xla" and any(s.kind == ALL_GATHER for s in steps):
        # XLA slices first only where no gather follows (a partially replicated value made
        # finer, then moved by all-to-all or collective-permute); else it gathers what it
        # must, then slices (it reshards through the replicated layout)
        steps = _rounds(shape, elem_bytes, cur, tgt, mesh, gather_first=True)
    return steps


def _rounds(
    shape: tuple[int, ...],
    elem_bytes: int,
    src_atoms: list[list[AxisRef]],
    tgt: list[list[AxisRef]],
    mesh: Mesh,
    gather_first: bool,
    one_gather: bool = False,
) -> list[Step]:
    """`reshard_steps`' rounds on sub-axis atoms; `gather_first` slices only once nothing is
    left to gather or move; `one_gather` gathers every dim in one all-gather (Shardy's
    reshard-to-collectives), else one per dim (XLA)."""
    rank = len(shape)
    cur = [list(d) for d in src_atoms]
    steps: list[Step] = []

    def emit(
        kind: str,
        axes: list[AxisRef],
        nbytes: int,
        per_dim: list[list[AxisRef]] | None = None,
        move: tuple[int, int] | None = None,
    ) -> None:
        pd = _layout(per_dim, mesh) if per_dim is not None else None
        steps.append(Step(kind, sort_axes(axes, mesh), nbytes, _layout(cur, mesh), pd, move))

    def nbytes() -> int:
        return local_bytes(shape, elem_bytes, tuple(tuple(d) for d in cur), mesh)

    for _ in range(4):
        pre = [_common_prefix(cur[d], tgt[d]) for d in range(rank)]
        ins = [cur[d][pre[d] :] for d in range(rank)]
        outs = [tgt[d][pre[d] :] for d in range(rank)]
        if not any(ins) and not any(outs):
            break
        in_set = {a for d in ins for a in d} | {a for d in cur for a in d}
        # 1. all-slice: target axes the tensor does not use at all, on dims with nothing
        #    misplaced (slicing appends at the minor end of the dim).
        sliced: list[AxisRef] = []
        slice_dims: list[list[AxisRef]] = [[] for _ in range(rank)]
        for d in range(rank):
            if ins[d] or (gather_first and any(ins)):
                continue
            for a in outs[d]:
                if a in in_set:
                    break
                cur[d].append(a)
                sliced.append(a)
                slice_dims[d].append(a)
        if sliced:
            emit(ALL_SLICE, sliced, 0, slice_dims)
            continue
        # 2. collective-permute: the same local shape on every dim, other blocks per device.
        if (
            any(ins)
            and all(axes_size(ins[d], mesh) == axes_size(outs[d], mesh) for d in range(rank))
            and {a for d in ins for a in d} == {a for d in outs for a in d}
        ):
            moved = [a for d in ins for a in d]
            for d in range(rank):
                cur[d] = cur[d][: pre[d]] + outs[d]
            emit(COLLECTIVE_PERMUTE, moved, nbytes())
            continue
        # 3. all-to-all: the longest suffix of a dim's misplaced axes that is what another
        #    dim (with nothing misplaced) wants next.
        moved_any = False
        for d in range(rank):
            for t in range(rank):
                if t == d or not ins[d] or ins[t] or not outs[t]:
                    continue
                k = 0
                for j in range(1, len(ins[d]) + 1):
                    if set(ins[d][-j:]) == set(outs[t][:j]):
                        k = j
                if k == 0:
                    continue
                before = nbytes()
                moving = outs[t][:k]
                cur[d] = cur[d][: len(cur[d]) - k]
                cur[t].extend(moving)
                emit(ALL_TO_ALL, moving, max(before, nbytes()), move=(d, t))
                moved_any = True
                break
            if moved_any:
                break
        if moved_any:
            continue
        # 4. all-gather: every misplaced axis still on a dim, one collective per dim, the
        #    minor dims first (as XLA orders them: the bigger gathers come last).
        if one_gather and sum(1 for d in ins if d) > 1:
            per_dim_all = _layout([list(ins[d]) for d in range(rank)], mesh)
            for d in range(rank):
                cur[d] = cur[d][: pre[d]]
            # (not merged across dims)
            axes = tuple(a for d in per_dim_all.dims for a in d.axes)
            steps.append(Step(ALL_GATHER, axes, nbytes(), _layout(cur, mesh), per_dim_all))
            continue
        for d in reversed(range(rank)):
            if not ins[d]:
                continue
            gathered = ins[d]
            # the gathered blocks keep their padding: an uneven dim comes out rounded up to
            # a multiple of the blocks (XLA slices the padding off after)
            padded = nbytes() * axes_size(gathered, mesh)
            cur[d] = cur[d][: pre[d]]
            per_dim: list[list[AxisRef]] = [[] for _ in range(rank)]
            per_dim[d] = list(gathered)
            emit(ALL_GATHER, gathered, max(padded, nbytes()), per_dim)
    return steps


def _aligned(
    shape: tuple[int, ...],
    elem_bytes: int,
    cur: list[list[AxisRef]],
    tgt: list[list[AxisRef]],
    mesh: Mesh,
) -> list[Step] | None:
    """A reshard between block-aligned layouts that no prefix relation explains: on every dim
    the target splits the source's blocks evenly or merges whole ones (`[{"y"}]` <-> `[{"x"}]`
    on x=4, y=2). Then the tensor is sliced locally down to the finer of the two blocks (free),
    one collective-permute brings every device the fine blocks it needs, and an all-gather
    merges them into the target's coarser blocks (what Shardy's reshard-to-collectives and
    XLA's partitioner both do; the generic path would gather everything first)."""
    if cur == tgt:
        return None
    prefix = all(c == t[: len(c)] or t == c[: len(t)] for c, t in zip(cur, tgt, strict=True))
    if prefix:
        return None  # pure slices and gathers: the generic path
    used = {a for d in cur for a in d}
    for d, size in enumerate(shape):
        n_src, n_tgt = axes_size(cur[d], mesh), axes_size(tgt[d], mesh)
        if (n_tgt % n_src and n_src % n_tgt) or size % max(n_src, n_tgt):
            return None
    steps: list[Step] = []
    rank = len(shape)
    fine: list[list[AxisRef]] = [list(c) for c in cur]
    slice_dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    for d in range(rank):
        need = axes_size(tgt[d], mesh) // axes_size(cur[d], mesh)  # 0 when the dim coarsens
        for a in tgt[d]:
            if need <= 1:
                break
            if a in used or a in cur[d]:
                continue
            size = a.size(mesh)
            if size > need:  # only the major part of it (`"x":(1)2`)
                if size % need:
                    return None
                a = make_axis_ref(a.name, a.pre_size(), need, mesh)
                size = need
            fine[d].append(a)
            slice_dims[d].append(a)
            need //= size
        if need > 1:
            return None
    if any(slice_dims):
        sliced = [a for d in slice_dims for a in d]
        steps.append(
            Step(
                ALL_SLICE,
                sort_axes(sliced, mesh),
                0,
                _layout(fine, mesh),
                _layout(slice_dims, mesh),
            )
        )
    # what the all-gather after the permute merges: the minor part of the fine blocks
    gather_dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    for d in range(rank):
        g = axes_size(fine[d], mesh) // axes_size(tgt[d], mesh)
        for a in reversed([a for a in fine[d] if a not in tgt[d]]):
            if g <= 1:
                break
            size = a.size(mesh)
            if size > g:  # the minor part of it (`"x":(2)2`)
                a = make_axis_ref(a.name, a.pre_size() * (size // g), g, mesh)
                size = g
            gather_dims[d].insert(0, a)
            g //= size
    permuted = [list(t) + gather_dims[d] for d, t in enumerate(tgt)]
    # named by the target axes it delivers (or the source's, when the target's dims are empty)
    moved = [a for c, t in zip(fine, tgt, strict=True) if c != t for a in t]
    moved = moved or [a for c, t in zip(fine, tgt, strict=True) if c != t for a in c]
    steps.append(
        Step(
            COLLECTIVE_PERMUTE,
            sort_axes(list(dict.fromkeys(moved)), mesh),
            local_bytes(shape, elem_bytes, [merge_axes(d, mesh) for d in fine], mesh),
            _layout(permuted, mesh),
        )
    )
    if any(gather_dims):
        after = _layout(tgt, mesh)
        steps.append(
            Step(
                ALL_GATHER,
                sort_axes([a for d in gather_dims for a in d], mesh),
                sharded_local_bytes(shape, elem_bytes, after, mesh),
                after,
                _layout(gather_dims, mesh),
            )
        )
    return steps


def _layout(axes: list[list[AxisRef]], mesh: Mesh) -> TensorSharding:
    """The layout with dim d split over `axes[d]`, consecutive sub-axes merged."""
    return axes_layout(mesh, (merge_axes(d, mesh) for d in axes))


def reshard_bytes(
    shape: tuple[int, ...],
    elem_bytes: int,
    src: TensorSharding,
    dst: TensorSharding,
    mesh: Mesh,
    style: str = "xla",
) -> int:
    """Bytes per device of resharding a tensor from `src` to `dst` (the sum of its collectives)."""
    return sum(s.bytes for s in reshard_steps(shape, elem_bytes, src, dst, mesh, style))


def reduction_steps(
    shape: tuple[int, ...],
    elem_bytes: int,
    computed: TensorSharding,
    reduce_axes: tuple[AxisRef, ...],
    wanted: TensorSharding,
    mesh: Mesh,
    style: str = "xla",
    groups: Sequence[tuple[AxisRef, ...]] = (),
) -> list[Step]:
    """The reduction a result computed at `computed` with partial sums over `reduce_axes` needs,
    then the reshard to `wanted`. `groups` (XLA's style): the reduce axes of each reduced dim,
    one all-reduce each (`AllReduceAlongShardingDims` per dim), each on the whole partial result.

    Where the reshard would all-slice a reduced axis, the pair becomes a reduce-scatter (as XLA
    fuses an all-reduce and a dynamic-slice); the rest of the axes get an all-reduce on the
    scattered (smaller) tensor.
    """
    if not reduce_axes:
        return reshard_steps(shape, elem_bytes, computed, wanted, mesh, style)
    after_reshard = reshard_steps(shape, elem_bytes, computed, wanted, mesh, style)
    if style == "xla":
        # XLA's partitioner all-reduces the whole partial result and then slices it to the
        # result's sharding (docs/xla_partitioner.md, "reductions"): no reduce-scatter
        full = sharded_local_bytes(shape, elem_bytes, computed, mesh)
        per_dim = [g for g in groups if g] or [tuple(reduce_axes)]
        return [
            Step(ALL_REDUCE, sort_axes(list(g), mesh), full, computed) for g in per_dim
        ] + after_reshard
    reduce_names = {a for a in reduce_axes}
    out: list[Step] = []
    scattered: list[AxisRef] = []
    rest: list[Step] = []
    first_slice = after_reshard[0] if after_reshard and after_reshard[0].kind == ALL_SLICE else None
    if first_slice is not None:
        scattered = [a for a in first_slice.axes if _covered(a, reduce_names, mesh)]
    if scattered and first_slice is not None:
        full = sharded_local_bytes(shape, elem_bytes, computed, mesh)
        after = first_slice.after
        out.append(
            Step(REDUCE_SCATTER, sort_axes(scattered, mesh), full, after, first_slice.per_dim)
        )
        remaining = [a for a in reduce_axes if not any(a.overlaps(s, mesh) for s in scattered)]
        unsliced = [a for a in first_slice.axes if a not in scattered]
        if unsliced:
            out.append(Step(ALL_SLICE, sort_axes(unsliced, mesh), 0, after))
        if remaining:
            small = sharded_local_bytes(shape, elem_bytes, after, mesh)
            out.append(Step(ALL_REDUCE, sort_axes(remaining, mesh), small, after))
        rest = after_reshard[1:]
    else:
        full = sharded_local_bytes(shape, elem_bytes, computed, mesh)
        out.append(Step(ALL_REDUCE, sort_axes(list(reduce_axes), mesh), full, computed))
        rest = after_reshard
    return out + rest


def _covered(a: AxisRef, reduce: set[AxisRef], mesh: Mesh) -> bool:
    return any(r.contains(a, mesh) for r in reduce)


def peak_live(intervals: list[tuple[int, int, int]]) -> int:
    """The peak of live bytes: `intervals` are (first point, last point, bytes), inclusive."""
    events: list[tuple[int, int]] = []
    for start, end, nbytes in intervals:
        events.append((start, nbytes))
        events.append((end + 1, -nbytes))
    events.sort(key=lambda e: (e[0], e[1]))
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak
