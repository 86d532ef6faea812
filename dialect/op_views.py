"""Typed views of the ops whose sdy attributes shardc interprets: the one way to read and write them.

The importer (`text.absorb_sharding_attrs`) parses every sdy attribute shardc interprets
once, into the frozen objects of `shardings.py`; from then on no pass sees sharding text. A view
is a throw-away wrapper around one `Operation` (no copy, no cache): reading goes to the op's
properties, writing replaces them with new frozen objects.

    from shardc.dialect.op_views import Func, ManualComputation, ShardingConstraint

    for op in module.walk():
        if op.name == "sdy.sharding_constraint":
            s = ShardingConstraint(op).sharding            # TensorSharding
        elif op.name == "sdy.manual_computation":
            m = ManualComputation(op)
            m.in_shardings, m.out_shardings                 # tuple[TensorSharding, ...]
            m.manual_axes, m.free_axes                      # tuple[str, ...] (mesh order)
            m.mesh                                          # the Mesh its shardings name
    f = Func(module.funcs["main"])
    f.arg_sharding(0), f.result_sharding(0)                 # TensorSharding | None
    f.set_result_sharding(0, s)

Where shardings live (and nowhere else):
- a value's own layout: `Value.sharding` (op results and block arguments, func arguments too);
- a func result's: `FuncOp.result_shardings`, read through `Func(op).result_sharding(i)`;
- a constraint's or reshard's target: `ShardingConstraint(op).sharding`;
- a manual computation's in/out shardings and manual axes: `ManualComputation(op)`; a named
  computation's in/out shardings: `NamedComputation(op)`;
- an sdy collective's result sharding: `SdyCollective(op).out_sharding`;
- a mesh: `MeshOp(op).mesh`, or `Module.meshes` for all of them by name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .ir import AttrDict, FuncOp, Module, Operation, OpResult, Value, func_num_results, symbol_name
from .shardings import ManualAxes, Mesh, ShardingPerValue, TensorSharding

SHARDING_CONSTRAINT = "sdy.sharding_constraint"
RESHARD = "sdy.reshard"
# marks a `sdy.sharding_constraint` that reshards a value for its own reader only (automatic
# sharding writes one before each reader that needs another layout): where its operand is a
# data-flow edge target (a call's or a loop's result), the target's other readers keep reading
# the target, unlike a constraint as written, which Shardy sends them through
PER_USE = "shardc.per_use"
MANUAL_COMPUTATION = "sdy.manual_computation"
NAMED_COMPUTATION = "sdy.named_computation"
MESH = "sdy.mesh"
SHARDING_GROUP = "sdy.sharding_group"
FUNC = "func.func"
# sdy's explicit collectives (their `out_sharding` is interpreted; the axes lists stay text)
SDY_COLLECTIVES = (
    "sdy.all_reduce",
    "sdy.all_gather",
    "sdy.all_slice",
    "sdy.reduce_scatter",
    "sdy.all_to_all",
    "sdy.collective_permute",
)

__all__ = [
    "Func",
    "ManualComputation",
    "MeshOp",
    "ShardingConstraint",
    "ShardingGroup",
    "SdyCollective",
    "enclosing_module_op",
    "mesh_of_op",
    "rewrite_shardings",
]


class _View:
    __slots__ = ("op",)
    OP_NAMES: tuple[str, ...] = ()

    def __init__(self, op: Operation):
        if op.name not in self.OP_NAMES:
            raise TypeError(f"{type(self).__name__} is a view of {self.OP_NAMES}, not {op.name}")
        self.op = op


class ShardingConstraint(_View):
    """`sdy.sharding_constraint` or `sdy.reshard`: the sharding its result must have."""

    __slots__ = ()
    OP_NAMES = (SHARDING_CONSTRAINT, RESHARD)

    @property
    def sharding(self) -> TensorSharding:
        return self.op.properties["sharding"]  # type: ignore[no-any-return]

    @sharding.setter
    def sharding(self, value: TensorSharding) -> None:
        self.op.properties["sharding"] = value

    @property
    def is_reshard(self) -> bool:
        return self.op.name == RESHARD

    @property
    def per_use(self) -> bool:
        """Whether the constraint is a reshard for its own reader only (`PER_USE`): on a
        data-flow edge target, the target's other readers do not read through it."""
        return PER_USE in self.op.attributes

    @classmethod
    def create(
        cls, value: Value, sharding: TensorSharding, loc: str | None, per_use: bool = False
    ) -> ShardingConstraint:
        """A new (unplaced) `sdy.sharding_constraint` of `value` to `sharding`; `per_use`
        marks it a reshard for its own reader (`PER_USE`)."""
        op = Operation(
            SHARDING_CONSTRAINT,
            [value],
            [value.type],
            properties=AttrDict(items={"sharding": sharding}),
            loc=loc,
        )
        if per_use:
            op.attributes[PER_USE] = None
        return cls(op)


def constrained_sharding(
    v: Value, *, manual_results: bool = False, reshards: bool = False, own_first: bool = False
) -> TensorSharding | None:
    """The layout `v` is held to: a `sdy.sharding_constraint`'s result, its constraint's; any
    other value, its own sharding. The readers differ in three ways, each a flag:

    - `manual_results`: a `sdy.manual_computation`'s result is held to its out_sharding (what
      the op's users see, as the pad hazards read it; else its own sharding, which the export
      reads);
    - `reshards`: an `sdy.reshard`'s result is held to the reshard's sharding as a constraint's
      is (else its own, which propagation leaves unset);
    - `own_first`: a value that carries a sharding of its own is held to that, whatever made
      it (the plan reads a constraint's result so: its layout once propagated or made explicit,
      which can differ from the constraint's own, e.g. on another mesh)."""
    own = v.sharding
    if (own_first and own is not None) or not isinstance(v, OpResult):
        return own
    name = v.owner.name
    if name == SHARDING_CONSTRAINT or (reshards and name == RESHARD):
        return ShardingConstraint(v.owner).sharding
    if manual_results and name == MANUAL_COMPUTATION:
        outs = ManualComputation(v.owner).out_shardings
        if v.index < len(outs):
            return outs[v.index]
    return own


class _RegionShardings(_View):
    """An op with one body called once: the layouts of its body arguments (`in_shardings`)
    and of its results (`out_shardings`), kept on the op."""

    __slots__ = ()

    @property
    def in_shardings(self) -> tuple[TensorSharding, ...]:
        s = self.op.properties.get("in_shardings")
        return s.shardings if s is not None else ()

    @in_shardings.setter
    def in_shardings(self, value: tuple[TensorSharding, ...]) -> None:
        self.op.properties["in_shardings"] = ShardingPerValue(tuple(value))

    @property
    def out_shardings(self) -> tuple[TensorSharding, ...]:
        s = self.op.properties.get("out_shardings")
        return s.shardings if s is not None else ()

    @out_shardings.setter
    def out_shardings(self, value: tuple[TensorSharding, ...]) -> None:
        self.op.properties["out_shardings"] = ShardingPerValue(tuple(value))


class NamedComputation(_RegionShardings):
    """`sdy.named_computation<"name">`: a named body, propagated through as if inlined (Shardy
    makes one of each call in its import); its in/out shardings are optional."""

    __slots__ = ()
    OP_NAMES = (NAMED_COMPUTATION,)


class ManualComputation(_RegionShardings):
    """`sdy.manual_computation`: in/out shardings, manual axes, and the axes left free."""

    __slots__ = ()
    OP_NAMES = (MANUAL_COMPUTATION,)

    @property
    def manual_axes(self) -> tuple[str, ...]:
        """This region's own manual axes (as written; the import sorts them in mesh order)."""
        a = self.op.properties.get("manual_axes")
        return a.axes if a is not None else ()

    @manual_axes.setter
    def manual_axes(self, value: tuple[str, ...]) -> None:
        self.op.properties["manual_axes"] = ManualAxes(tuple(value))

    @property
    def outer_manual_axes(self) -> tuple[str, ...]:
        """Manual axes bound by the manual computations around this one, outermost first."""
        out: list[str] = []
        cur = self.op.parent_op
        while cur is not None:
            if cur.name == MANUAL_COMPUTATION:
                out[:0] = ManualComputation(cur).manual_axes
            cur = cur.parent_op
        return tuple(out)

    @property
    def mesh(self) -> Mesh | None:
        """The mesh its first in/out sharding names (None when it has none or it is unknown)."""
        for s in (*self.in_shardings, *self.out_shardings):
            return mesh_of_op(self.op, s)
        return None

    @property
    def free_axes(self) -> tuple[str, ...]:
        """Mesh axes neither this region nor an enclosing one makes manual (mesh order)."""
        mesh = self.mesh
        if mesh is None:
            return ()
        bound = {*self.manual_axes, *self.outer_manual_axes}
        return tuple(a for a in mesh.axis_names if a not in bound)


class SdyCollective(_View):
    """`sdy.all_gather`, `sdy.all_reduce`, ...: the sharding of the collective's result."""

    __slots__ = ()
    OP_NAMES = SDY_COLLECTIVES

    @property
    def out_sharding(self) -> TensorSharding | None:
        return self.op.properties.get("out_sharding")  # type: ignore[no-any-return]

    @out_sharding.setter
    def out_sharding(self, value: TensorSharding) -> None:
        self.op.properties["out_sharding"] = value


class Func(_View):
    """`func.func`: argument shardings (on its entry block's arguments) and result shardings."""

    __slots__ = ()
    OP_NAMES = (FUNC,)

    @property
    def name(self) -> str:
        return symbol_name(self.op)

    @property
    def num_results(self) -> int:
        return func_num_results(self.op)

    @property
    def is_private(self) -> bool:
        """Declared `private`: only the module's own calls reach it."""
        return '"private"' in str(self.op.properties.get("sym_visibility", ""))

    def is_entry(self, called: Collection[str]) -> bool:
        """An entry of the module: public and called by none of its funcs (`called`: the
        names `func.call`s name; `data_flow.called_funcs`)."""
        return self.name not in called and not self.is_private

    def arg_sharding(self, index: int) -> TensorSharding | None:
        return self.op.regions[0].entry.args[index].sharding

    def set_arg_sharding(self, index: int, sharding: TensorSharding | None) -> None:
        self.op.regions[0].entry.args[index].sharding = sharding

    def result_sharding(self, index: int) -> TensorSharding | None:
        op = self.op
        assert isinstance(op, FuncOp)
        shardings = op.result_shardings
        return shardings[index] if index < len(shardings) else None

    def set_result_sharding(self, index: int, sharding: TensorSharding | None) -> None:
        op = self.op
        assert isinstance(op, FuncOp)
        shardings = op.result_shardings
        if index >= len(shardings):
            shardings.extend([None] * (index + 1 - len(shardings)))
        shardings[index] = sharding

    @property
    def result_shardings(self) -> tuple[TensorSharding | None, ...]:
        return tuple(self.result_sharding(i) for i in range(self.num_results))


class MeshOp(_View):
    """`sdy.mesh @name = <[...]>`: its symbol and `Mesh`."""

    __slots__ = ()
    OP_NAMES = (MESH,)

    @property
    def name(self) -> str:
        return symbol_name(self.op)

    @property
    def mesh(self) -> Mesh:
        return self.op.properties["mesh"]  # type: ignore[no-any-return]


class ShardingGroup(_View):
    """`sdy.sharding_group %v group_id=N`: values of one group get one sharding."""

    __slots__ = ()
    OP_NAMES = (SHARDING_GROUP,)

    @property
    def group_id(self) -> int:
        return int(str(self.op.properties.get("group_id", "0")).split(":")[0].strip())


def enclosing_module_op(op: Operation) -> Operation | None:
    """The `builtin.module` op `op` lives in (None for a detached op)."""
    cur: Operation | None = op
    while cur is not None and cur.name != "builtin.module":
        cur = cur.parent_op
    return cur


def mesh_of_op(op: Operation, sharding: TensorSharding) -> Mesh | None:
    """The mesh `sharding` (on `op`) names: inline, or the module's `sdy.mesh` of that name."""
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    top = enclosing_module_op(op)
    if top is None:
        return None
    for m in top.regions[0].entry.ops:
        if m.name == MESH and symbol_name(m) == sharding.mesh:
            return MeshOp(m).mesh
    return None


def rewrite_shardings(
    module: Module,
    fn: Callable[[TensorSharding], TensorSharding],
    ops: list[Operation] | None = None,
) -> None:
    """Replace every sharding of `module`, wherever it lives (see above), by `fn` of it
    (`ops`: `list(module.walk())`, when the caller has it)."""

    def new(s: TensorSharding | None) -> TensorSharding | None:
        return None if s is None else fn(s)

    for op in module.walk() if ops is None else ops:
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    if a.sharding is not None:
                        a.sharding = fn(a.sharding)
        for r in op.results:
            if r.sharding is not None:
                r.sharding = fn(r.sharding)
        name = op.name
        if name == FUNC:
            assert isinstance(op, FuncOp)
            op.result_shardings = [new(s) for s in op.result_shardings]
        elif name in ShardingConstraint.OP_NAMES:
            c = ShardingConstraint(op)
            c.sharding = fn(c.sharding)
        elif name in SDY_COLLECTIVES:
            coll = SdyCollective(op)
            out = coll.out_sharding
            if out is not None:
                coll.out_sharding = fn(out)
        elif name == MANUAL_COMPUTATION:
            m = ManualComputation(op)
            if "in_shardings" in op.properties:
                m.in_shardings = tuple(fn(s) for s in m.in_shardings)
            if "out_shardings" in op.properties:
                m.out_shardings = tuple(fn(s) for s in m.out_shardings)
