"""What one op with a sharding rule costs under given operand and result shardings (pure).

`op_steps` follows Shardy's explicit-reshard semantics: the op is computed at one axis list
per factor (`common_axes`); every operand whose sharding differs from that is resharded before
the op, every result is computed at it, all-reduced over the axes of its sharded reduction
factors, and resharded to its own sharding after the op. `op_cost` is the bytes of all that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardc.dialect.layout_math import axes_layout, dim_axes
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding

from ..propagation.projection import (
    FactorSharding,
    TensorFactorShardings,
    back_project,
    project,
)
from .common_axes import AxesPerFactor, common_axes, xla_contraction
from .cost import Step, reduction_steps, reshard_steps
from .xla_dot import dot_dims, dot_plan


@dataclass(frozen=True, slots=True)
class Tensor:
    """A tensor as the byte model sees it: global shape, element bytes, layout (one dim
    sharding per dim, closed: `layout_math.axes_layout`), unreduced axes."""

    shape: tuple[int, ...]
    elem_bytes: int
    sharding: TensorSharding
    unreduced: tuple[AxisRef, ...] = ()

    @property
    def num_elements(self) -> int:
        n = 1
        for s in self.shape:
            n *= max(s, 0)
        return n


@dataclass(frozen=True)
class OpSteps:
    """The collectives of one op: per operand before it, per result after it (reduction first)."""

    common: AxesPerFactor
    computed: tuple[TensorSharding, ...]  # per tensor (operands then results): its layout in the op
    operands: tuple[tuple[Step, ...], ...]
    results: tuple[tuple[Step, ...], ...]
    reduce_axes: tuple[AxisRef, ...]
    # per operand: the device group's axes it is resharded within (a dot's, `xla_dot`)
    groups: tuple[frozenset[AxisRef], ...] = ()

    @property
    def bytes(self) -> int:
        return sum(s.bytes for steps in (*self.operands, *self.results) for s in steps)


def project_tensor(
    t: Tensor, dim_factors: tuple[tuple[int, ...], ...], rule: OpShardingRule, mesh: Mesh
) -> TensorFactorShardings:
    """`t` projected on the factors of its dims."""
    return project(t.sharding, dim_factors, rule.factor_sizes, mesh)


def computed_sharding(
    common: AxesPerFactor,
    dim_factors: tuple[tuple[int, ...], ...],
    rule: OpShardingRule,
    mesh: Mesh,
) -> TensorSharding:
    """The layout of a tensor of the op when its factors are sharded as `common`."""
    proj = TensorFactorShardings()
    for flist in dim_factors:
        for f in flist:
            proj.factors[f] = FactorSharding(axes=common[f])
    s = back_project(proj, None, dim_factors, rule.factor_sizes, mesh, mesh)
    return axes_layout(mesh, (d.axes for d in s.dims))


def op_steps(
    rule: OpShardingRule,
    tensors: Sequence[Tensor],
    mesh: Mesh,
    common: AxesPerFactor | None = None,
    skip_operands: frozenset[int] = frozenset(),
    style: str = "xla",
    move: bool = True,
    dot: bool = False,
) -> OpSteps:
    """The collectives the op needs with `tensors` (operands then results) as they are.

    `common` forces the factor axes the op is computed at (default: Shardy's choice);
    `skip_operands` are operands resharded for free (constants XLA materializes per layout);
    `style="xla"`: element-wise ops are computed at their result's layout and merged blocks
    gathered whole, as XLA partitions a pinned layout; `"shardy"`: Shardy's explicit reshards
    (see `common_axes` and `cost.reshard_steps`); `move`: see `common_axes`; `dot`: the op is
    a dot_general, which `style="xla"` partitions as XLA's dot handler does (`xla_dot`)."""
    if dot and style == "xla" and common is None and not skip_operands:
        steps = _xla_dot_steps(rule, tensors, mesh)
        if steps is not None:
            return steps
    all_dims = (*rule.operand_dims, *rule.result_dims)
    if common is None:
        projs = [project_tensor(t, all_dims[i], rule, mesh) for i, t in enumerate(tensors)]
        sizes = [t.num_elements for t in tensors]
        common = common_axes(projs, rule, sizes, mesh, results_win=style == "xla", move=move)
        if style == "xla":
            common = xla_contraction(common, projs, rule, sizes, mesh)
    n = len(rule.operand_dims)
    computed = tuple(
        computed_sharding(common, all_dims[i], rule, mesh) for i in range(len(tensors))
    )
    if style == "xla" and len(tensors) > n:
        common, computed = _keep_expressible(common, computed, all_dims, rule, mesh, n)
    reduce: list[AxisRef] = []
    per_factor: list[tuple[AxisRef, ...]] = []
    for f, kind in enumerate(rule.kinds):
        if kind == FactorKind.REDUCTION:
            reduce.extend(common[f])
            per_factor.append(tuple(common[f]))
    operands: list[tuple[Step, ...]] = []
    for i in range(n):
        t = tensors[i]
        if i in skip_operands or _same(t.sharding, computed[i]):
            operands.append(())
            continue
        operands.append(
            tuple(reshard_steps(t.shape, t.elem_bytes, t.sharding, computed[i], mesh, style))
        )
    results: list[tuple[Step, ...]] = []
    for j in range(len(tensors) - n):
        t = tensors[n + j]
        red = tuple(a for a in reduce if not any(u.contains(a, mesh) for u in t.unreduced))
        if not red and _same(t.sharding, computed[n + j]):
            results.append(())
            continue
        # XLA reduces a reduce's partial sums per reduced dim (a dot's: `xla_dot`)
        groups = () if dot else tuple(tuple(a for a in g if a in red) for g in per_factor)
        results.append(
            tuple(
                reduction_steps(
                    t.shape, t.elem_bytes, computed[n + j], red, t.sharding, mesh, style, groups
                )
            )
        )
    return OpSteps(common, computed, tuple(operands), tuple(results), tuple(reduce))


def _xla_dot_steps(rule: OpShardingRule, tensors: Sequence[Tensor], mesh: Mesh) -> OpSteps | None:
    """`op_steps` of a dot_general as XLA's dot handler partitions it (None where the model
    does not apply: unreduced axes, a rule that is not a dot's)."""
    dims = dot_dims(rule)
    if dims is None or len(tensors) != 3 or any(t.unreduced for t in tensors):
        return None
    lhs, rhs, out = tensors
    plan = dot_plan(
        dims,
        (lhs.shape, rhs.shape, out.shape),
        (lhs.elem_bytes, rhs.elem_bytes, out.elem_bytes),
        (lhs.sharding, rhs.sharding, out.sharding),
        mesh,
    )
    common: AxesPerFactor = [()] * rule.num_factors
    for t, dim_factors in reversed(list(zip(plan.computed, (*rule.operand_dims, *rule.result_dims), strict=True))):
        for d, factors in enumerate(dim_factors):
            for f in factors:
                common[f] = t.dims[d].axes if d < len(t.dims) else ()
    return OpSteps(common, plan.computed, plan.operands, (plan.result,), plan.reduced,
                   plan.groups)


def _keep_expressible(
    common: AxesPerFactor,
    computed: tuple[TensorSharding, ...],
    all_dims: tuple[tuple[tuple[int, ...], ...], ...],
    rule: OpShardingRule,
    mesh: Mesh,
    n: int,
) -> tuple[AxesPerFactor, tuple[TensorSharding, ...]]:
    """A factor's axes that a result's dims cannot carry (the minor factor of a merged dim
    whose major factor is not split whole: a reshape) are gathered from the operands first,
    as XLA's partitioner does (docs/xla_partitioner.md, "reshapes")."""
    held = [a for s in computed[n:] for d in s.dims for a in d.axes]
    carried = {
        a
        for f in range(rule.num_factors)
        for a in common[f]
        if any(c.contains(a, mesh) for c in held)
    }
    in_results = {f for dims in all_dims[n:] for fl in dims for f in fl}
    lost = [
        f
        for f in range(rule.num_factors)
        if f in in_results
        and rule.kinds[f] != FactorKind.REDUCTION
        and any(a not in carried for a in common[f])
    ]
    if not lost:
        return common, computed
    fixed = list(common)
    for f in lost:
        keep: list[AxisRef] = []
        for a in fixed[f]:
            if a not in carried:
                break
            keep.append(a)
        fixed[f] = tuple(keep)
    return fixed, tuple(
        computed_sharding(fixed, all_dims[i], rule, mesh) for i in range(len(computed))
    )


def _same(a: TensorSharding, b: TensorSharding) -> bool:
    """Whether two layouts split every dim over the same axes (a dim past the end is whole)."""
    n = max(len(a.dims), len(b.dims))
    return dim_axes(a, n) == dim_axes(b, n)


def op_cost(
    rule: OpShardingRule,
    tensors: Sequence[Tensor],
    mesh: Mesh,
    common: AxesPerFactor | None = None,
    style: str = "xla",
) -> int:
    """Bytes per device of the collectives op `rule` needs with `tensors` (operands, results)."""
    return op_steps(rule, tensors, mesh, common, style=style).bytes
