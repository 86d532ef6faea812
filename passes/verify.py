"""Verification: module structure, types and every sharding against its mesh and tensor.

Raises `VerificationError`/`ShardingError` naming the value, the op and its source location.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.data_flow import CALL
from shardc.dialect.errors import (
    ShardcError,
    ShardingError,
    VerificationError,
    count_mismatch,
    duplicate_axis,
    unknown_axis,
    unknown_mesh,
    unsupported,
)
from shardc.dialect.ir import (
    BlockArgument,
    Module,
    Operation,
    OpResult,
    Value,
    callee_name,
    symbol_name,
)
from shardc.dialect.op_views import MANUAL_COMPUTATION, Func, ManualComputation, ShardingConstraint
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import OpaqueType, TensorType, split_function_type

from .context import ALL, OpList, PassContext


@dataclass(frozen=True)
class VerifyPass:
    """The `verify` pass. `dynamic`: dynamic dims are accepted outside shard_map regions
    (propagation moves nothing along them); else they are refused, as Shardy refuses them."""

    name: ClassVar[str] = "verify"
    preserves: ClassVar[frozenset[type]] = ALL
    dynamic: bool = False

    def run(self, module: Module, ctx: PassContext) -> None:
        verify_module(module, ctx.analysis(OpList, module), self.dynamic)


def resolve_mesh(module: Module, sharding: TensorSharding, meshes: dict[str, Mesh]) -> Mesh:
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    mesh = meshes.get(sharding.mesh)
    if mesh is None:
        raise unknown_mesh(sharding.mesh, list(meshes))
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
    try:
        mesh = resolve_mesh(module, sharding, meshes)
        shape = value_type.shape if isinstance(value_type, TensorType) else None
        sharding.validate(mesh, shape, what)
    except ShardcError as e:
        msg = e.message if e.message.startswith(what) else f"{what}: {e.message}"
        loc = module.resolve_loc(op.loc) if op is not None else None
        raise ShardingError(msg, location=loc, hint=e.hint) from None


class _Checked:
    """The (sharding, type) pairs already validated in one run: a parsed sharding is one
    object per distinct text, so a module repeats a few pairs many times."""

    __slots__ = ("seen", "meshes")

    def __init__(self, meshes: dict[str, Mesh]):
        self.seen: set[tuple[int, int]] = set()
        self.meshes = meshes

    def check(
        self, module: Module, s: TensorSharding, t: object, what: str, op: Operation | None
    ) -> None:
        key = (id(s), id(t))  # both held by the IR for the whole run: ids stay theirs
        if key not in self.seen:
            check_sharding(module, s, t, what, op, self.meshes)
            self.seen.add(key)


def verify_module(
    module: Module, ops: list[Operation] | None = None, dynamic: bool = False
) -> None:
    """Check the module's structure and every sharding on it (`ops`: `list(module.walk())`,
    when the caller has it); `dynamic`: accept dynamic dims outside shard_map regions."""
    meshes = module.meshes
    if module.op.name != "builtin.module":
        raise VerificationError("the top-level op must be builtin.module")
    for op in module.body.ops:
        if op.name == "func.func":
            _verify_func(module, op, meshes)
    all_ops = list(module.walk()) if ops is None else ops
    _scan(module, all_ops, _Checked(meshes), dynamic)


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


def _verify_manual(module: Module, op: Operation, meshes: dict[str, Mesh]) -> None:
    loc = module.resolve_loc(op.loc)
    view = ManualComputation(op)
    in_list = view.in_shardings
    out_list = view.out_shardings
    if len(in_list) != len(op.operands):
        raise count_mismatch(
            "sdy.manual_computation in_shardings", len(in_list), "shardings",
            len(op.operands), "operands", cls=VerificationError, location=loc,
        )
    if len(out_list) != len(op.results):
        raise count_mismatch(
            "sdy.manual_computation out_shardings", len(out_list), "shardings",
            len(op.results), "results", cls=VerificationError, location=loc,
        )
    manual = view.manual_axes
    dup = sorted({a for a in manual if manual.count(a) > 1})
    if dup:
        raise duplicate_axis(
            _axes(dup), given=f"sdy.manual_computation manual_axes={{{_axes(list(manual))}}}",
            hint="list each manual axis once", cls=VerificationError, location=loc,
        )
    if manual:
        for s in in_list + out_list:
            mesh = resolve_mesh(module, s, meshes)
            for a in manual:
                if a not in mesh.axis_sizes:
                    raise unknown_axis(
                        a, mesh.body(), mesh.axis_names,
                        given="sdy.manual_computation manual_axes", cls=VerificationError,
                        location=loc,
                    )
    for i, (s, v) in enumerate(zip(in_list, op.operands, strict=True)):
        check_sharding(module, s, v.type, f"sdy.manual_computation in_shardings[{i}]", op, meshes)
    for i, (s, v) in enumerate(zip(out_list, op.results, strict=True)):
        check_sharding(module, s, v.type, f"sdy.manual_computation out_shardings[{i}]", op, meshes)


def _axes(names: list[str]) -> str:
    return ", ".join(f'"{a}"' for a in names)


# ---------------------------------------------------------------------------------------------
# What Shardy's propagation refuses: shardc refuses it too, with a reason


def verify_propagatable(module: Module, ops: list[Operation] | None = None) -> None:
    """Reject what Shardy's pipeline rejects: dynamic dims (shardc's propagation alone accepts
    them outside shard_map regions: `verify_module(..., dynamic=True)`), tuples, recursive
    calls, sharding groups whose members differ in shape or sit on both sides of a manual
    computation."""
    _scan(module, list(module.walk()) if ops is None else ops, None)


def _scan(
    module: Module, ops: list[Operation], checked: _Checked | None, dynamic: bool = False
) -> None:
    """One pass over `ops`: every sharding on an op (with `checked`: errors at once), then what
    `verify_propagatable` rejects (its errors after every sharding was checked; with `dynamic`,
    a dynamic dim only inside a shard_map region)."""
    groups: dict[str, list[tuple[Value, Operation]]] = {}
    static: set[int] = set()  # ids of the types looked at (parsed types are shared objects)
    not_static: tuple[object, Operation] | None = None  # the first type refused, and its op
    calls: list[Operation] = []
    seen = checked.seen if checked is not None else None
    for op in ops:
        name = op.name
        for r in op.results:
            t = r.type
            s = r.sharding
            if s is not None and seen is not None and (id(s), id(t)) not in seen:
                assert checked is not None
                checked.check(module, s, t, f"{name} result {r.index}", op)
            if id(t) not in static:
                if _is_static_tensor(t):
                    static.add(id(t))
                elif not_static is None and not (dynamic and _dynamic_allowed(t, op)):
                    not_static = (t, op)
        if name in _SPECIAL:
            if checked is not None:
                if name in ("sdy.sharding_constraint", "sdy.reshard"):
                    sc = ShardingConstraint(op).sharding
                    checked.check(module, sc, op.results[0].type, f"{name} sharding", op)
                elif name == MANUAL_COMPUTATION:
                    _verify_manual(module, op, checked.meshes)
            if name == "sdy.sharding_group":
                gid = str(op.properties.get("group_id", "0")).split(":")[0].strip()
                groups.setdefault(gid, []).append((op.operands[0], op))
            elif name == CALL:
                calls.append(op)
        if op.regions and not_static is None:
            for region in op.regions:
                # (a func's entry arguments: the others' are not looked at)
                blocks = region.blocks if name != "func.func" else region.blocks[:1]
                for block in blocks:
                    for a in block.args:
                        if id(a.type) not in static:
                            if _is_static_tensor(a.type):
                                static.add(id(a.type))
                            elif not_static is None and not (
                                dynamic and _dynamic_allowed(a.type, op, inside=True)
                            ):
                                not_static = (a.type, op)
    if not_static is not None:
        _check_static_tensor(not_static[0], not_static[1], module, dynamic)
    for gid, members in groups.items():
        _check_group(module, gid, members)
    if calls:  # (without a call there is no call graph to have a cycle)
        _check_no_recursion(module, calls)


# the ops `_scan` looks at by name
_SPECIAL = frozenset({
    "sdy.sharding_constraint", "sdy.reshard", MANUAL_COMPUTATION, "sdy.sharding_group",
    CALL,
})  # fmt: skip


def _is_static_tensor(t: object) -> bool:
    """What `_check_static_tensor` accepts."""
    if isinstance(t, TensorType):
        return all(d >= 0 for d in t.shape)
    return not (isinstance(t, OpaqueType) and t.text.startswith("tuple<"))


def _dynamic_allowed(t: object, op: Operation, inside: bool = False) -> bool:
    """A dynamic tensor type outside every shard_map region (`inside`: `t` is a block argument
    of `op`'s regions)."""
    if not isinstance(t, TensorType):
        return False  # (a tuple)
    if inside and op.name == MANUAL_COMPUTATION:
        return False
    return op.name != MANUAL_COMPUTATION and _enclosing_manual(op) is None


def _check_static_tensor(t: object, op: Operation, module: Module, dynamic: bool) -> None:
    if isinstance(t, TensorType):
        if any(d < 0 for d in t.shape):
            if dynamic:  # (refused only inside a shard_map region)
                raise unsupported(
                    f"{t} has a dynamic dimension", "a shard_map region", given=op.name,
                    why="its local shapes need static dims", cls=VerificationError,
                    location=module.resolve_loc(op.loc),
                    hint="lower with static shapes (jax.jit specializes on concrete shapes)",
                )
            raise unsupported(
                f"{t} has a dynamic dimension",
                "the pin export, the communication plan and auto sharding", given=op.name,
                why="they need static shapes; propagation alone shards the static dims around "
                "it", cls=VerificationError, location=module.resolve_loc(op.loc),
                hint="lower with static shapes (jax.jit specializes on concrete shapes), or "
                "propagate without --pin, --auto or plan",
            )
    elif isinstance(t, OpaqueType) and t.text.startswith("tuple<"):
        raise unsupported(
            f"tuple type {t}", "sharding propagation (shardc's, as Shardy's)", given=op.name,
            cls=VerificationError, location=module.resolve_loc(op.loc),
            hint="pass the tensors separately (JAX flattens pytrees this way)",
        )


def _enclosing_manual(op: Operation) -> Operation | None:
    cur = op.parent_op
    while cur is not None and cur.name != MANUAL_COMPUTATION:
        cur = cur.parent_op
    return cur


def _value_scope(v: Value) -> Operation | None:
    """The innermost manual computation a value lives in (its defining op's or its block's)."""
    if isinstance(v, OpResult):
        return _enclosing_manual(v.owner)
    if not isinstance(v, BlockArgument) or v.block.parent is None:
        return None
    op = v.block.parent.parent
    if op is None:
        return None
    return op if op.name == MANUAL_COMPUTATION else _enclosing_manual(op)


def _check_group(module: Module, gid: str, members: list[tuple[Value, Operation]]) -> None:
    first, first_op = members[0]
    scope = _value_scope(first)
    for v, op in members[1:]:
        loc = module.resolve_loc(op.loc)
        if _value_scope(v) is not scope:
            raise VerificationError(
                f"sdy.sharding_group {gid}: its members are on both sides of a "
                "sdy.manual_computation boundary (a group may not cross it)",
                location=loc,
                hint="group values inside one manual computation, or outside all of them",
            )
        if str(v.type) != str(first.type):
            raise VerificationError(
                f"sdy.sharding_group {gid}: its members must have one shape: {v.type} here, "
                f"{first.type} at {module.resolve_loc(first_op.loc) or 'its first member'}",
                location=loc,
                hint="group only values of the same shape",
            )


def _check_no_recursion(module: Module, call_ops: list[Operation] | None = None) -> None:
    """A call graph with a cycle cannot be propagated (Shardy inlines or clones callees).
    `call_ops`: every `func.call` of the module in pre-order, when the caller has them."""
    funcs = module.funcs
    calls: dict[str, list[tuple[str, Operation]]] = {}
    if call_ops is None:
        for name, f in funcs.items():
            calls[name] = [(callee_name(op), op) for op in f.walk() if op.name == CALL]
    else:
        for op in call_ops:
            func = op.parent_op
            while func is not None and func.name != "func.func":
                func = func.parent_op
            if func is not None:
                calls.setdefault(symbol_name(func), []).append((callee_name(op), op))
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in funcs:
        if state.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            name, i = stack.pop()
            edges = calls.get(name, [])
            if i >= len(edges):
                state[name] = 2
                continue
            stack.append((name, i + 1))
            callee, call = edges[i]
            if callee not in funcs:
                continue
            if state.get(callee) == 1:
                path = [n for n, _ in stack] + [callee]
                cycle = path[path.index(callee):]
                raise VerificationError(
                    "recursive call: " + " -> ".join(f"@{n}" for n in cycle) + " (sharding "
                    "propagation needs an acyclic call graph)",
                    location=module.resolve_loc(call.loc),
                    hint="unroll the recursion or express it as a stablehlo.while loop",
                )
            if not state.get(callee):
                state[callee] = 1
                stack.append((callee, 0))
