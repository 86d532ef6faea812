"""Remove collectives that act on device-invariant values (a psum of a replicated value).

If the operand of a collective is the same on every device of each of its groups (the `VALUE`
view of `variance.py` proves it), the communication is unnecessary:

* all_reduce: sum -> a local multiply by the group size; max/min/and/or -> the operand itself;
* all_gather: -> a local concatenate of group-size copies;
* reduce_scatter (sum/max/min): -> a local dynamic_slice at this device's offset in its group
  (a constant table indexed by partition_id), times the group size for a sum;
* all_to_all: -> this device's slice of the split dim, concatenated group-size times;
* collective_permute where every device of a group receives: -> the operand itself.

Offsets come from `partition_id`, which is only meaningful where every mesh axis is manual, so
in a partially manual region they are computed inside a nested all-manual
`sdy.manual_computation`, as JAX does for `axis_index`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from shardc.dialect.ir import AttrDict, Block, Module, Operation, Region, Value
from shardc.dialect.shardings import ManualAxes, ShardingPerValue, TensorSharding
from shardc.dialect.types import TensorType

from ..context import NONE, PassContext
from .collectives import Collective
from .regions import MANUAL_OP, ManualRegion, axes_text
from .variance import View, analyze_variance


@dataclass
class Report:
    """What `remove_redundant_collectives` did, one entry per rewritten or kept collective."""

    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [*self.removed, *self.kept]

    def __str__(self) -> str:
        return "\n".join(self.lines()) or "no collectives"

    def __len__(self) -> int:
        return len(self.removed)


@dataclass(frozen=True)
class RemoveRedundantCollectives:
    """The pass object; no options. Its `Report` (what it removed and kept) is the run's result."""

    name: ClassVar[str] = "remove-redundant-collectives"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        ctx.put(remove_redundant_collectives(module))




def remove_redundant_collectives(module: Module) -> Report:
    """Rewrite every collective whose operand is invariant along the collective's axes."""
    if next(module.ops_named(MANUAL_OP), None) is None:
        # (only a manual region's collectives are rewritten: a scan of op names is cheaper
        # than the variance analysis's walk on a module that has none, a jitted step's export)
        return Report()
    analysis = analyze_variance(module, View.VALUE)
    region_of_op: dict[Operation, ManualRegion] = {}
    for region in analysis.regions:
        for op in _ops_of(region.body):
            region_of_op[op] = region
    plans = []
    for op, col in analysis.collectives.items():
        owner = region_of_op.get(op)
        if owner is None or col.axes is None or not col.axes or col.is_sdy:
            continue  # sdy collectives act over free axes: XLA's partitioner owns those
        region = owner
        operand_var = set().union(*(analysis.of(v) for v in op.operands)) if op.operands else set()
        if operand_var & set(col.axes):
            continue
        plans.append((col, region))
    report = Report()
    for col, region in plans:
        where = f" at {col.location}" if col.location else ""
        what = f"{col.describe()}{where}"
        done = _rewrite(col, region)
        if done:
            report.removed.append(
                f"removed {what}: its operand is invariant along {axes_text(col.axes or ())}; "
                f"now {done}"
            )
        else:
            report.kept.append(f"kept {what}: operand invariant but no local rewrite for it")
    return report


def _ops_of(block: Block) -> list[Operation]:
    """Ops of a region body, through control flow but not into nested manual regions."""
    out = []
    for op in block.ops:
        out.append(op)
        if op.name == MANUAL_OP:
            continue
        for r in op.regions:
            for b in r.blocks:
                out.extend(_ops_of(b))
    return out


# ---------------------------------------------------------------------------------------------
# Building ops


class _Builder:
    """Inserts new generic-form ops before a given op."""

    def __init__(self, before: Operation):
        self.block = before.parent
        self.anchor = before
        self.loc = before.loc

    def add(self, name: str, operands: list[Value], types: list, props: dict | None = None,
            regions: list[Region] | None = None) -> Operation:
        op = Operation(name, operands, types, AttrDict(items=dict(props or {})), regions=regions,
                       loc=self.loc)
        return self.insert(op)

    def insert(self, op: Operation) -> Operation:
        assert self.block is not None
        op.loc = op.loc or self.loc
        self.block.insert(self.block.ops.index(self.anchor), op)
        return op


def _splat(value: int, t: TensorType) -> str | None:
    et = t.element_type
    if et.startswith(("f", "bf")):
        lit = f"{float(value):e}"
    elif et.startswith(("i", "ui", "si")) and et != "i1":
        lit = str(value)
    else:
        return None
    return f"dense<{lit}> : {t}"


def _scaled(b: _Builder, x: Value, factor: int) -> Value | None:
    if factor == 1:
        return x
    t = x.type
    if not isinstance(t, TensorType):
        return None
    text = _splat(factor, t)
    if text is None:
        return None
    c = b.add("stablehlo.constant", [], [t], {"value": text})
    return b.add("stablehlo.multiply", [x, c.results[0]], [t]).results[0]


def _offset_index(b: _Builder, col: Collective, region: ManualRegion, chunk: int) -> Value:
    """A scalar i32: `chunk` times this device's position in its group."""
    n = region.mesh.num_devices
    table = [0] * n
    for g in col.groups:
        for k, d in enumerate(g):
            table[d] = k * chunk
    i32 = TensorType((), "i32")
    free = region.free_axes
    if free:
        inner = Block()
        ops = _table_lookup(table)
        for op in ops:
            op.loc = b.loc
            inner.append(op)
        inner.append(Operation("sdy.return", [ops[-1].results[0]], [], loc=b.loc))
        mesh = region.mesh_name if region.mesh_name is not None else region.mesh
        props = {
            "in_shardings": ShardingPerValue(()),
            "manual_axes": ManualAxes(tuple(free)),
            "out_shardings": ShardingPerValue((TensorSharding(mesh, ()),)),
        }
        wrapper = b.add(MANUAL_OP, [], [i32], props, regions=[Region([inner])])
        return wrapper.results[0]
    ops = _table_lookup(table)
    for op in ops:
        b.insert(op)
    return ops[-1].results[0]


def _table_lookup(table: list[int]) -> list[Operation]:
    """partition_id -> table[partition_id] as a scalar i32 (a chain of detached ops)."""
    n = len(table)
    i32, u32 = TensorType((), "i32"), TensorType((), "ui32")
    vec, one = TensorType((n,), "i32"), TensorType((1,), "i32")
    const = Operation("stablehlo.constant", [], [vec],
                      AttrDict(items={"value": f"dense<[{', '.join(map(str, table))}]> : {vec}"}))
    pid = Operation("stablehlo.partition_id", [], [u32])
    idx = Operation("stablehlo.convert", [pid.results[0]], [i32])
    sl = Operation("stablehlo.dynamic_slice", [const.results[0], idx.results[0]], [one],
                   AttrDict(items={"slice_sizes": "array<i64: 1>"}))
    sc = Operation("stablehlo.reshape", [sl.results[0]], [i32])
    return [const, pid, idx, sl, sc]


def _zero_index(b: _Builder) -> Value:
    i32 = TensorType((), "i32")
    return b.add("stablehlo.constant", [], [i32], {"value": "dense<0> : tensor<i32>"}).results[0]


def _local_slice(b: _Builder, col: Collective, region: ManualRegion, x: Value, dim: int) -> Value:
    t = x.type
    assert isinstance(t, TensorType)
    g = col.group_size
    chunk = t.shape[dim] // g
    off = _offset_index(b, col, region, chunk)
    zero = _zero_index(b)
    idx = [off if d == dim else zero for d in range(t.rank)]
    sizes = [chunk if d == dim else s for d, s in enumerate(t.shape)]
    out_t = t.with_shape(tuple(sizes))
    props = {"slice_sizes": "array<i64: " + ", ".join(map(str, sizes)) + ">"}
    return b.add("stablehlo.dynamic_slice", [x, *idx], [out_t], props).results[0]


def _int_attr(op: Operation, key: str) -> int | None:
    raw = op.attr(key)
    if raw is None:
        return None
    try:
        return int(str(raw).split(":")[0].strip())
    except ValueError:
        return None


def _rewrite(col: Collective, region: ManualRegion) -> str | None:
    """Replace `col.op` by local ops; a phrase saying what it became, or None if kept."""
    op = col.op
    if len(op.operands) != 1 or len(op.results) != 1:
        return None
    x, r = op.operands[0], op.results[0]
    if not isinstance(x.type, TensorType) or not isinstance(r.type, TensorType):
        return None
    g = col.group_size
    b = _Builder(op)
    new: Value | None = None
    phrase = ""
    if col.kind == "all_reduce":
        if col.reducer == "add":
            new = _scaled(b, x, g)
            phrase = f"a multiply by {g}" if g != 1 else "its operand"
        elif col.reducer in ("maximum", "minimum", "and", "or"):
            new, phrase = x, "its operand"
    elif col.kind == "all_gather":
        dim = _int_attr(op, "all_gather_dim")
        if dim is not None:
            if g == 1:
                new, phrase = x, "its operand"
            else:
                new = b.add("stablehlo.concatenate", [x] * g, [r.type],
                            {"dimension": f"{dim} : i64"}).results[0]
                phrase = f"a local concatenate of {g} copies"
    elif col.kind == "reduce_scatter" and col.reducer in ("add", "maximum", "minimum"):
        dim = _int_attr(op, "scatter_dimension")
        if dim is not None:
            piece = _local_slice(b, col, region, x, dim)
            new = _scaled(b, piece, g) if col.reducer == "add" else piece
            phrase = "a local dynamic_slice" + (f" times {g}" if col.reducer == "add" else "")
    elif col.kind == "all_to_all":
        split, concat = _int_attr(op, "split_dimension"), _int_attr(op, "concat_dimension")
        if split is not None and concat is not None:
            piece = _local_slice(b, col, region, x, split)
            new = piece if g == 1 else b.add(
                "stablehlo.concatenate", [piece] * g, [r.type], {"dimension": f"{concat} : i64"}
            ).results[0]
            phrase = f"a local dynamic_slice concatenated {g} times"
    elif col.kind == "collective_permute":
        targets = sorted(t for _, t in col.perm)
        if targets == list(range(g)):
            new, phrase = x, "its operand (every device receives an equal buffer)"
    if new is None:
        return None
    if new.type != r.type:
        return None
    r.replace_all_uses_with(new)
    op.erase()
    return phrase
