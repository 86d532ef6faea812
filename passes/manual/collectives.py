"""Decode the collectives of a manual region back to the mesh axes they act over.

StableHLO writes a collective's reach as device ids (`replica_groups`, `source_target_pairs`);
shard_map users think in mesh axes. The partition id of mesh position `(c_0, ..., c_{n-1})` is
`device_ids[sum_i c_i * prod_{j>i} s_j]` (iota when the mesh has no `device_ids`). A collective
over the ordered axis tuple `A` has one group per coordinate of the other axes, and inside a
group the devices in row-major order of `A`. Decoding inverts that exactly: groups that match
no tuple of whole mesh axes are reported as such, never guessed. `axis_index` is not an op but
`partition_id` arithmetic; `eval_partition_arith` evaluates that arithmetic on every device so
the pattern (and the axes it varies over) can be read off exactly.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from shardc.dialect.ir import Operation, Value
from shardc.dialect.op_views import MANUAL_COMPUTATION, SDY_COLLECTIVES, SdyCollective
from shardc.dialect.shardings import Mesh
from shardc.dialect.types import TensorType

from .regions import ManualRegion, axes_text

STABLEHLO_COLLECTIVES = (
    "stablehlo.all_reduce",
    "stablehlo.all_gather",
    "stablehlo.reduce_scatter",
    "stablehlo.all_to_all",
    "stablehlo.collective_permute",
    "stablehlo.collective_broadcast",
)


# ---------------------------------------------------------------------------------------------
# Device geometry


class DeviceGrid:
    """Mesh positions <-> partition ids <-> per-axis coordinates."""

    def __init__(self, mesh: Mesh):
        self.mesh = mesh
        self.names = mesh.axis_names
        self.sizes = tuple(a.size for a in mesh.axes)
        n = mesh.num_devices
        self.ids: tuple[int, ...] = mesh.device_ids or tuple(range(n))
        self.position_of = {d: p for p, d in enumerate(self.ids)}

    @property
    def num_devices(self) -> int:
        return len(self.ids)

    def coords(self, device: int) -> tuple[int, ...]:
        pos = self.position_of[device]
        return tuple(int(c) for c in np.unravel_index(pos, self.sizes)) if self.sizes else ()

    def device(self, coords: dict[str, int]) -> int:
        pos = 0
        for name, size in zip(self.names, self.sizes, strict=True):
            pos = pos * size + coords.get(name, 0)
        return self.ids[pos]

    def groups_for(self, axes: tuple[str, ...]) -> list[list[int]]:
        """The replica groups JAX writes for a collective over the ordered tuple `axes`."""
        rest = [n for n in self.names if n not in axes]
        size = dict(zip(self.names, self.sizes, strict=True))
        groups = []
        for r in itertools.product(*(range(size[n]) for n in rest)):
            base = dict(zip(rest, r, strict=True))
            group = []
            for t in itertools.product(*(range(size[n]) for n in axes)):
                group.append(self.device({**base, **dict(zip(axes, t, strict=True))}))
            groups.append(group)
        return groups

    def linear_index(self, axes: tuple[str, ...]) -> np.ndarray:
        """Per mesh position, the row-major index along `axes` (what `axis_index(axes)` gives)."""
        grid = np.indices(self.sizes).reshape(len(self.sizes), -1) if self.sizes else None
        out = np.zeros(self.num_devices, dtype=np.int64)
        for a in axes:
            i = self.names.index(a)
            out = out * self.sizes[i] + (grid[i] if grid is not None else 0)
        return out

    def varying_axes(self, per_position: np.ndarray) -> tuple[str, ...]:
        """The mesh axes along which a per-position value changes."""
        if not self.sizes:
            return ()
        arr = per_position.reshape(self.sizes + per_position.shape[1:])
        out = []
        for i, name in enumerate(self.names):
            first = np.take(arr, [0], axis=i)
            if not np.array_equal(np.broadcast_to(first, arr.shape), arr):
                out.append(name)
        return tuple(out)


# ---------------------------------------------------------------------------------------------
# Dense integer attributes


_INT = re.compile(r"-?\d+")


def parse_dense_ints(text: str | None) -> np.ndarray | None:
    """`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` (or a splat) as an int array."""
    if text is None:
        return None
    text = str(text).strip()
    m = re.match(r"dense<(.*)>\s*:\s*tensor<((?:\d+x)*)[a-z]+\d*>$", text, re.S)
    if not m:
        return None
    body, dims = m.group(1).strip(), m.group(2)
    shape = tuple(int(d) for d in dims.split("x")[:-1]) if dims else ()
    if body.startswith('"0x'):
        return None  # hex blobs: not emitted for groups in practice
    values = [int(v) for v in _INT.findall(body)]
    if not body.startswith("[") and len(values) == 1:
        return np.full(shape, values[0], dtype=np.int64)
    arr = np.array(values, dtype=np.int64)
    return arr.reshape(shape) if arr.size == int(np.prod(shape)) else None


# ---------------------------------------------------------------------------------------------
# Groups -> axes


_MESH_AXES_GROUPS = re.compile(
    r"#stablehlo\.replica_group_mesh_axes<\s*mesh\s*=\s*@([\w.$-]+)\s*,\s*axes\s*=\s*\[(.*)\]\s*>$"
)
_AXIS_REF = re.compile(r'#stablehlo\.axis_ref<\s*name\s*=\s*"([^"]+)"\s*>')


def parse_mesh_axes_groups(text: object) -> tuple[str, tuple[str, ...] | None] | None:
    """`#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "y">]>`
    -> ("m", ("y",)); `None` for any other form; axes `None` when an axis ref is not a plain
    full axis (sub-axes are reported, not guessed)."""
    if text is None:
        return None
    m = _MESH_AXES_GROUPS.match(str(text).strip())
    if m is None:
        return None
    body = m.group(2).strip()
    refs = _AXIS_REF.findall(body)
    rebuilt = ", ".join(f'#stablehlo.axis_ref<name = "{r}">' for r in refs)
    if rebuilt != body:
        return m.group(1), None
    return m.group(1), tuple(refs)


@dataclass(frozen=True)
class GroupDecoding:
    """The axes a set of groups spans: `axes` in the groups' own order, or `None` + why."""

    axes: tuple[str, ...] | None
    reason: str = ""
    ordered: bool = True  # False: the groups span `axes` but list devices in another order


def decode_groups(groups: list[list[int]], grid: DeviceGrid) -> GroupDecoding:
    """Which ordered tuple of mesh axes generates exactly `groups`."""
    n = grid.num_devices
    if not groups or all(not g for g in groups):  # empty: one group of every device
        return GroupDecoding(grid.names)
    flat = [d for g in groups for d in g]
    if sorted(flat) != list(range(n)) or any(d not in grid.position_of for d in flat):
        return GroupDecoding(
            None, f"the groups do not list each of the mesh's {n} devices exactly once"
        )
    coords = [[grid.coords(d) for d in g] for g in groups]
    varying = {
        grid.names[i]
        for group in coords
        for c in group
        for i in range(len(grid.names))
        if c[i] != group[0][i]
    }
    axes = tuple(a for a in grid.names if a in varying)
    want = 1
    for a in axes:
        want *= grid.mesh.size_of(a)
    if any(len(g) != want for g in groups):
        return GroupDecoding(
            None,
            f"groups vary over {axes_text(axes)} but hold {len(groups[0])} devices, not the "
            f"{want} those axes span (a sub-axis or an irregular grouping)",
        )
    expected = sorted(map(sorted, grid.groups_for(axes)))
    if sorted(map(sorted, groups)) != expected:
        return GroupDecoding(None, f"the groups are not the {len(expected)} groups of {axes_text(axes)}")
    given = sorted(groups)
    for perm in itertools.permutations(axes):
        if sorted(grid.groups_for(perm)) == given:
            return GroupDecoding(perm)
    return GroupDecoding(axes, ordered=False)


@dataclass(frozen=True)
class PermuteDecoding:
    axes: tuple[str, ...] | None
    perm: tuple[tuple[int, int], ...] = ()
    reason: str = ""


def decode_pairs(pairs: list[tuple[int, int]], grid: DeviceGrid) -> PermuteDecoding:
    """`source_target_pairs` -> the axes and the per-group permutation `lax.ppermute` was given."""
    if not pairs:
        return PermuteDecoding((), ())
    if any(s not in grid.position_of or t not in grid.position_of for s, t in pairs):
        return PermuteDecoding(None, reason="a pair names a device outside the mesh")
    moved = set()
    for s, t in pairs:
        cs, ct = grid.coords(s), grid.coords(t)
        moved |= {grid.names[i] for i in range(len(cs)) if cs[i] != ct[i]}
    axes = tuple(a for a in grid.names if a in moved)
    groups = grid.groups_for(axes)
    index = {d: (gi, k) for gi, g in enumerate(groups) for k, d in enumerate(g)}
    per_group: dict[int, list[tuple[int, int]]] = {}
    for s, t in pairs:
        (gs, ks), (gt, kt) = index[s], index[t]
        if gs != gt:
            return PermuteDecoding(None, reason=f"pair [{s}, {t}] crosses groups of {axes_text(axes)}")
        per_group.setdefault(gs, []).append((ks, kt))
    perms = {tuple(sorted(p)) for p in per_group.values()}
    if len(per_group) != len(groups) or len(perms) != 1:
        return PermuteDecoding(
            None, reason=f"the pairs do not apply one permutation in every group of {axes_text(axes)}"
        )
    return PermuteDecoding(axes, tuple(per_group[0]))


# ---------------------------------------------------------------------------------------------
# One collective


@dataclass(frozen=True)
class Collective:
    """A collective op of a manual region, decoded."""

    op: Operation
    kind: str  # all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute, ...
    axes: tuple[str, ...] | None  # None: the groups match no set of mesh axes
    reason: str = ""  # why `axes` is None, or a note (free axis, group order)
    reducer: str | None = None  # add / maximum / minimum / ... for reducing collectives
    perm: tuple[tuple[int, int], ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    location: str | None = None

    @property
    def is_sdy(self) -> bool:
        """An `sdy.*` collective: it acts over free axes, which XLA's partitioner owns."""
        return self.op.name.startswith("sdy.")

    @property
    def group_size(self) -> int:
        return len(self.groups[0]) if self.groups else 1

    @cached_property
    def bytes_per_device(self) -> int:
        """Bytes each device sends, in the ring model (all_reduce ~2(G-1)/G of the buffer)."""
        g = max(self.group_size, 1)
        ins = sum(_bytes(v) for v in self.op.operands)
        outs = sum(_bytes(v) for v in self.op.results)
        if self.kind in ("all_reduce",):
            return 2 * (g - 1) * ins // g
        if self.kind in ("all_gather",):
            return (g - 1) * outs // g
        if self.kind in ("reduce_scatter", "all_to_all"):
            return (g - 1) * ins // g
        if self.kind in ("collective_permute", "collective_broadcast"):
            return ins
        if self.kind == "all_slice":  # each device keeps its own slice: no communication
            return 0
        return ins

    def describe(self) -> str:
        if self.axes is None:
            where = f"over no set of mesh axes ({self.reason})"
        else:
            where = f"over {axes_text(self.axes)}"
        extra = f" [{self.reducer}]" if self.reducer else ""
        return f"{self.op.name}{extra} {where}"


def _bytes(v: Value) -> int:
    return v.type.byte_size() if isinstance(v.type, TensorType) else 0


def reducer_kind(op: Operation) -> str | None:
    """`add`/`maximum`/`minimum`/`multiply`/`and`/`or`: the combiner of a reducing collective."""
    if not op.regions or not op.regions[0].blocks:
        return None
    names = [o.name for o in op.regions[0].entry.ops]
    core = [n for n in names if n not in ("stablehlo.return", "sdy.sharding_constraint")]
    if len(core) == 1 and core[0].startswith("stablehlo."):
        return core[0][len("stablehlo.") :]
    return None


_AXIS = re.compile(r'"([^"]+)"')


def _sdy_axes(op: Operation) -> tuple[str, ...]:
    for key in ("reduction_axes", "gathering_axes", "slicing_axes", "reduce_scatter_axes",
                "params"):
        raw = op.properties.get(key)
        if raw is not None:
            seen: list[str] = []
            for a in _AXIS.findall(str(raw)):
                if a not in seen:
                    seen.append(a)
            return tuple(seen)
    out = SdyCollective(op).out_sharding
    return tuple(dict.fromkeys(a.name for a in out.all_axes())) if out is not None else ()


def decode_collective(op: Operation, region: ManualRegion, grid: DeviceGrid) -> Collective | None:
    """Decode `op` if it is a collective; `None` for any other op."""
    loc = None
    if op.name in SDY_COLLECTIVES:
        # sdy collectives reshard over free (automatic) axes: no manual axis may appear in a
        # sharding inside the body, so they never change what devices along a manual axis hold
        kind = op.name[len("sdy.") :]
        over = tuple(a for a in _sdy_axes(op) if a in grid.names)
        bound = [a for a in over if a in region.scope_axes]
        reason = (f"sdy collective naming the manual axis {axes_text(bound)} bound here"
                  if bound else "sdy collective over free axes")
        sdy_groups = tuple(map(tuple, grid.groups_for(over))) if over else ()
        return Collective(op, kind, over, reason=reason, groups=sdy_groups, location=loc)
    if op.name not in STABLEHLO_COLLECTIVES:
        return None
    kind = op.name[len("stablehlo.") :]
    reducer = reducer_kind(op) if kind in ("all_reduce", "reduce_scatter") else None
    if kind in ("collective_permute",):
        arr = parse_dense_ints(op.attr("source_target_pairs"))
        if arr is None:
            return Collective(op, kind, None, "unreadable source_target_pairs", location=loc)
        pairs = [(int(s), int(t)) for s, t in arr.reshape(-1, 2)]
        dec = decode_pairs(pairs, grid)
        groups = tuple(map(tuple, grid.groups_for(dec.axes))) if dec.axes is not None else ()
        col = Collective(op, kind, dec.axes, dec.reason, perm=dec.perm, groups=groups)
        return _check_scope(col, region)
    raw_groups = op.attr("replica_groups")
    mesh_axes = parse_mesh_axes_groups(raw_groups)
    if mesh_axes is not None:  # jax >= 0.11: `#stablehlo.replica_group_mesh_axes<...>`
        mesh_name, named = mesh_axes
        if named is None:
            return Collective(op, kind, None, f"unreadable replica_groups {raw_groups}", reducer)
        unknown = [a for a in named if a not in grid.names]
        if unknown:
            why = f"replica_groups name axes {unknown} that mesh @{mesh_name} of the region lacks"
            return Collective(op, kind, None, why, reducer)
        groups = tuple(map(tuple, grid.groups_for(named)))
        col = Collective(op, kind, named, "", reducer, groups=groups)
        return _check_scope(col, region)
    arr = parse_dense_ints(raw_groups)
    if arr is None:
        return Collective(op, kind, None, "unreadable replica_groups", reducer)
    members = [list(map(int, g)) for g in arr.reshape(arr.shape[0], -1)] if arr.ndim == 2 else []
    gdec = decode_groups(members, grid)
    reason = gdec.reason
    axes = gdec.axes
    if axes is not None and not gdec.ordered:
        if kind == "all_reduce":
            reason = "devices listed out of axis order (harmless for all_reduce)"
        else:
            reason = (f"the groups span {axes_text(axes)} but list devices in no axis order, so "
                      "the concatenation order matches no shard_map collective")
            axes = None
    if not members:
        members = [list(range(grid.num_devices))]
    col = Collective(op, kind, axes, reason, reducer, groups=tuple(map(tuple, members)))
    return _check_scope(col, region)


def _check_scope(col: Collective, region: ManualRegion) -> Collective:
    """A collective inside a region may only act over manual axes bound there."""
    if col.axes is None:
        return col
    free = [a for a in col.axes if a not in region.scope_axes]
    if free:
        return Collective(
            col.op, col.kind, None,
            f"its groups span {axes_text(col.axes)}, which includes the free (automatic) "
            f"axis {axes_text(free)}",
            col.reducer, col.perm, col.groups,
        )
    return col


def region_collectives(region: ManualRegion) -> list[Collective]:
    """The collectives directly in `region` (not in nested manual regions), in order."""
    grid = DeviceGrid(region.mesh)
    out: list[Collective] = []

    def visit(block_ops: list[Operation]) -> None:
        for op in block_ops:
            col = decode_collective(op, region, grid)
            if col is not None:
                out.append(col)
            if op.name == MANUAL_COMPUTATION:
                continue
            for r in op.regions:
                for b in r.blocks:
                    visit(b.ops)

    visit(region.body.ops)
    return out


# ---------------------------------------------------------------------------------------------
# partition_id arithmetic (axis_index)

_ARITH = {
    "stablehlo.add": np.add,
    "stablehlo.subtract": np.subtract,
    "stablehlo.multiply": np.multiply,
    "stablehlo.maximum": np.maximum,
    "stablehlo.minimum": np.minimum,
    "stablehlo.and": np.bitwise_and,
    "stablehlo.or": np.bitwise_or,
    "stablehlo.xor": np.bitwise_xor,
}
_PASS_THROUGH = ("stablehlo.convert", "stablehlo.reshape", "stablehlo.broadcast_in_dim",
                 "sdy.sharding_constraint")


def _scalar_like(v: Value) -> bool:
    return isinstance(v.type, TensorType) and v.type.num_elements() == 1


def eval_partition_arith(
    op: Operation, known: dict[Value, np.ndarray], grid: DeviceGrid
) -> np.ndarray | None:
    """The per-mesh-position value of `op`'s scalar integer result, if it is partition_id
    arithmetic over values in `known` and constants; `None` otherwise."""
    name = op.name
    if name == "stablehlo.partition_id":
        return np.array(grid.ids, dtype=np.int64)
    if len(op.results) != 1 or not _scalar_like(op.results[0]):
        return None
    if name == "stablehlo.constant":
        arr = parse_dense_ints(op.attr("value"))
        return None if arr is None or arr.size != 1 else np.full(grid.num_devices, int(arr.flat[0]))
    if not op.operands or not any(v in known for v in op.operands):
        return None
    args = []
    for v in op.operands:
        if v in known:
            args.append(known[v])
        else:
            return None
    if name in _PASS_THROUGH:
        return args[0]
    if name in _ARITH and len(args) == 2:
        return _ARITH[name](args[0], args[1])
    if name in ("stablehlo.divide", "stablehlo.remainder") and len(args) == 2:
        a, b = args
        if np.any(b == 0):
            return None
        q = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))  # truncating, as HLO does
        return q if name == "stablehlo.divide" else a - q * b
    return None


def describe_axis_index(per_position: np.ndarray, grid: DeviceGrid) -> str:
    """`axis_index(("x", "y"))` when the value is one, else the axes it varies over."""
    axes = grid.varying_axes(per_position)
    if not axes:
        return f"the constant {int(per_position[0])} on every device"
    for perm in itertools.permutations(axes):
        if np.array_equal(grid.linear_index(perm), per_position):
            inner = f'"{perm[0]}"' if len(perm) == 1 else "(" + ", ".join(f'"{a}"' for a in perm) + ")"
            return f"axis_index({inner})"
    return f"partition_id arithmetic varying over {axes_text(axes)}"
