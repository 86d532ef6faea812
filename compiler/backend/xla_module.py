"""The module XLA compiles for `shardc.jit`, written onto a copy of JAX's own module.

The `pin` export is JAX's lowered module with shardc's decisions on it: `sdy.sharding`s at the
func boundaries, constraints inserted after values (pins, the reshards before calls and after
redirected reads), operands rewired to those constraints, changed attributes on a few ops (an
existing constraint's sharding), the op-level shardings of the ops XLA reads one of. Printing it
and having jaxlib parse it again costs ~0.16 s CPU on a 24-layer Flax train step (3.3 MB of
text). `Origin` records the module as shardc imported it (its ops in walk order, their operands,
attribute texts and func shardings); `build_xla_module` checks that the export is exactly those
ops plus inserted constraints and applies the differences to a copy of JAX's module through
jaxlib's bindings (the same module the text route parses: tests/test_jit_xla_module.py prints
both). Anything else (an op erased, moved or added other than a constraint, an operand count
changed) gives None, and the caller prints the export as before.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from shardc.dialect.ir import BlockArgument, FuncOp, Module, Operation, OpResult, Value
from shardc.dialect.op_views import PER_USE
from shardc.dialect.shardings import ShardingPerValue, TensorSharding
from shardc.dialect.types import TensorType
from shardc.passes.pin import KEEPS_OP_SHARDING, xla_reads_op_sharding


@dataclass
class Origin:
    """JAX's lowered module (jaxlib) and shardc's import of it, before any pass ran."""

    jax_module: Any
    ops: list[Operation]  # walk order (pre-order), the module op first
    parents: list[Any]  # each op's block
    operands: list[Value]  # every op's operands, one after another (one list, not one per op)
    offsets: array  # op k's operands: operands[offsets[k]:offsets[k + 1]]
    properties: list[str]
    attributes: list[str]
    # ops whose `sdy.sharding` the writer rewrites (ops XLA reads one of, ops whose results
    # carried one at import) and funcs (their boundary shardings), by index
    special: set[int]
    func_shardings: dict[int, tuple[tuple[Any, ...], tuple[Any, ...]]]


def record_origin(module: Module, jax_module: Any, locate: bool = False) -> Origin:
    """What `build_xla_module` compares the export with: `module` freshly imported from
    `jax_module`'s print (call it before any pass changes `module`); `locate`: also give
    `module` JAX's locations (`attach_jax_locations`, in the same walk)."""
    ops = list(module.walk())
    func_shardings: dict[int, tuple[tuple[Any, ...], tuple[Any, ...]]] = {}
    special: set[int] = set()
    parents = []
    operands: list[Value] = []
    offsets = array("l", [0])
    properties = []
    attributes = []
    for k, op in enumerate(ops):  # (one loop: a pass over 20k ops costs a millisecond each)
        parents.append(op.parent)
        operands += op.operands
        offsets.append(len(operands))
        properties.append(op.properties.body())
        attrs = op.attributes.body()
        attributes.append(attrs)
        if "sdy.sharding_rule" in attrs:
            special.add(k)
        results = op.results
        if results and (results[0].sharding is not None or op.name in KEEPS_OP_SHARDING):
            special.add(k)
        if isinstance(op, FuncOp):
            func_shardings[k] = _func_shardings(op)
            special.add(k)
        if locate:
            op.set_loc_alias(k)
            if op.regions:
                _locate_block_args(op, k)
    if locate:
        module.loc_aliases = JaxLocations(jax_module)
    return Origin(
        jax_module, ops, parents, operands, offsets, properties, attributes, special,
        func_shardings,
    )


def _func_shardings(func: FuncOp) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    args = func.regions[0].entry.args if func.regions and func.regions[0].blocks else []
    return tuple(a.sharding for a in args), tuple(func.result_shardings or ())


@dataclass
class _Plan:
    """The differences between the export and its origin, found without touching jaxlib."""

    inserted: list[tuple[Operation, Operation | None]]  # constraint, the op before it (None: first)
    operands: list[tuple[int, int, Value]]  # op index, operand index, new operand
    attributes: list[int]  # ops whose attribute texts changed
    funcs: list[int]  # funcs whose boundary shardings changed
    op_shardings: list[int]  # ops whose `sdy.sharding` XLA reads, or that lost theirs


def _plan(origin: Origin, export: Module) -> _Plan | None:
    ops, parents, operands, offsets = origin.ops, origin.parents, origin.operands, origin.offsets
    props, attrs, special = origin.properties, origin.attributes, origin.special
    n = len(ops)
    if not n or export.op is not ops[0]:
        return None
    if export.op.properties.body() != props[0] or export.op.attributes.body() != attrs[0]:
        return None  # the module's own attributes: not written here
    plan = _Plan([], [], [], [], [])
    k = 1
    # blocks in walk order (pre-order: an op, then its regions' blocks), each op with the one
    # before it in its block
    stack: list[Any] = [iter(b.ops) for r in reversed(export.op.regions) for b in reversed(r.blocks)]
    before: list[Operation | None] = [None] * len(stack)
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            before.pop()
            continue
        prev = before[-1]
        before[-1] = op
        if k < n and op is ops[k]:
            if op.parent is not parents[k]:
                return None  # moved to another block (even where the walk order is the same)
            original = operands[offsets[k] : offsets[k + 1]]
            if op.operands != original:
                current = op.operands
                if len(current) != len(original):
                    return None
                plan.operands.extend(
                    (k, j, v) for j, v in enumerate(current) if v is not original[j]
                )
            changed = op.properties.body() != props[k] or op.attributes.body() != attrs[k]
            if changed:
                plan.attributes.append(k)
            if k in special or changed:
                if isinstance(op, FuncOp):
                    if _func_shardings(op) != origin.func_shardings.get(k):
                        plan.funcs.append(k)
                elif op.results:
                    plan.op_shardings.append(k)
            k += 1
        elif (
            op.name == "sdy.sharding_constraint"
            and not op.regions
            and len(op.operands) == 1
            and len(op.results) == 1
        ):
            plan.inserted.append((op, prev))
        else:
            return None  # an op shardc added or changed otherwise: print the export
        if op.regions:
            for r in reversed(op.regions):
                for b in reversed(r.blocks):
                    stack.append(iter(b.ops))
                    before.append(None)
    return plan if k == n else None


def build_xla_module(origin: Origin, export: Module) -> Any | None:
    """A jaxlib module equal to the export with the op-level shardings XLA drops left out (what
    `xla_form.text_for_xla` prints), built on a copy of JAX's module; None where the export is not
    JAX's module plus inserted constraints (then print it)."""
    plan = _plan(origin, export)
    if plan is None:
        return None
    from jaxlib.mlir import ir

    jax_module = origin.jax_module
    with jax_module.context, ir.Location.unknown():
        module = ir.Module.create(jax_module.operation.location)
        attrs = jax_module.operation.attributes
        for name in attrs.keys():
            module.operation.attributes[name] = attrs[name]
        with ir.InsertionPoint(module.body):
            for op in jax_module.body.operations:
                op.clone()
        jops: list[Any] = []

        def visit(o: Any) -> Any:
            jops.append(o)
            return ir.WalkResult.ADVANCE

        for op in module.body.operations:
            op.walk(visit, ir.WalkOrder.PRE_ORDER)
        if len(jops) != len(origin.ops) - 1:  # the module op itself is not walked
            return None
        writer = _Writer(origin, jops)
        if not writer.names_match():
            return None
        try:
            writer.apply(plan)
        except _Unwritable:
            return None
        return module


class _Writer:
    """Applies a `_Plan` to the copy of JAX's module (its ops `jops`, the origin's order)."""

    def __init__(self, origin: Origin, jops: list[Any]):
        self.origin = origin
        self.jops = [None, *jops]  # index k: origin.ops[k] (0: the module, never edited)
        self.index: dict[int, int] | None = None
        self.made: dict[int, Any] = {}  # id(inserted constraint) -> its jaxlib op
        self.parsed: dict[str, Any] = {}
        self.shardings: dict[TensorSharding, dict[str, Any]] = {}

    def names_match(self) -> bool:
        """Every op of the copy is the one shardc's import has at its index."""
        ops, jops = self.origin.ops, self.jops
        return all(jops[k].name == ops[k].name for k in range(1, len(ops)))

    def k(self, op: Operation) -> int:
        if self.index is None:
            self.index = {id(o): k for k, o in enumerate(self.origin.ops)}
        return self.index[id(op)]

    def jop(self, op: Operation) -> Any:
        made = self.made.get(id(op))
        return made if made is not None else self.jops[self.k(op)]

    def value(self, v: Value) -> Any:
        if isinstance(v, OpResult):
            return self.jop(v.owner).results[v.index]
        assert isinstance(v, BlockArgument)
        return self.block(v.block).arguments[v.index]

    def block(self, block: Any) -> Any:
        region = block.parent
        owner = region.parent
        ri = owner.regions.index(region)
        bi = region.blocks.index(block)
        return self.jop(owner).regions[ri].blocks[bi]

    def attr(self, text: str) -> Any:
        from jaxlib.mlir import ir

        got = self.parsed.get(text)
        if got is None:
            got = self.parsed[text] = ir.Attribute.parse(text)
        return got

    def apply(self, plan: _Plan) -> None:
        from jaxlib.mlir import ir

        for c, before in plan.inserted:
            v = self.value(c.operands[0])
            if before is None:
                point = ir.InsertionPoint.at_block_begin(self.block(c.parent))
            else:
                point = ir.InsertionPoint.after(self.jop(before))
            self.made[id(c)] = ir.Operation.create(
                "sdy.sharding_constraint", results=[v.type], operands=[v],
                attributes=self.constraint_attributes(c), ip=point,
            )
        for k, j, v in plan.operands:
            self.jops[k].operands[j] = self.value(v)
        for k in plan.attributes:
            self.rewrite_attributes(k)
        for k in plan.funcs:
            self.rewrite_func(k)
        for k in plan.op_shardings:
            self.rewrite_op_sharding(k)

    def constraint_attributes(self, c: Operation) -> dict[str, Any]:
        """An inserted constraint's attributes (its sharding, and any other it has)."""
        sharding = c.properties.get("sharding")
        attrs = c.attributes
        # (shardc's reader-only mark is no attribute of XLA's: it stays out)
        plain = not attrs or (len(attrs) == 1 and PER_USE in attrs)
        if isinstance(sharding, TensorSharding) and len(c.properties) == 1 and plain:
            got = self.shardings.get(sharding)
            if got is None:
                got = self.shardings[sharding] = {"sharding": self.attr(str(sharding))}
            return got
        entries: dict[str, Any] = {}
        for text in (c.properties.body(), attrs.body()):
            if text:
                d = self.attr("{" + text + "}")
                entries.update({d[i].name: d[i].attr for i in range(len(d))})
        entries.pop(PER_USE, None)
        return entries

    def rewrite_attributes(self, k: int) -> None:
        """The op's properties and attributes as the export has them now."""
        op, jop = self.origin.ops[k], self.jops[k]
        if isinstance(op, FuncOp):
            # a func's properties print its boundary shardings (rewrite_func) but compare
            # without them; anything else changed on a func is not written here
            raise _Unwritable
        old = [self.origin.properties[k], self.origin.attributes[k]]
        new = [op.properties.body(), op.attributes.body()]
        old_names = {n for text in old if text for n in self._names(text)}
        entries: dict[str, Any] = {}
        for text in new:
            if text:
                d = self.attr("{" + text + "}")
                entries.update({d[i].name: d[i].attr for i in range(len(d))})
        for name in old_names - set(entries):
            del jop.attributes[name]
        for name, value in entries.items():
            jop.attributes[name] = value

    def _names(self, text: str) -> list[str]:
        d = self.attr("{" + text + "}")
        return [d[i].name for i in range(len(d))]

    def rewrite_func(self, k: int) -> None:
        """`sdy.sharding` in the func's `arg_attrs` / `res_attrs` as the export has them."""
        from jaxlib.mlir import ir

        op, jop = self.origin.ops[k], self.jops[k]
        args, results = _func_shardings(op)  # type: ignore[arg-type]
        for key, shardings in (("arg_attrs", args), ("res_attrs", results)):
            old = jop.attributes[key] if key in jop.attributes else None
            if old is None and all(s is None for s in shardings):
                continue
            dicts = []
            for i, s in enumerate(shardings):
                entries: dict[str, Any] = {}
                if old is not None:
                    d = ir.DictAttr(old[i])
                    entries = {d[j].name: d[j].attr for j in range(len(d))}
                entries.pop("sdy.sharding", None)
                if s is not None:
                    entries["sdy.sharding"] = self.attr(str(s))
                dicts.append(ir.DictAttr.get(entries))
            jop.attributes[key] = ir.ArrayAttr.get(dicts)

    def rewrite_op_sharding(self, k: int) -> None:
        """The op-level `sdy.sharding` `xla_form.text_for_xla` prints: the results' shardings on the
        ops XLA reads it of, none on every other op (JAX's own, if it wrote one, is dropped)."""
        op, jop = self.origin.ops[k], self.jops[k]
        keep = xla_reads_op_sharding(op)
        ref = next((r.sharding for r in op.results if r.sharding is not None), None)
        if not keep and ref is None and k not in self.origin.special:
            return  # (an op whose attributes changed: rewrite_attributes wrote them)
        if keep and ref is not None:
            full = tuple(
                r.sharding if r.sharding is not None
                else TensorSharding.open(ref.mesh, r.type.rank if isinstance(r.type, TensorType) else 0)
                for r in op.results
            )
            jop.attributes["sdy.sharding"] = self.attr(str(ShardingPerValue(full)))
        elif "sdy.sharding" in jop.attributes:
            del jop.attributes["sdy.sharding"]


class _Unwritable(Exception):
    """A difference the writer does not apply: print the export instead."""


# ---------------------------------------------------------------------------------------------
# Locations from JAX's module, on demand


_ALIAS = re.compile(r"#loc(\d+)(?:_(\d+)_(\d+)_(\d+))?(?:_n\d+)?")


class JaxLocations(dict):  # type: ignore[type-arg]
    """A module's location aliases read from JAX's module when asked: `#locK` is the location
    of op K (in walk order, the module op 0), `#locK_r_b_i` that of argument i of block b of
    region r of op K, and `<alias>_nJ` the J-th location nested in one of those (JAX's print
    gives every nested location an alias too: `Module.resolve_loc` expands them as it did
    that print's). `shardc.jit` imports JAX's module printed without locations (a fifth of the
    text, and of the print's and the parse's time) and gives each op and block argument such
    an alias (`attach_jax_locations`): only messages, listings and plans read one. Iterating
    (printing with locations) reads them all."""

    def __init__(self, jax_module: Any, entries: dict[str, str] | None = None,
                 jax_ops: list[Any] | None = None):
        super().__init__(entries or {})
        self.jax_module = jax_module
        self._jax_ops = jax_ops

    def __bool__(self) -> bool:
        return True  # (`Module` keeps a table that is not empty, however few were read yet)

    def copy(self) -> JaxLocations:
        """A copy reading the same module (`Module.clone`)."""
        return JaxLocations(self.jax_module, dict(dict.items(self)), self._jax_ops)

    def get(self, alias: str, default: Any = None) -> Any:  # type: ignore[override]
        got = dict.get(self, alias)
        if got is None and self._read(alias):
            got = dict.get(self, alias)
        return default if got is None else got

    def __getitem__(self, alias: str) -> str:
        got = self.get(alias)
        if got is None:
            raise KeyError(alias)
        return got  # type: ignore[no-any-return]

    def __contains__(self, alias: object) -> bool:
        return isinstance(alias, str) and self.get(alias) is not None

    def _read(self, alias: str) -> bool:
        """Read the op's or argument's location `alias` names (and its nested ones)."""
        m = _ALIAS.fullmatch(alias)
        if m is None:
            return False
        ops = self.jax_ops()
        k = int(m.group(1))
        if k >= len(ops):
            return False
        try:
            if m.group(2) is None:
                root, location = f"#loc{k}", ops[k].location
            else:
                r, b, i = int(m.group(2)), int(m.group(3)), int(m.group(4))
                root = f"#loc{k}_{r}_{b}_{i}"
                location = ops[k].regions[r].blocks[b].arguments[i].location
        except IndexError:
            return False
        if dict.__contains__(self, root):
            return False  # (read before: `alias` names no nested location of it)
        text = str(location)
        nested: list[tuple[str, str]] = []
        try:
            body, end = _loc_body(text, 4, root, nested)
            if not (text.startswith("loc(") and end == len(text) - 1):
                raise ValueError(text)
        except ValueError:
            nested, body = [], text[4:-1]  # a form not read here: kept whole, inline
        for name, value in nested:  # (each defined before the location using it)
            dict.__setitem__(self, name, value)
        dict.__setitem__(self, root, f"loc({body})")
        return True

    def jax_ops(self) -> list[Any]:
        """JAX's module's ops in walk order (pre-order), the module op first."""
        if self._jax_ops is None:
            from jaxlib.mlir import ir

            ops: list[Any] = [self.jax_module.operation]

            def visit(o: Any) -> Any:
                ops.append(o)
                return ir.WalkResult.ADVANCE

            for op in self.jax_module.body.operations:
                op.walk(visit, ir.WalkOrder.PRE_ORDER)
            self._jax_ops = ops
        return self._jax_ops

    def _read_all(self) -> None:
        for k, op in enumerate(self.jax_ops()):
            self.get(f"#loc{k}")
            for r, region in enumerate(op.regions):
                for b, block in enumerate(region.blocks):
                    for i in range(len(block.arguments)):
                        self.get(f"#loc{k}_{r}_{b}_{i}")

    def __iter__(self) -> Iterator[str]:
        self._read_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._read_all()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._read_all()
        return dict.keys(self)

    def items(self) -> Any:
        self._read_all()
        return dict.items(self)

    def values(self) -> Any:
        self._read_all()
        return dict.values(self)


def attach_jax_locations(module: Module, jax_module: Any) -> None:
    """Give `module`, imported from `jax_module`'s print without locations, JAX's locations:
    each op and block argument an alias that `JaxLocations` reads from `jax_module` when asked
    (`record_origin(..., locate=True)` does it in its own walk)."""
    for k, op in enumerate(module.walk()):
        op.set_loc_alias(k)
        if op.regions:
            _locate_block_args(op, k)
    module.loc_aliases = JaxLocations(jax_module)


def _locate_block_args(op: Operation, k: int) -> None:
    for r, region in enumerate(op.regions):
        for b, block in enumerate(region.blocks):
            for i, a in enumerate(block.args):
                a.loc = f"loc(#loc{k}_{r}_{b}_{i})"


_FILE_LOC = re.compile(r'"[^"]*":\d+:\d+(?: to (?:\d+)?:\d+)?')


def _loc_body(s: str, i: int, root: str, nested: list[tuple[str, str]]) -> tuple[str, int]:
    """The location at `s[i:]` as JAX's print writes it, each location nested in it an alias
    (`<root>_nJ`, appended to `nested` with its `loc(...)`), and where it ends."""

    def alias(j: int) -> tuple[str, int]:
        body, end = _loc_body(s, j, root, nested)
        name = f"{root}_n{len(nested)}"
        nested.append((name, f"loc({body})"))
        return name, end

    if s.startswith('"', i):
        m = _FILE_LOC.match(s, i)
        if m:
            return m.group(), m.end()
        end = s.find('"', i + 1)
        if end < 0:
            raise ValueError(s)
        name, j = s[i : end + 1], end + 1
        if not s.startswith("(", j):
            return name, j
        child, j = alias(j + 1)
        if not s.startswith(")", j):
            raise ValueError(s)
        return f"{name}({child})", j + 1
    if s.startswith("callsite(", i):
        callee, j = alias(i + 9)
        if not s.startswith(" at ", j):
            raise ValueError(s)
        caller, j = alias(j + 4)
        if not s.startswith(")", j):
            raise ValueError(s)
        return f"callsite({callee} at {caller})", j + 1
    if s.startswith("unknown", i):
        return "unknown", i + 7
    if s.startswith("fused[", i):
        parts = []
        j = i + 6
        while True:
            part, j = alias(j)
            parts.append(part)
            if s.startswith(", ", j):
                j += 2
            elif s.startswith("]", j):
                return f"fused[{', '.join(parts)}]", j + 1
            else:
                raise ValueError(s)
    raise ValueError(s)  # (fused with metadata, opaque locations: kept whole)
