"""The module XLA is handed, and what XLA's own propagation makes of it.

XLA's import keeps a module's boundary shardings, constraints, manual computations and the
op-level shardings of a few ops (`passes.pin.KEEPS_OP_SHARDING`), then runs Shardy's
`sdy-propagation-pipeline` to derive every other value's layout (docs/xla_boundary.md §1).
`ShardyOracle` runs that same pipeline through jaxlib on the module XLA would get and reads each
op result's sharding back, by the op's walk index: the answer the `pin` export (passes/pin.py)
compares shardc's layout with, to pin only what XLA would lay out otherwise.

XLA's Shardy does not run on the module as handed over: it runs on that module converted to HLO
and back (scalar-to-size-1 broadcasts become reshapes, `chlo` ops expand, constants and iotas
are rebuilt, ops come back in HLO's order), and Shardy's choices where two layouts conflict
depend on that form (on an FSDP LLaMA step, 6 of its 30 dots). So the oracle hands its copy
through the same conversion first (`through_hlo`) and reads the layouts of the converted module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shardc.backend import mlir_bridge
from shardc.backend.exporter import export_text
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module, Operation
from shardc.dialect.op_views import PER_USE
from shardc.dialect.sharding_syntax import (
    parse_mesh,
    parse_sharding_per_value,
    parse_tensor_sharding,
)
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType
from shardc.passes.pin import (
    WRITTEN_OPS,
    Key,
    XlaLayouts,
    outermost,
    sharding_key,
    xla_reads_op_sharding,
)
from shardc.passes.propagation.unit_builder import dead_ops

PIPELINE = "builtin.module(sdy-propagation-pipeline)"
TAG = "shardc.k"  # the walk index of an op, on the copy the pipeline runs on
# what the HLO conversion keeps of an op's own attributes: its frontend attributes
FRONTEND = "mhlo.frontend_attributes"
# custom calls that carry `sdy` content through HLO and that `through_hlo` cannot bring back
# (jaxlib registers only the attribute import of XLA's round trip): a module with one is asked
# as written
_SDY_CALL_PREFIXES = ("xla.sdy.", "local_xla.sdy.")
# ops whose shardings the oracle does not read (XLA keeps what they say, or they have none)
_UNSEEN = object()
_UNREAD = frozenset({"sdy.manual_computation", "sdy.sharding_constraint", "sdy.reshard"})


def text_for_xla(module: Module) -> str:
    """The generic text of an exported module without the op-level shardings XLA drops on
    import (it keeps boundaries, constraints, manual computations, custom rules and the ops of
    `KEEPS_OP_SHARDING`): what XLA makes of the export, with a third less text to parse; with
    the module's locations."""
    saved = []
    marked = []
    for op in module.walk():
        if PER_USE in op.attributes:  # (shardc's reader-only mark: no attribute of XLA's)
            marked.append(op)
            op.attributes.pop(PER_USE)
        if not op.results or xla_reads_op_sharding(op):
            continue
        for r in op.results:
            if r.sharding is not None:
                saved.append((r, r.sharding))
                r.sharding = None
    try:
        # with the locations: XLA's op names and source lines (profiles, HLO dumps) come
        # from them
        return export_text(module, "generic", with_locs=True)
    finally:
        for r, s in saved:
            r.sharding = s
        for op in marked:
            op.attributes[PER_USE] = None


def parse_for_xla(module: Module) -> Any:
    """`text_for_xla(module)` as a jaxlib `ir.Module`."""
    return mlir_bridge.parse_module(text_for_xla(module), "<shardc export>", checked=True)


class ShardyOracle:
    """`passes.pin.XlaOracle` through jaxlib: `build(module)` gives the jaxlib module XLA would
    be handed for the export (`parse_for_xla` by default); the pipeline runs on a copy of it.
    `last` keeps the module of the latest call, for a caller that compiles it unchanged."""

    def __init__(
        self,
        build: Callable[[Module], Any] | None = None,
        speculate: Callable[[Module, Any], None] | None = None,
        keep_first: bool = False,
        round_trip: bool = False,
    ):
        self.build = build or parse_for_xla
        # ask Shardy about the module as XLA's import makes it (`through_hlo`), not as written
        self.round_trip = round_trip
        # walk index -> the `sdy.sharding` text of each copy of the op, of the latest call
        self.texts: dict[int, list[str]] = {}
        # told of the first module built (the export as written, no pin yet) once the oracle
        # has its own copy: a caller may start XLA's compile of it while Shardy runs here
        self.speculate = speculate
        self.last: Any = None
        # with `keep_first`: the first call's copy once Shardy ran on it (XLA's own layout of
        # the module as written, before any pin), for `first_layout_text`
        self.keep_first = keep_first
        self.first: Any = None
        self.derived: Any = None  # with `keep_first`: the latest call's copy, likewise
        self._parsed: dict[str, tuple[Key, ...]] = {}
        self._one: dict[str, object] = {}

    def __call__(
        self, module: Module, wanted: set[int], dead: set[int], rules: dict[int, str]
    ) -> XlaLayouts:
        from jaxlib.mlir import ir, passmanager

        jmodule = self.build(module)
        self.last = jmodule
        names = [op.name for op in module.walk()]
        with jmodule.context, ir.Location.unknown():
            copy = jmodule.operation.clone()
        if self.speculate is not None:
            speculate, self.speculate = self.speculate, None
            speculate(module, jmodule)  # (this thread no longer touches `jmodule`)
        with jmodule.context, ir.Location.unknown():
            ops = _walk(copy)
            if len(ops) != len(names) - 1 or any(
                ops[k - 1].name != names[k] for k in wanted if k < len(names)
            ):
                raise ShardcError(
                    "the module handed to XLA does not have the export's ops in its order",
                    hint="report this: shardc cannot check what XLA derives for it",
                )
            renamed = _name_an_entry_main(copy)
            if renamed == "":
                return XlaLayouts()  # no entry XLA could compile: nothing it would derive
            i64 = ir.IntegerType.get_signless(64)
            types: dict[int, list[Any]] = {}
            for k in wanted:
                op = ops[k - 1]
                op.attributes[TAG] = ir.IntegerAttr.get(i64, k)
                if self.round_trip:  # (what finds the op again through HLO)
                    types[k] = [r.type for r in op.results]
                    _tag_frontend(op, k)
            for k, text in rules.items():  # (through HLO, the conversion rewrites these ops)
                ops[k - 1].attributes["sdy.sharding_rule"] = ir.Attribute.parse(text)
            _erase(ops, dead)
            converted = through_hlo(copy) if self.round_trip else None
            target = copy if converted is None else converted
            try:
                passmanager.PassManager.parse(PIPELINE).run(target)
            except Exception as e:  # noqa: BLE001 - jaxlib raises MLIRError with diagnostics
                raise ShardcError(
                    "Shardy's propagation, as XLA runs it, fails on the exported module: "
                    + _diagnostic(e)
                ) from None
            out = self._read(target, None if converted is None else types)
            if self.keep_first:
                if self.first is None:
                    self.first = target
                self.derived = target
        if renamed is not None:
            for table in (out.args, out.outs):
                if "main" in table:
                    table[renamed] = table.pop("main")
        return out

    def first_layout_text(self) -> str | None:
        """With `keep_first`: the module of the first call with every value's layout as XLA's
        own propagation derives it (generic text, locations kept), None before any call."""
        return _asm(self.first)

    def derived_layout_text(self) -> str | None:
        """With `keep_first`: the module of the latest call with every value's layout as XLA
        derives it (after the export's pins, where the latest call was about the export as it
        ends: the layout XLA partitions), generic text with locations; None before any call."""
        return _asm(self.derived)

    def _key_of(self, text: str, meshes: dict[str, Mesh]) -> Key:
        """The key of one tensor sharding's text (parsed once per distinct text)."""
        got = self._one.get(text, _UNSEEN)
        if got is _UNSEEN:
            got = self._one[text] = sharding_key(parse_tensor_sharding(text), meshes)
        return got  # type: ignore[return-value]

    def _read(self, copy: Any, types: dict[int, list[Any]] | None = None) -> XlaLayouts:
        """The layouts of the tagged ops of `copy` once Shardy ran on it. `types` (walk index
        -> result types) when `copy` went through HLO: an op is found by its frontend
        attribute there, and of the ops the conversion made of one (a broadcast that became a
        reshape and a broadcast), the last of its block with the op's result types is read."""
        from jaxlib.mlir import ir

        body = copy.regions[0].blocks[0]
        meshes: dict[str, Mesh] = {}
        for top in body.operations:
            if top.operation.name == "sdy.mesh":
                name = ir.StringAttr(top.attributes["sym_name"]).value
                meshes[name] = parse_mesh(str(top.attributes["mesh"]))
        out = XlaLayouts()
        parsed = self._parsed
        for top in body.operations:
            if top.operation.name == "func.func":
                name = ir.StringAttr(top.attributes["sym_name"]).value
                out.args[name] = self._boundary(top, "arg_attrs", meshes)
                out.outs[name] = self._boundary(top, "res_attrs", meshes)

        last: dict[tuple[Any, int], tuple[Key, ...]] = {}  # (block, k) -> keys, through HLO
        texts: dict[tuple[Any, int], str] = {}

        def visit(op: Any) -> Any:
            attrs = op.attributes
            if types is None:
                if TAG not in attrs:
                    return ir.WalkResult.ADVANCE
                k = ir.IntegerAttr(attrs[TAG]).value
            else:
                tag = _frontend_tag(attrs)
                if tag is None or [r.type for r in op.results] != types.get(tag):
                    return ir.WalkResult.ADVANCE
                k = tag
            if op.name == "sdy.manual_computation":
                out.manuals[k] = (
                    _keys(str(attrs["in_shardings"]), meshes, self._key_of),
                    _keys(str(attrs["out_shardings"]), meshes, self._key_of),
                )
                return ir.WalkResult.ADVANCE
            if op.name in _UNREAD:
                return ir.WalkResult.ADVANCE
            text = ""
            if "sdy.sharding" in attrs:
                text = str(attrs["sdy.sharding"])
                keys = parsed.get(text)
                if keys is None:
                    keys = parsed[text] = _keys(text, meshes, self._key_of)
            elif op.name == "stablehlo.while":
                return ir.WalkResult.ADVANCE  # (no sharding written: nothing to compare)
            else:
                keys = (None,) * len(op.results)  # nothing on any result: replicated
            if types is None:
                out.results.setdefault(k, []).append(keys)
            else:
                last[(op.operation.parent, k)] = keys
                texts[(op.operation.parent, k)] = text
            return ir.WalkResult.ADVANCE

        copy.walk(visit, ir.WalkOrder.PRE_ORDER)
        self.texts = {}
        for where, keys in last.items():
            out.results.setdefault(where[1], []).append(keys)
            self.texts.setdefault(where[1], []).append(texts[where])
        return out

    def _boundary(self, func: Any, key: str, meshes: dict[str, Mesh]) -> tuple[Key, ...]:
        """The keys of a func's argument (`arg_attrs`) or result (`res_attrs`) shardings."""
        from jaxlib.mlir import ir

        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        n = len(ftype.inputs if key == "arg_attrs" else ftype.results)
        if key not in func.attributes:
            return (None,) * n
        attrs = func.attributes[key]
        out: list[Key] = []
        for i in range(n):
            d = ir.DictAttr(attrs[i])
            out.append(self._key_of(str(d["sdy.sharding"]), meshes) if "sdy.sharding" in d else None)
        return tuple(out)


def xla_layouts(module: Module, built: Any = None) -> list[tuple[Operation, int, TensorSharding]]:
    """The layout XLA's own Shardy gives each op result of `module`, a compiled form (the
    `pin` export), on the module through HLO (`through_hlo`): `(op, result index, sharding)`,
    for the plan to predict the layout that runs.

    The export pins every value whose layout Shardy run on the module as written would lay
    out otherwise; where XLA's form of the module still leads Shardy elsewhere (a conflict
    between two layouts resolved the other way), the program that runs has XLA's layout there.
    Left out: ops whose shardings XLA keeps (constraints, manual computations, custom calls,
    ops with a custom rule), values XLA's module no longer has, values whose copies (a callee
    per call site) disagree, and everything where the module cannot go through HLO. `built`:
    the jaxlib module XLA is handed for `module` when the caller has it (the pin export's
    oracle's last module, `ShardyOracle.last`), saving a print and a parse."""
    oracle = ShardyOracle((lambda _: built) if built is not None else None, round_trip=True)
    ops = list(module.walk())
    gone = dead_ops(module, ops, xla=True)
    wanted = {
        k
        for k, op in enumerate(ops)
        if op.results
        and id(op) not in gone
        and op.name not in WRITTEN_OPS
        and not xla_reads_op_sharding(op)
        and any(isinstance(r.type, TensorType) for r in op.results)
    }
    if not wanted:
        return []
    oracle(module, wanted, outermost(ops, gone), {})
    meshes = dict(module.meshes)
    fallback = next((name for name, mesh in meshes.items() if mesh.axes), None)
    out = []
    for k, copies in oracle.texts.items():
        if len(set(copies)) != 1:
            continue
        op = ops[k]
        for i, s in enumerate(_per_value(copies[0], op, fallback)):
            if s is None or (isinstance(s.mesh, str) and s.mesh not in meshes):
                continue
            out.append((op, i, s))
    return out


def _per_value(text: str, op: Operation, mesh: str | None) -> list[TensorSharding | None]:
    """The shardings of a `#sdy.sharding_per_value<...>` text, one per result of `op`; "" (no
    sharding: replicated) gives each result a replicated one on `mesh`."""
    if text:
        return list(parse_sharding_per_value(text).shardings)
    out: list[TensorSharding | None] = []
    for r in op.results:
        if mesh is None or not isinstance(r.type, TensorType):
            out.append(None)
            continue
        rank = len(r.type.shape)
        out.append(parse_tensor_sharding(f"<@{mesh}, [{', '.join(['{}'] * rank)}]>"))
    return out


def through_hlo(module_op: Any) -> Any | None:
    """`module_op` (a jaxlib module) as XLA's Shardy pass gets it: converted to HLO the way
    jaxlib hands a module to XLA (`mlir_module_to_xla_computation`: `sdy` content into
    frontend attributes, `chlo` expanded, tuples), converted back (`hlo_to_stablehlo`) and its
    shardings, meshes and constraints imported again (XLA's attribute import, then each
    `Sharding` custom call made a `sdy.sharding_constraint`), in `module_op`'s context. Ops keep
    their frontend attributes through the trip, which is how the oracle finds them again
    (`_tag_frontend`). None where the trip fails or leaves `sdy` content jaxlib cannot import
    back (manual computations, sharding groups, barriers): the caller asks about the module as
    written then."""
    from jax._src.lib import _jax

    try:
        with module_op.context:
            text = module_op.get_asm(binary=True)
        computation = _jax.mlir.mlir_module_to_xla_computation(
            text, use_tuple_args=False, return_tuple=False
        )
        back = _jax.mlir.hlo_to_stablehlo(computation.as_serialized_hlo_module_proto())
    except Exception:  # noqa: BLE001 - jaxlib raises its own errors; asked as written then
        return None
    try:
        return _import_back(module_op.context, back)
    except Exception:  # noqa: BLE001 - jaxlib raises MLIRError; asked as written then
        return None


def _import_back(context: Any, back: bytes) -> Any | None:
    """`hlo_to_stablehlo`'s module with its `sdy` content imported again (`through_hlo`)."""
    from jaxlib.mlir import ir, passmanager

    with context, ir.Location.unknown():
        converted = ir.Module.parse(back)
        passmanager.PassManager.parse(_IMPORT).run(converted.operation)
        calls: list[Any] = []

        def visit(op: Any) -> Any:
            if op.name == "stablehlo.custom_call":
                calls.append(op)
            return ir.WalkResult.ADVANCE

        converted.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        targets = [ir.StringAttr(op.attributes["call_target_name"]).value for op in calls]
        if any(t.startswith(_SDY_CALL_PREFIXES) for t in targets):
            return None
        for op, target in zip(calls, targets, strict=True):
            if target == "Sharding" and "sdy.sharding" in op.attributes:
                _as_constraint(op)
        return converted.operation


_IMPORT = "builtin.module(xla-sdy-round-trip-import-shardy-attrs)"


def _as_constraint(op: Any) -> None:
    """Replace a `Sharding` custom call (how a constraint travels through HLO) by the
    `sdy.sharding_constraint` it was, keeping its frontend attributes."""
    from jaxlib.mlir import ir

    text = str(op.attributes["sdy.sharding"])  # #sdy.sharding_per_value<[<@m, [...]>]>
    one = "#sdy.sharding" + text[len("#sdy.sharding_per_value<[") : -len("]>")]
    attributes = {"sharding": ir.Attribute.parse(one)}
    if FRONTEND in op.attributes:
        attributes[FRONTEND] = op.attributes[FRONTEND]
    new = ir.Operation.create(
        "sdy.sharding_constraint",
        results=[op.results[0].type],
        operands=[op.operands[0]],
        attributes=attributes,
        ip=ir.InsertionPoint(op),
    )
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


def _tag_frontend(op: Any, k: int) -> None:
    """Give `op` its walk index `k` as a frontend attribute (HLO keeps those on the ops it
    makes of an op, and the conversion back keeps them)."""
    from jaxlib.mlir import ir

    entries = {}
    if FRONTEND in op.attributes:
        old = ir.DictAttr(op.attributes[FRONTEND])
        entries = {old[i].name: old[i].attr for i in range(len(old))}
    entries[TAG] = ir.StringAttr.get(str(k))
    op.attributes[FRONTEND] = ir.DictAttr.get(entries)


def _frontend_tag(attrs: Any) -> int | None:
    """The walk index `_tag_frontend` gave an op, None if none."""
    from jaxlib.mlir import ir

    if FRONTEND not in attrs:
        return None
    d = ir.DictAttr(attrs[FRONTEND])
    if TAG not in d:
        return None
    return int(ir.StringAttr(d[TAG]).value)


def _asm(op: Any) -> str | None:
    if op is None:
        return None
    with op.context:
        return str(op.get_asm(print_generic_op_form=True, enable_debug_info=True))


def _erase(ops: list[Any], dead: set[int]) -> None:
    """Erase the ops at walk indexes `dead` (each dead op not inside another one; every user of
    one is dead too) from the copy, users before what they read."""
    for k in sorted(dead, reverse=True):
        ops[k - 1].erase()


def _diagnostic(e: Exception) -> str:
    """A failed pass pipeline's first error as one line: its message and location (jaxlib's
    `MLIRError` says only "Failure while executing pass pipeline:" on its first line and lists
    the diagnostics after it)."""
    for d in getattr(e, "error_diagnostics", None) or []:
        return f"{d.message} (at {d.location})".replace("\n", " ")
    lines = [x.strip() for x in str(e).strip().splitlines() if x.strip()]
    detail = [x for x in lines[1:] if "error" in x] or lines[1:]
    return " ".join(detail[:1] or lines[:1]) or type(e).__name__


def _name_an_entry_main(module_op: Any) -> str | None:
    """Shardy's pipeline looks `@main` up (and aborts the process without it); XLA compiles
    only a module that has one. A module of other entries (a test file's `@f`) is read as XLA
    would read it were its first public func the main one: that func is renamed on the copy.
    Returns the renamed func's name, None when there is a `@main`, "" when no func can be."""
    from jaxlib.mlir import ir

    funcs = [
        op for op in module_op.regions[0].blocks[0].operations if op.operation.name == "func.func"
    ]
    names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
    if "main" in names:
        return None
    text = str(module_op)
    for f, name in zip(funcs, names, strict=True):
        visibility = f.attributes["sym_visibility"] if "sym_visibility" in f.attributes else None
        if visibility is not None and ir.StringAttr(visibility).value == "private":
            continue
        if f"@{name}(" in text.replace(f"func.func @{name}(", "", 1) or f"@{name}," in text:
            continue  # called or referred to: renaming would break a symbol use
        f.attributes["sym_name"] = ir.StringAttr.get("main")
        return name
    return ""


def _keys(text: str, meshes: dict[str, Mesh], key_of: Callable[[str, dict[str, Mesh]], Key]) -> tuple[Key, ...]:
    """The keys of `#sdy.sharding_per_value<[...]>` text, one per value."""
    inner = text.removeprefix("#sdy.sharding_per_value")
    return tuple(key_of(s, meshes) for s in _split_list(inner))


def _split_list(text: str) -> list[str]:
    """The shardings of `<[<@m, [...]>, <@m, [...]>]>` (or `[...]`) as separate texts."""
    body = text.strip()
    if body.startswith("<") and body.endswith(">"):
        body = body[1:-1]
    body = body.strip()[1:-1]  # the list's brackets
    out, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c in "<[{(":
            depth += 1
        elif c in ">]})":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(body[start:i].strip())
            start = i + 1
    if body[start:].strip():
        out.append(body[start:].strip())
    return out


def _walk(module_op: Any) -> list[Any]:
    """Every op under a jaxlib module op in pre-order (the module op itself left out)."""
    from jaxlib.mlir import ir

    ops: list[Any] = []

    def visit(o: Any) -> Any:
        ops.append(o)
        return ir.WalkResult.ADVANCE

    for op in module_op.regions[0].blocks[0].operations:
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops
