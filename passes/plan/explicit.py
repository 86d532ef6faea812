"""The plan written into the module as explicit `sdy` collectives, as Shardy's pipeline
`sdy-insert-explicit-reshards{enable-full-version=true}` + `sdy-reshard-to-collectives` writes
them: `sdy.all_gather`, `sdy.all_slice`, `sdy.all_reduce`, `sdy.all_to_all`,
`sdy.collective_permute`, each with its `out_sharding`. An op computed at another layout than
its result's gets that layout on its result, and the collectives after it bring the value back.

`as_constraints` turns every explicit collective into an `sdy.sharding_constraint` to its
out_sharding: XLA 0.10.2 does not compile the collectives themselves
(docs/xla_boundary.md §2), and the constraint form partitions to the same layout.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardc.dialect.ir import AttrDict, Module, Operation, Value
from shardc.dialect.layout_math import axes_layout, axes_size
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding

from . import layout
from .cost import (
    ALL_GATHER,
    ALL_REDUCE,
    ALL_SLICE,
    ALL_TO_ALL,
    COLLECTIVE_PERMUTE,
    REDUCE_SCATTER,
    Step,
    merge_axes,
)
from .plan import Rewrite

EXPLICIT_OPS = (
    "sdy.reshard",
    "sdy.all_gather",
    "sdy.all_slice",
    "sdy.all_reduce",
    "sdy.all_to_all",
    "sdy.collective_permute",
)


def _axes(axes: Sequence[AxisRef]) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


def _per_dim(axes: TensorSharding) -> str:
    return "#sdy<list_of_axis_ref_lists[" + ", ".join(_axes(d.axes) for d in axes.dims) + "]>"


def _on(mesh: str | Mesh, target: TensorSharding) -> TensorSharding:
    """`target`'s dims on the module's mesh `mesh` (the byte models lay out on the resolved one)."""
    return TensorSharding(mesh, target.dims)


def _merged(target: TensorSharding, mesh: Mesh) -> TensorSharding:
    """`target` with consecutive sub-axes of each dim merged."""
    return axes_layout(target.mesh, (merge_axes(d.axes, mesh) for d in target.dims))


def _ops_for(
    step: Step, before: TensorSharding, mesh: str | Mesh
) -> list[tuple[str, dict[str, object]]]:
    """The sdy op(s) of one step: (name, properties)."""
    out = _on(mesh, step.after)
    rank = len(step.after.dims)
    if step.kind == ALL_GATHER:
        per_dim = step.per_dim or _diff(before, step.after, rank, gathered=True)
        return [("sdy.all_gather", {"gathering_axes": _per_dim(per_dim), "out_sharding": out})]
    if step.kind == ALL_SLICE:
        per_dim = step.per_dim or _diff(before, step.after, rank, gathered=False)
        return [("sdy.all_slice", {"slicing_axes": _per_dim(per_dim), "out_sharding": out})]
    if step.kind == ALL_REDUCE:
        reduce = "#sdy<axis_ref_list" + _axes(step.axes) + ">"
        return [("sdy.all_reduce", {"reduction_axes": reduce, "out_sharding": out})]
    if step.kind == REDUCE_SCATTER:  # Shardy writes it as an all-reduce, then an all-slice
        reduce = "#sdy<axis_ref_list" + _axes(step.axes) + ">"
        per_dim = step.per_dim or _diff(before, step.after, rank, gathered=False)
        return [
            ("sdy.all_reduce", {"reduction_axes": reduce, "out_sharding": _on(mesh, before)}),
            ("sdy.all_slice", {"slicing_axes": _per_dim(per_dim), "out_sharding": out}),
        ]
    if step.kind == ALL_TO_ALL:
        src, tgt = step.move if step.move is not None else (0, 0)
        params = f"#sdy<all_to_all_param_list[{_axes(step.axes)}: {src}->{tgt}]>"
        return [("sdy.all_to_all", {"params": params, "out_sharding": out})]
    if step.kind == COLLECTIVE_PERMUTE:
        return [("sdy.collective_permute", {"out_sharding": out})]
    raise ValueError(f"unknown collective kind {step.kind}")


def _diff(
    before: TensorSharding, after: TensorSharding, rank: int, gathered: bool
) -> TensorSharding:
    """Per dim, the axes one layout has beyond the other (the suffix a gather or slice moves)."""
    out = []
    for d in range(rank):
        b = before.dims[d].axes if d < len(before.dims) else ()
        a = after.dims[d].axes if d < len(after.dims) else ()
        long, short = (b, a) if gathered else (a, b)
        out.append(long[len(short) :])
    return axes_layout(after.mesh, out)


def _expected(step: Step, before: TensorSharding, mesh: Mesh) -> TensorSharding | None:
    """The layout an explicit op of `step` gives a value laid out as `before`, as Shardy's
    verifiers compute it; None where the op would not verify."""
    rank = len(before.dims)
    cur = [list(before.dims[d].axes) for d in range(rank)]
    kind = step.kind
    if kind in (ALL_GATHER, ALL_SLICE, REDUCE_SCATTER):
        gathered = kind == ALL_GATHER
        per_dim = step.per_dim or _diff(before, step.after, rank, gathered=gathered)
        for d in range(rank):
            axes = list(per_dim.dims[d].axes) if d < len(per_dim.dims) else []
            if not axes:
                continue
            if gathered:
                if cur[d][len(cur[d]) - len(axes) :] != axes:
                    return None
                cur[d] = cur[d][: len(cur[d]) - len(axes)]
            else:
                cur[d].extend(axes)
    elif kind == ALL_TO_ALL:
        if step.move is None:
            return None
        src, tgt = step.move
        axes = list(step.axes)
        if cur[src][len(cur[src]) - len(axes) :] != axes:
            return None
        cur[src] = cur[src][: len(cur[src]) - len(axes)]
        cur[tgt].extend(axes)
    elif kind == COLLECTIVE_PERMUTE:
        after = [list(d.axes) for d in step.after.dims]
        for d in range(rank):
            n_in = axes_size(cur[d], mesh)
            n_out = axes_size(after[d] if d < len(after) else (), mesh)
            if n_in != n_out:
                return None
        cur = after
    flat = [a for d in cur for a in d]
    if any(a.overlaps(b, mesh) for i, a in enumerate(flat) for b in flat[i + 1 :]):
        return None  # an axis twice
    return axes_layout(before.mesh, (merge_axes(d, mesh) for d in cur))


def _verifies(value: Value, start: TensorSharding, steps: Sequence[Step], mesh: Mesh) -> bool:
    """Whether the explicit ops of `steps` verify: the value has a sharding to act on, and
    each op takes the layout before it to the layout the next one starts from."""
    own = layout.value_sharding(value)
    if own is None or _region_argument(value):
        return False  # (a loop's or branch's block argument carries no sharding of its own)
    before = _merged(start, mesh)
    if _merged(own, mesh).dims != before.dims:
        return False  # the value is written with another sharding than the plan starts from
    for step in steps:
        if step.after.dims == before.dims and step.kind not in (ALL_REDUCE, REDUCE_SCATTER):
            continue
        got = _expected(step, before, mesh)
        if got is None or got.dims != _merged(step.after, mesh).dims:
            return False
        before = step.after
    return True


def _region_argument(value: Value) -> bool:
    """A block argument of a region other than a func body."""
    block = getattr(value, "block", None)
    owner = block.parent.parent if block is not None and block.parent is not None else None
    return owner is not None and owner.name != "func.func"


def _reshard(
    value: Value, target: TensorSharding, mesh: str | Mesh, loc: str | None
) -> list[Operation]:
    """One `sdy.reshard` to `target`: what Shardy writes where no explicit collective applies."""
    props = AttrDict(items={"sharding": _on(mesh, target)})
    return [Operation("sdy.reshard", [value], [value.type], properties=props, loc=loc)]


def _chain(
    value: Value, start: TensorSharding, steps: Sequence[Step], mesh: str | Mesh, loc: str | None
) -> list[Operation]:
    """The explicit ops that take `value` from `start` through `steps` (no-op steps skipped)."""
    ops: list[Operation] = []
    cur, before = value, start
    for step in steps:
        if step.after.dims == before.dims and step.kind not in (ALL_REDUCE, REDUCE_SCATTER):
            continue
        for name, props in _ops_for(step, before, mesh):
            op = Operation(name, [cur], [cur.type], properties=AttrDict(items=dict(props)), loc=loc)
            ops.append(op)
            cur = op.results[0]
        before = step.after
    return ops


def _default_mesh(module: Module) -> str | None:
    for name, mesh in module.meshes.items():
        if mesh.axes:
            return name
    return None


def _chain_or_reshard(
    value: Value, rw: Rewrite, mesh: str | Mesh, resolved: Mesh, loc: str | None
) -> list[Operation]:
    """The explicit collectives of a reshard, or one `sdy.reshard` where they would not
    verify (the value carries no sharding to act on, or no op takes one step to the next)."""
    if not rw.steps:
        return []
    if _verifies(value, rw.start, rw.steps, resolved):
        return _chain(value, rw.start, rw.steps, mesh, loc)
    return _reshard(value, rw.steps[-1].after, mesh, loc)


def write_explicit(module: Module, rewrites: Sequence[Rewrite]) -> int:
    """Insert the explicit collectives of `rewrites` (from `plan_with_rewrites`, on this
    module); returns how many ops were inserted."""
    default = _default_mesh(module)
    count = 0
    for rw in rewrites:
        mesh = rw.mesh if rw.mesh is not None else default
        if mesh is None:
            continue
        resolved = mesh if isinstance(mesh, Mesh) else module.meshes.get(mesh)
        if resolved is None:
            continue
        op, block = rw.op, rw.op.parent
        if block is None:
            continue
        if rw.where == "operand":
            value = op.operands[rw.index]
            chain = _chain_or_reshard(value, rw, mesh, resolved, op.loc)
            if not chain:
                continue
            at = block.ops.index(op)
            for k, new in enumerate(chain):
                block.insert(at + k, new)
            op.set_operand(rw.index, chain[-1].results[0])
        else:
            result = op.results[rw.index]
            users = list(result.uses)
            layout.set_value_sharding(result, _on(mesh, rw.start))
            chain = _chain_or_reshard(result, rw, mesh, resolved, op.loc)
            if not chain:
                continue
            at = block.ops.index(op) + 1
            for k, new in enumerate(chain):
                block.insert(at + k, new)
            for u, i in users:
                u.set_operand(i, chain[-1].results[0])
            layout.set_value_sharding(result, _on(mesh, rw.start))
        count += len(chain)
    return count


def as_constraints(module: Module) -> int:
    """Every explicit sdy collective becomes an `sdy.sharding_constraint` to its out_sharding
    (what XLA compiles); returns how many were rewritten."""
    count = 0
    for op in list(module.walk()):
        if op.name not in EXPLICIT_OPS:
            continue
        out = layout.out_sharding(op)
        op.name = "sdy.sharding_constraint"
        op.properties = AttrDict(items={"sharding": out})
        count += 1
    return count
