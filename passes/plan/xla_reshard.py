"""XLA's reshards (`PartitionedHlo::ReshardNoCache`), on mesh-axis shardings (pure).

XLA's partitioner moves a value from one sharding to another by trying, in order:

1. a collective-permute, where every dim keeps its number of blocks (and the replication its
   size) and only the devices differ;
2. all-to-alls, where the number of blocks is the same and dims exchange their counts
   (`GetReshardAllToAllSourceTargetDims`), each moving the minor blocks of one dim to another,
   then a collective-permute where the device order still differs;
3. from a partially replicated value to a finer split of it: a local slice (then a
   collective-permute where the devices differ); to a full split whose dims are the source's
   shifted one dim down: all-to-alls, then a local slice (and the reverse: a gather, then
   all-to-alls);
4. to a partially replicated value that a coarser split reaches: a collective-permute where
   the devices differ, then one all-gather per dim;
5. both split over some devices: two dims whose block counts merge or split (by counts,
   `PatternMatchMergeOrSplitSharding`) exchange blocks with one all-to-all (then a
   collective-permute where the devices differ); the dims split alike are kept (devices grouped on them) and
   the rest resharded within the groups; with no such dim, the value is gathered whole (one
   all-gather per dim, the minor dims first) and sliced.

Shardings are handled as atoms of mesh axes (sub-axes split where either sharding needs it,
so that two atoms are equal or disjoint), one tuple per dim, major to minor; the devices a
sharding replicates over are the mesh's atoms it does not use. The byte measure of each
collective is the plan's: the larger of its operand and result local bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardc.dialect.layout_math import axes_layout, axes_size, dim_axes
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding, make_axis_ref

from .steps import (
    ALL_GATHER,
    ALL_SLICE,
    ALL_TO_ALL,
    COLLECTIVE_PERMUTE,
    Step,
    local_bytes,
    local_shape,
    merge_axes,
    sort_axes,
)

Atoms = list[list[AxisRef]]


def xla_reshard_steps(
    shape: tuple[int, ...], elem_bytes: int, src: TensorSharding, dst: TensorSharding, mesh: Mesh
) -> list[Step]:
    """The collectives XLA's partitioner makes to reshard a tensor from layout `src` to `dst`
    (only the dims' axes count: a dim past a sharding's end is whole)."""
    rank = len(shape)
    src_axes, dst_axes = dim_axes(src, rank), dim_axes(dst, rank)
    if all(
        merge_axes(a, mesh) == merge_axes(b, mesh)
        for a, b in zip(src_axes, dst_axes, strict=True)
    ):
        return []
    r = _Resharder(shape, elem_bytes, mesh, [a for d in (*src_axes, *dst_axes) for a in d])
    cur = r.split(src_axes)
    tgt = r.split(dst_axes)
    r.reshard(cur, tgt, frozenset(r.mesh_atoms))
    return r.steps


class _Resharder:
    def __init__(self, shape: tuple[int, ...], elem: int, mesh: Mesh, refs: list[AxisRef]):
        self.shape = shape
        self.elem = elem
        self.mesh = mesh
        # every axis cut at its prime factors: any split a reshard needs is a set of atoms
        self.cuts: dict[str, set[int]] = {a.name: _prime_cuts(a.size) for a in mesh.axes}
        for a in refs:
            pre, nxt = a.range(mesh)
            self.cuts.setdefault(a.name, _prime_cuts(mesh.size_of(a.name))).update((pre, nxt))
        self.steps: list[Step] = []

    @property
    def mesh_atoms(self) -> list[AxisRef]:
        out = []
        for a in self.mesh.axes:
            if a.size > 1:
                out.extend(self._split(AxisRef(a.name)))
        return out

    def _split(self, a: AxisRef) -> list[AxisRef]:
        pre, nxt = a.range(self.mesh)
        points = sorted(c for c in self.cuts[a.name] if pre <= c <= nxt)
        return [
            make_axis_ref(a.name, lo, hi // lo, self.mesh)
            for lo, hi in zip(points, points[1:], strict=False)
        ]

    def split(self, dims: Sequence[Sequence[AxisRef]]) -> Atoms:
        return [[x for a in d for x in self._split(a)] for d in dims]

    # -- sizes -----------------------------------------------------------------------------
    def size(self, atoms: Sequence[AxisRef]) -> int:
        return axes_size(atoms, self.mesh)

    def counts(self, t: Atoms, active: frozenset[AxisRef]) -> list[int]:
        return [self.size([a for a in d if a in active]) for d in t]

    def used(self, t: Atoms, active: frozenset[AxisRef]) -> list[AxisRef]:
        return [a for d in t for a in d if a in active]

    def local(self, t: Atoms) -> int:
        return local_bytes(self.shape, self.elem, t, self.mesh)

    def layout(self, t: Atoms) -> TensorSharding:
        return axes_layout(self.mesh, (merge_axes(d, self.mesh) for d in t))

    def emit(self, kind: str, axes: Sequence[AxisRef], nbytes: int, after: Atoms) -> None:
        self.steps.append(Step(kind, sort_axes(list(dict.fromkeys(axes)), self.mesh), nbytes,
                               self.layout(after)))

    # -- the reshard -----------------------------------------------------------------------
    def reshard(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef]) -> Atoms:
        """Reshard `cur` to `tgt` among the `active` atoms (the others are fixed: a device
        group's), emitting the collectives; returns `tgt`."""
        act = lambda t: [[a for a in d if a in active] for d in t]  # noqa: E731
        if act(cur) == act(tgt):
            return tgt
        n = self.size(sorted(active, key=lambda a: a.sort_key(self.mesh)))
        nc, nt = self.counts(cur, active), self.counts(tgt, active)
        uc, ut = self.used(cur, active), self.used(tgt, active)
        pc, pt = _prod(nc), _prod(nt)
        part_c, part_t = 1 < pc < n, 1 < pt < n
        if uc and ut and nc == nt:
            self.emit(COLLECTIVE_PERMUTE, uc + ut, self.local(cur), tgt)
            return tgt
        if uc and ut and pc == pt and part_c == part_t:
            pairs = _all_to_all_pairs(nc, nt)
            if pairs is not None:
                t = [list(d) for d in cur]
                for j, i in pairs:
                    t = self.all_to_all(t, j, i, active)
                if act(t) != act(tgt):
                    self.emit(COLLECTIVE_PERMUTE, self.used(t, active) + ut, self.local(t), tgt)
                return tgt
        if part_c and ut and all(b % a == 0 for a, b in zip(nc, nt, strict=True)):
            return self.slice_then_permute(cur, tgt, active)
        if part_c and pt == n and self.shifted(cur, tgt, active):
            return self.partial_all_to_all(cur, tgt, active, source_partial=True)
        if uc and part_t and all(a % b == 0 for a, b in zip(nc, nt, strict=True)):
            return self.permute_then_gather(cur, tgt, active)
        if part_t and pc == n and self.shifted(tgt, cur, active):
            return self.partial_all_to_all(cur, tgt, active, source_partial=False)
        if uc and ut:
            done = self.complex(cur, tgt, active, nc, nt, n)
            if done is not None:
                return done
            equal = [d for d in range(len(cur)) if nc[d] == nt[d] and nc[d] > 1]
            if equal:
                # devices grouped on the dims split alike: the rest resharded within groups
                fixed = {a for d in equal for a in cur[d] if a in active}
                inner_tgt = [list(cur[d]) if d in equal else self._avoiding(tgt[d], fixed)
                             for d in range(len(cur))]
                got = self.reshard(cur, inner_tgt, frozenset(active - fixed))
                if act(got) != act(tgt):
                    self.reshard(got, tgt, active)
                return tgt
        if uc:
            cur = self.gather_all(cur, active)
        if ut:
            self.emit(ALL_SLICE, ut, 0, tgt)
        return tgt

    def shifted(self, part: Atoms, tiled: Atoms, active: frozenset[AxisRef]) -> bool:
        """XLA's `ReshardPartialReplicateWithAllToAll` case: the partially replicated `part`
        leaves its first dim whole and the fully split `tiled` splits each dim as `part` splits
        the next one (its last dim as `part` replicates), on the same devices in that order."""
        act = [[a for a in d if a in active] for d in part]
        spare = [a for a in self._order(active) if a not in self.used(part, active)]
        tiled_act = [[a for a in d if a in active] for d in tiled]
        return (
            not act[0]
            and [self.size(d) for d in tiled_act] == [self.size(d) for d in act[1:]]
            + [self.size(spare)]
            and [a for d in tiled_act for a in d] == [a for d in act[1:] for a in d] + spare
        )

    def partial_all_to_all(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef],
                           source_partial: bool) -> Atoms:
        """XLA's `ReshardPartialReplicateWithAllToAll`: from the partially replicated layout,
        all-to-alls shift each dim's blocks one dim down, then the replicated devices split the
        last dim (a local slice); toward it, the last dim is gathered first, then shifted up."""
        inactive = lambda d: [a for a in d if a not in active]  # noqa: E731
        tiled = tgt if source_partial else cur
        last = len(cur) - 1
        mid = [list(d) for d in tiled]
        mid[last] = inactive(mid[last])
        mid = [inactive(cur[d]) + [a for a in mid[d] if a in active] for d in range(len(cur))]
        if not source_partial:
            self.emit(ALL_GATHER, [a for a in cur[last] if a in active], self.local(mid), mid)
        start, end = (cur, mid) if source_partial else (mid, tgt)
        pairs = _all_to_all_pairs(self.counts(start, active), self.counts(end, active)) or []
        t = [list(d) for d in start]
        for j, i in pairs:
            t = self.all_to_all(t, j, i, active)
        if source_partial:
            self.emit(ALL_SLICE, [a for a in tgt[last] if a in active], 0, tgt)
        return tgt

    def complex(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef], nc: list[int],
                nt: list[int], n: int) -> Atoms | None:
        """XLA's `TryComplexReshardHandling` (two of its patterns): toward a partially
        replicated target whose replication a source dim's split completes, that dim is
        gathered first; from a partially replicated source to a target that splits a dim the
        source leaves whole by a multiple of the replication, the replicated devices split
        that dim first (a local slice). The rest is a reshard without full replication."""
        pc, pt = _prod(nc), _prod(nt)
        rep_c, rep_t = n // pc, n // pt
        if pc == pt:
            moved = self.merge_or_split(cur, tgt, active, nc, nt)
            if moved is None:
                moved = self.split_moves(cur, tgt, active)
            if moved is not None:
                return moved
        if 1 < pt < n:
            for i in range(len(cur)):
                if nc[i] > 1 and nc[i] * rep_c == rep_t:
                    t = [list(d) for d in cur]
                    gathered = [a for a in t[i] if a in active]
                    t[i] = [a for a in t[i] if a not in active]
                    self.emit(ALL_GATHER, gathered, self.local(t), t)
                    return self.reshard(t, tgt, active)
        if 1 < pc < n and pt == n:
            for i in range(len(cur)):
                if nt[i] != nc[i] and nc[i] == 1 and nt[i] % rep_c == 0:
                    used = set(self.used(cur, active))
                    spare = [a for a in self._order(active) if a not in used]
                    t = [list(d) for d in cur]
                    t[i] = [a for a in t[i] if a not in active] + spare
                    self.emit(ALL_SLICE, spare, 0, t)
                    self.reshard(t, tgt, active)
                    return tgt
        return None

    def merge_or_split(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef], nc: list[int],
                       nt: list[int]) -> Atoms | None:
        """XLA's `PatternMatchMergeOrSplitSharding`, on block counts: two dims `i`, `j` whose
        counts differ, exactly one of the four counts 1 and the products equal (`[X, Y]` to
        `[X*Y, 1]`, or `[X*Y, 1]` to `[X, Y]`): dim `i` is split in two, the minor blocks one
        dim's way move to the other with one all-to-all over their devices, and where the
        devices that hold each block then differ from the target's, one collective-permute.
        Only the counts are matched: which axes the blocks are on is fixed by the permute."""
        diff = [d for d in range(len(cur)) if nc[d] != nt[d]]
        local = local_shape(self.shape, cur, self.mesh)
        for x, i in enumerate(diff):
            for j in diff[x + 1:]:
                if [nc[i], nc[j], nt[i], nt[j]].count(1) != 1 or nc[i] * nc[j] != nt[i] * nt[j]:
                    continue
                if nc[i] == 1 or nt[i] == 1:
                    i, j = j, i  # i: the dim split on both sides
                own = [a for a in cur[i] if a in active]
                if nt[j] == 1:  # all of j's blocks join i's minor end
                    if local[i] % nc[j]:
                        continue
                    src, dst, moving = j, i, [a for a in cur[j] if a in active]
                else:  # i's minor blocks, beyond the target's count, go to j
                    if self.shape[i] % nc[i]:
                        continue
                    keep = self._prefix(own, nt[i])
                    if keep is None:
                        continue
                    src, dst, moving = i, j, own[len(keep):]
                out = [list(d) for d in cur]
                out[src] = [a for a in cur[src] if a not in moving]
                out[dst] = list(cur[dst]) + moving
                self.emit(ALL_TO_ALL, moving, max(self.local(cur), self.local(out)), out)
                act = lambda t: [[a for a in d if a in active] for d in t]  # noqa: E731
                if act(out) != act(tgt):
                    self.emit(COLLECTIVE_PERMUTE, self.used(out, active), self.local(out), tgt)
                return tgt
        return None

    def _prefix(self, atoms: list[AxisRef], size: int) -> list[AxisRef] | None:
        """The major atoms of `atoms` making up `size` devices, or None where none do."""
        out: list[AxisRef] = []
        for a in atoms:
            if self.size(out) == size:
                break
            out.append(a)
        return out if self.size(out) == size else None

    def split_moves(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef]) -> Atoms | None:
        """XLA's `PatternMatchMergeOrSplitSharding`: the minor atoms of one dim that are what
        another dim lacks at its minor end move there with an all-to-all (the dim's split
        split in two first), as often as that reaches the target; None where it does not."""
        act = lambda t: [[a for a in d if a in active] for d in t]  # noqa: E731
        key = lambda d: sorted(a.sort_key(self.mesh) for a in d)  # noqa: E731
        # the devices of a dim as a set: blocks in another order are a collective-permute
        same = lambda x, y: [key(d) for d in x] == [key(d) for d in y]  # noqa: E731
        t = [list(d) for d in cur]
        plan: list[tuple[int, int, int]] = []
        for _ in range(len(t)):
            a_t, a_g = act(t), act(tgt)
            if same(a_t, a_g):
                break
            found = None
            for j in range(len(t)):
                for i in range(len(t)):
                    if i == j:
                        continue
                    for k in range(1, len(a_t[j]) + 1):
                        suffix = a_t[j][-k:]
                        if a_t[j][:-k] == a_g[j] and key(a_g[i]) == key(a_t[i] + suffix):
                            found = (j, i, k)
                            break
                    if found:
                        break
                if found:
                    break
            if found is None:
                return None
            j, i, k = found
            plan.append(found)
            moving = a_t[j][-k:]
            t[j] = [a for a in t[j] if a not in moving]
            t[i] = t[i] + moving
        if not plan or not same(act(t), act(tgt)):
            return None
        t = [list(d) for d in cur]
        for j, i, k in plan:
            moving = [a for a in t[j] if a in active][-k:]
            out = [list(d) for d in t]
            out[j] = [a for a in t[j] if a not in moving]
            out[i] = t[i] + moving
            self.emit(ALL_TO_ALL, moving, max(self.local(t), self.local(out)), out)
            t = out
        if act(t) != act(tgt):  # the moved blocks are on the target's dims, other devices
            self.emit(COLLECTIVE_PERMUTE, self.used(t, active), self.local(t), tgt)
        return tgt

    def _avoiding(self, d: list[AxisRef], fixed: set[AxisRef]) -> list[AxisRef]:
        return [a for a in d if a not in fixed]

    def all_to_all(self, t: Atoms, j: int, i: int, active: frozenset[AxisRef]) -> Atoms:
        """XLA's `GetAllToAllSharding` for one pair: dim `j` keeps the major blocks of its
        split that dim `i` had, its minor blocks move to the minor end of dim `i`."""
        cj = self.size([a for a in t[j] if a in active])
        ci = self.size([a for a in t[i] if a in active])
        moving_size = cj // max(ci, 1)
        own = [a for a in t[j] if a in active]
        moved: list[AxisRef] = []
        while own and self.size(moved) < moving_size:
            a = own.pop()
            if self.size(moved) * a.size(self.mesh) > moving_size:
                own.append(a)
                break
            moved.insert(0, a)
        out = [list(d) for d in t]
        out[j] = [a for a in t[j] if a not in active] + own
        out[i] = list(t[i]) + moved
        self.emit(ALL_TO_ALL, moved, max(self.local(t), self.local(out)), out)
        return out

    def slice_then_permute(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef]) -> Atoms:
        """A partially replicated value made finer: a local slice to the target's counts with
        the source's blocks kept major, then a collective-permute where devices differ."""
        used = set(self.used(cur, active))
        spare = [a for a in self._order(active) if a not in used]
        temp: Atoms = []
        for d in range(len(cur)):
            have = [a for a in cur[d] if a in active]
            want = [a for a in tgt[d] if a in active]
            if want[: len(have)] == have and all(a in spare for a in want[len(have):]):
                extra = want[len(have):]
            else:
                extra = self.take(spare, self.size(want) // max(self.size(have), 1))
            for a in extra:
                if a in spare:
                    spare.remove(a)
            temp.append([a for a in cur[d] if a not in active] + have + extra)
        self.emit(ALL_SLICE, [a for d in temp for a in d if a in active and a not in used], 0, temp)
        if [[a for a in d if a in active] for d in temp] != [[a for a in d if a in active] for d in tgt]:
            self.emit(COLLECTIVE_PERMUTE, self.used(tgt, active), self.local(tgt), tgt)
        return tgt

    def permute_then_gather(self, cur: Atoms, tgt: Atoms, active: frozenset[AxisRef]) -> Atoms:
        """To a partially replicated target a coarser split reaches: a collective-permute to
        the target's blocks (major) and the rest of each dim's split (minor) where the devices
        differ, then one all-gather per dim of the rest."""
        temp: Atoms = []
        extras: list[list[AxisRef]] = []
        tused = set(self.used(tgt, active))
        pool = [a for a in self.used(cur, active) if a not in tused]
        for d in range(len(cur)):
            have = [a for a in cur[d] if a in active]
            want = [a for a in tgt[d] if a in active]
            if have[: len(want)] == want:
                extra = have[len(want):]
                for a in extra:
                    if a in pool:
                        pool.remove(a)
                extras.append(extra)
            else:
                extras.append([])  # filled below from what is left
            temp.append(list(want))
        for d in range(len(cur)):
            have = [a for a in cur[d] if a in active]
            want = [a for a in tgt[d] if a in active]
            if have[: len(want)] != want:
                extras[d] = self.take(pool, self.size(have) // max(self.size(want), 1))
                for a in extras[d]:
                    if a in pool:
                        pool.remove(a)
        temp = [[a for a in cur[d] if a not in active] + temp[d] + extras[d] for d in range(len(cur))]
        act = lambda t: [[a for a in d if a in active] for d in t]  # noqa: E731
        if act(temp) != act(cur):
            self.emit(COLLECTIVE_PERMUTE, self.used(cur, active) + self.used(temp, active),
                      self.local(cur), temp)
        t = [list(d) for d in temp]
        for d in reversed(range(len(cur))):
            if not extras[d]:
                continue
            t[d] = [a for a in t[d] if a not in extras[d]]
            self.emit(ALL_GATHER, extras[d], self.local(t), t)
        return tgt

    def gather_all(self, cur: Atoms, active: frozenset[AxisRef]) -> Atoms:
        """Every active split gathered, one all-gather per dim, the minor dims first (the
        gathered blocks keep an uneven dim's padding)."""
        t = [list(d) for d in cur]
        for d in reversed(range(len(t))):
            gathered = [a for a in t[d] if a in active]
            if not gathered:
                continue
            padded = self.local(t) * self.size(gathered)
            t[d] = [a for a in t[d] if a not in active]
            self.emit(ALL_GATHER, gathered, max(padded, self.local(t)), t)
        return t

    def take(self, pool: list[AxisRef], size: int) -> list[AxisRef]:
        """Atoms of `pool` making up `size` devices, in pool order."""
        out: list[AxisRef] = []
        for a in list(pool):
            if self.size(out) >= size:
                break
            need = size // self.size(out)
            if need % a.size(self.mesh) == 0:
                out.append(a)
        return out

    def _order(self, active: frozenset[AxisRef]) -> list[AxisRef]:
        return sorted(active, key=lambda a: a.sort_key(self.mesh))


def _prime_cuts(size: int) -> set[int]:
    """1, `size` and every product of its smallest prime factors in between."""
    cuts, n, p = {1, size}, size, 2
    acc = 1
    while n > 1 and p * p <= n:
        while n % p == 0:
            acc *= p
            n //= p
            cuts.add(acc)
        p += 1
    return cuts


def _prod(xs: Sequence[int]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _all_to_all_pairs(src: list[int], tgt: list[int]) -> list[tuple[int, int]] | None:
    """XLA's `GetReshardAllToAllSourceTargetDims` on per-dim block counts: the (source dim,
    target dim) pairs whose swaps turn `src` into `tgt`, or None."""
    s_map: dict[int, list[int]] = {}
    t_map: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(zip(src, tgt, strict=True)):
        if a == b:
            continue
        s_map.setdefault(a, []).append(i)
        t_map.setdefault(b, []).append(i)
    if not s_map or len(s_map) != len(t_map):
        return None
    for size, dims in s_map.items():
        if size not in t_map or len(t_map[size]) != len(dims):
            return None

    def remove(size: int, dim: int, m: dict[int, list[int]]) -> None:
        m[size] = [d for d in m.get(size, []) if d != dim]
        if not m[size]:
            m.pop(size, None)

    out: list[tuple[int, int]] = []
    guard = 0
    while s_map:
        guard += 1
        if guard > 64:
            return None
        size = min(s_map)
        i = s_map[size][-1]
        ti = tgt[i]
        if ti == size:
            remove(size, i, s_map)
            remove(size, i, t_map)
            continue
        cands = s_map.get(ti)
        if not cands:
            return None
        j = cands[0]
        if size == 1:
            for c in cands:
                j = c
                if tgt[c] != 1:
                    break
        elif ti % size == 0:
            for c in cands:
                j = c
                if tgt[c] == size:
                    break
        else:
            return None
        out.append((j, i))
        remove(ti, i, t_map)
        s_map[size][-1] = j
        remove(ti, j, s_map)
    return out
