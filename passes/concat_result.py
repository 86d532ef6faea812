"""A concatenate's result at the axes Shardy's explicit-reshards step computes it at.

Shardy's `sdy-propagation-pipeline` ends with `insert-explicit-reshards`. That step runs in
full for a `stablehlo.concatenate` whose operands do not all have its result's sharding
(`isOnFullVersion` in Shardy's `insert_explicit_reshards.cc`): the op is computed at the common
axes of its operands and result (`findCommonAxes`, ours is `plan.common_axes`), every operand
is resharded to them before the op, the result's own sharding becomes them and a reshard after
the op restores the old layout for its users. A concatenate whose operands all match its
result keeps it, even with the concat dim sharded.

`recompute_concat_results` writes that sharding on such a result in the exported module, so
`annotate` gives the concatenate the layout Shardy's output gives it (the users keep theirs;
XLA reshards between, as it does for Shardy's reshard). Closed shardings only: it runs after
the exporter has finalized them; an operand without a sharding is replicated, as Shardy reads
it, and an operand whose other reader is a constraint (or a manual computation's closed
in_sharding) that Shardy sends every use through has that reader's sharding, as the op reads
it in Shardy's output (`concat_redirects` finds those before the exporter closes every
constraint, which would hide the open ones); an operand that is a loop's result has the layout
the exporter keeps aside for it (XLA takes no sharding on a while, but Shardy's output keeps one
there, and its reshards read it). Concatenates inside a manual computation's body, on several meshes, or with unreduced
axes are left alone.
"""

from __future__ import annotations

from shardc.dialect.ir import Module, Operation, OpResult, Value
from shardc.dialect.op_views import MANUAL_COMPUTATION, ManualComputation, ShardingConstraint
from shardc.dialect.rules.registry import usable_rule
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType

from .import_steps.constraints import redirects_manual_operand, redirects_uses
from .plan.common_axes import common_axes
from .propagation.projection import FactorSharding, TensorFactorShardings, back_project, project


def _in_manual_body(op: Operation) -> bool:
    p = op.parent_op
    while p is not None:
        if p.name == MANUAL_COMPUTATION:
            return True
        p = p.parent_op
    return False


def _elements(v: Value) -> int:
    n = 1
    for s in v.type.shape:  # type: ignore[attr-defined]
        n *= max(s, 0)
    return n


def _axes(s: TensorSharding) -> tuple[tuple[object, ...], ...]:
    return tuple(d.axes for d in s.dims)


Redirects = dict[int, tuple[Operation, int]]


def concat_redirects(module: Module) -> Redirects:
    """For each concatenate operand that Shardy reads through a constraint of another reader:
    `id(value) -> (constraint, -1)` or `(manual computation, operand index)`. Asked before the
    export (it needs the constraints as propagation left them)."""
    out: Redirects = {}
    for op in module.walk():
        if op.name != "stablehlo.concatenate":
            continue
        for v in op.operands:
            for u, i in v.uses:
                if redirects_uses(u, False):
                    out[id(v)] = (u, -1)
                    break
                if redirects_manual_operand(u, i, False) is not None:
                    out[id(v)] = (u, i)
                    break
    return out


def _read_sharding(
    v: Value, redirects: Redirects, unwritten: dict[int, TensorSharding]
) -> TensorSharding | None:
    hit = redirects.get(id(v))
    if hit is None:
        if v.sharding is None and isinstance(v, OpResult) and v.owner.name in ShardingConstraint.OP_NAMES:
            return ShardingConstraint(v.owner).sharding  # a constraint's result: its sharding
        if v.sharding is None:  # (a loop's result: its layout is kept aside, not written)
            return unwritten.get(id(v))
        return v.sharding
    u, i = hit
    if i < 0:
        return ShardingConstraint(u).sharding
    ins = ManualComputation(u).in_shardings
    return ins[i] if i < len(ins) else v.sharding


def concat_common_sharding(
    op: Operation,
    meshes: dict[str, Mesh],
    redirects: Redirects | None = None,
    unwritten: dict[int, TensorSharding] | None = None,
) -> TensorSharding | None:
    """The sharding Shardy's explicit reshards give `op`'s (a concatenate's) result, or None
    where it keeps the one it has (every operand matches it) or the op is out of scope.
    `unwritten`: the layouts of the operands the export writes no sharding on (a while's
    results, by `id`), which Shardy's output keeps on the op and its reshards read."""
    if len(op.results) != 1 or not op.operands:
        return None
    res = op.results[0]
    rs = res.sharding
    if rs is None or rs.unreduced or not isinstance(res.type, TensorType):
        return None
    mesh = rs.mesh if isinstance(rs.mesh, Mesh) else meshes.get(rs.mesh)
    if mesh is None or not mesh.axes:
        return None
    shardings: list[TensorSharding] = []
    for v in op.operands:
        if not isinstance(v.type, TensorType):
            return None
        s = _read_sharding(v, redirects or {}, unwritten or {})
        if s is None:
            s = TensorSharding.replicated_of(rs.mesh, v.type.rank)
        elif s.unreduced:
            return None
        else:
            m = s.mesh if isinstance(s.mesh, Mesh) else meshes.get(s.mesh)
            if m != mesh:
                return None
        shardings.append(s)
    if all(_axes(s) == _axes(rs) for s in shardings):
        return None
    rule = usable_rule(op)
    if rule is None or len(rule.operand_dims) != len(shardings) or len(rule.result_dims) != 1:
        return None
    all_dims = (*rule.operand_dims, *rule.result_dims)
    tensors = [*shardings, rs]
    projs = [
        project(s, all_dims[i], rule.factor_sizes, mesh) for i, s in enumerate(tensors)
    ]
    sizes = [_elements(v) for v in (*op.operands, res)]
    common = common_axes(projs, rule, sizes, mesh, higher_factor=True)
    proj = TensorFactorShardings()
    for flist in rule.result_dims[0]:
        for f in flist:
            proj.factors[f] = FactorSharding(axes=common[f], closed=True)
    out = back_project(proj, rs, rule.result_dims[0], rule.factor_sizes, mesh, rs.mesh)
    out = TensorSharding(rs.mesh, out.dims)
    return None if _axes(out) == _axes(rs) else out


def recompute_concat_results(
    module: Module,
    redirects: Redirects | None = None,
    unwritten: dict[int, TensorSharding] | None = None,
) -> int:
    """Give every concatenate of `module` the result sharding Shardy's explicit reshards give
    it (see the module docstring; `redirects` from `concat_redirects` before the export,
    `unwritten` the export's layouts of loop results); returns how many changed."""
    meshes = dict(module.meshes)
    changed = 0
    for op in module.walk():
        if op.name != "stablehlo.concatenate" or _in_manual_body(op):
            continue
        s = concat_common_sharding(op, meshes, redirects, unwritten)
        if s is not None:
            op.results[0].sharding = s
            changed += 1
    return changed
