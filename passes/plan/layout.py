"""The plan's one adapter to how shardings are stored in the IR (switch it here, nowhere else).

Everything the plan reads about shardings goes through these functions: a value's sharding, a
func's argument and result shardings, a constraint's or a manual computation's shardings, its
manual axes, the mesh a sharding names, an op's sharding rule.
"""

from __future__ import annotations

from shardc.dialect.ir import Module, Operation, Value, func_body
from shardc.dialect.op_views import (
    Func,
    ManualComputation,
    ShardingConstraint,
    constrained_sharding,
)
from shardc.dialect.rules.model import OpShardingRule
from shardc.dialect.rules.registry import usable_rule
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.passes.export import cut_to_divisible, drop_open_sub_axes


def value_sharding(v: Value) -> TensorSharding | None:
    """The sharding a value carries (None: none, i.e. replicated): its own where it has one,
    else a constraint's or reshard's result the op's, a manual computation's result its
    out_sharding (`op_views.constrained_sharding` as the plan reads it)."""
    return constrained_sharding(v, manual_results=True, reshards=True, own_first=True)


def result_sharding(func: Operation, index: int) -> TensorSharding | None:
    """The `sdy.sharding` of result `index` of a `func.func`, else that of the returned value."""
    s = Func(func).result_sharding(index)
    if s is not None:
        return s
    body = func_body(func)
    if body is None or body.terminator is None or index >= len(body.terminator.operands):
        return None
    return body.terminator.operands[index].sharding


def declared_result_sharding(func: Operation, index: int) -> TensorSharding | None:
    """The `sdy.sharding` attribute of result `index` of a `func.func` only."""
    return Func(func).result_sharding(index)


def constraint_sharding(op: Operation) -> TensorSharding | None:
    """The sharding an `sdy.sharding_constraint` / `sdy.reshard` asks for."""
    return ShardingConstraint(op).sharding


def set_value_sharding(v: Value, s: TensorSharding | None) -> None:
    """Give a value a sharding (the explicit form: an op computed at another layout)."""
    v.sharding = s


def out_sharding(op: Operation) -> object:
    """The `out_sharding` of an explicit sdy collective (as stored: parsed or raw text); an
    `sdy.reshard` states its result's sharding as `sharding`."""
    props = op.properties
    return props.get("out_sharding") if "out_sharding" in props else props.get("sharding")


def set_constraint_sharding(op: Operation, s: TensorSharding) -> None:
    """Change what an `sdy.sharding_constraint` asks for (the plan's what-if fixes)."""
    ShardingConstraint(op).sharding = s


def set_declared_result_sharding(func: Operation, index: int, s: TensorSharding | None) -> None:
    """Change the `sdy.sharding` of result `index` of a `func.func` (the plan's what-if fixes)."""
    Func(func).set_result_sharding(index, s)


def manual_in_shardings(op: Operation) -> list[TensorSharding]:
    """The `in_shardings` of an `sdy.manual_computation` (global view, manual axes included)."""
    return list(ManualComputation(op).in_shardings)


def manual_out_shardings(op: Operation) -> list[TensorSharding]:
    """The `out_shardings` of an `sdy.manual_computation`."""
    return list(ManualComputation(op).out_shardings)


def manual_axes(op: Operation) -> tuple[str, ...]:
    """The manual axes of an `sdy.manual_computation`."""
    return ManualComputation(op).manual_axes


def io_sharding(
    s: TensorSharding | None, shape: tuple[int, ...], mesh: Mesh | None, is_main: bool
) -> TensorSharding | None:
    """A func argument/result sharding as the export writes it and XLA keeps it: cut to its
    largest evenly dividing prefix, and on the main func open dims lose their sub-axes."""
    if s is None or mesh is None or not mesh.axes or any(d < 0 for d in shape):
        return s
    s = cut_to_divisible(s, shape, mesh)
    return drop_open_sub_axes(s) if is_main else s


def mesh_of(module: Module, sharding: TensorSharding | None) -> Mesh | None:
    """The mesh a sharding names (a symbol of `module`, or inline)."""
    if sharding is None:
        return None
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    return module.meshes.get(sharding.mesh)


def op_rule(op: Operation) -> OpShardingRule | None:
    """The op's sharding rule (attribute first, then the registry), None if it has none or
    one that cannot be used (`usable_rule`: propagation names those)."""
    return usable_rule(op)
