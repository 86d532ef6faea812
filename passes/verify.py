"""Verification: module structure, types and every sharding against its mesh and tensor.

Raises `VerificationError`/`ShardingError` naming the value, the op and its source location.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.errors import ShardcError, ShardingError, VerificationError
from shardc.dialect.ir import Module, Operation, symbol_name
from shardc.dialect.op_views import Func, ManualComputation, ShardingConstraint
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType, split_function_type

from .context import PassContext


@dataclass(frozen=True)
class VerifyPass:
    """The `verify` pass; no options."""

    name: ClassVar[str] = "verify"
    changes_ir: ClassVar[bool] = False

    def run(self, module: Module, ctx: PassContext) -> None:
        verify_module(module)


def resolve_mesh(module: Module, sharding: TensorSharding, meshes: dict[str, Mesh]) -> Mesh:
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    mesh = meshes.get(sharding.mesh)
    if mesh is None:
        known = ", ".join("@" + m for m in meshes) or "none"
        raise ShardingError(
            f"unknown mesh: @{sharding.mesh} (meshes in the module: {known})",
            hint="declare it with `sdy.mesh @name = <[...]>` or use a declared mesh",
        )
    return mesh


def check_sharding(
    module: Module,
    sharding: TensorSharding,
    value_type: object,
    what: str,
    op: Operation | None,
    meshes: dict[str, Mesh],
) -> None:
    """Validate one sharding for one value; errors name `what` and the op's location."""
    loc = module.resolve_loc(op.loc) if op is not None else None
    try:
        mesh = resolve_mesh(module, sharding, meshes)
        shape = value_type.shape if isinstance(value_type, TensorType) else None
        sharding.validate(mesh, shape, what)
    except ShardcError as e:
        msg = e.message if e.message.startswith(what) else f"{what}: {e.message}"
        raise ShardingError(msg, location=loc, hint=e.hint) from None


def verify_module(module: Module) -> None:
    """Check the module's structure and every sharding on it."""
    meshes = module.meshes
    if module.op.name != "builtin.module":
        raise VerificationError("the top-level op must be builtin.module")
    for op in module.body.ops:
        if op.name == "func.func":
            _verify_func(module, op, meshes)
    for op in module.walk():
        _verify_op(module, op, meshes)


def _verify_func(module: Module, func: Operation, meshes: dict[str, Mesh]) -> None:
    name = symbol_name(func)
    if not func.regions or not func.regions[0].blocks:
        return
    body = func.regions[0].entry
    for i, arg in enumerate(body.args):
        if arg.sharding is not None:
            check_sharding(module, arg.sharding, arg.type, f"@{name} %arg{i}", func, meshes)
    term = body.terminator
    if term is None or term.name != "func.return":
        raise VerificationError(
            f"@{name}: the body must end with func.return", location=module.resolve_loc(func.loc)
        )
    ftype = func.properties.get("function_type")
    if ftype is not None:
        _, declared = split_function_type(str(ftype))
        got = [str(v.type) for v in term.operands]
        if list(declared) != got:
            raise VerificationError(
                f"@{name}: func.return gives ({', '.join(got)}) but the signature declares "
                f"({', '.join(declared)})",
                location=module.resolve_loc(term.loc),
            )
    view = Func(func)
    for i, v in enumerate(term.operands):
        s = view.result_sharding(i)
        if s is not None:
            check_sharding(module, s, v.type, f"@{name} result {i}", func, meshes)


def _verify_op(module: Module, op: Operation, meshes: dict[str, Mesh]) -> None:
    for i, r in enumerate(op.results):
        if r.sharding is not None:
            check_sharding(module, r.sharding, r.type, f"{op.name} result {i}", op, meshes)
    name = op.name
    if name in ("sdy.sharding_constraint", "sdy.reshard"):
        s = ShardingConstraint(op).sharding
        check_sharding(module, s, op.results[0].type, f"{name} sharding", op, meshes)
    elif name == "sdy.manual_computation":
        _verify_manual(module, op, meshes)


def _verify_manual(module: Module, op: Operation, meshes: dict[str, Mesh]) -> None:
    loc = module.resolve_loc(op.loc)
    view = ManualComputation(op)
    in_list = view.in_shardings
    out_list = view.out_shardings
    if len(in_list) != len(op.operands):
        raise VerificationError(
            f"sdy.manual_computation: operand shardings don't match number of values: "
            f"{len(in_list)} shardings vs {len(op.operands)} values",
            location=loc,
        )
    if len(out_list) != len(op.results):
        raise VerificationError(
            f"sdy.manual_computation: result shardings don't match number of values: "
            f"{len(out_list)} shardings vs {len(op.results)} values",
            location=loc,
        )
    manual = view.manual_axes
    if manual:
        for s in in_list + out_list:
            mesh = resolve_mesh(module, s, meshes)
            for a in manual:
                if a not in mesh.axis_sizes:
                    raise VerificationError(
                        f'sdy.manual_computation: unknown manual axis: "{a}"', location=loc
                    )
    for i, (s, v) in enumerate(zip(in_list, op.operands, strict=True)):
        check_sharding(module, s, v.type, f"sdy.manual_computation in_shardings[{i}]", op, meshes)
    for i, (s, v) in enumerate(zip(out_list, op.results, strict=True)):
        check_sharding(module, s, v.type, f"sdy.manual_computation out_shardings[{i}]", op, meshes)

