"""The module XLA is handed, and what XLA's own propagation makes of it.

XLA's import keeps a module's boundary shardings, constraints, manual computations and the
op-level shardings of a few ops (`passes.pin.KEEPS_OP_SHARDING`), then runs Shardy's
`sdy-propagation-pipeline` to derive every other value's layout (docs/xla_boundary.md §1).
`ShardyOracle` runs that same pipeline through jaxlib on the module XLA would get and reads each
op result's sharding back, by the op's walk index: the answer the `pin` export (passes/pin.py)
compares shardc's layout with, to pin only what XLA would lay out otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shardc.backend import mlir_bridge
from shardc.backend.exporter import export_text
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module
from shardc.dialect.op_views import PER_USE
from shardc.dialect.sharding_syntax import parse_mesh, parse_tensor_sharding
from shardc.dialect.shardings import Mesh
from shardc.passes.pin import Key, XlaLayouts, sharding_key, xla_reads_op_sharding

PIPELINE = "builtin.module(sdy-propagation-pipeline)"
TAG = "shardc.k"  # the walk index of an op, on the copy the pipeline runs on
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
    ):
        self.build = build or parse_for_xla
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
            for k in wanted:
                ops[k - 1].attributes[TAG] = ir.IntegerAttr.get(i64, k)
            for k, text in rules.items():
                ops[k - 1].attributes["sdy.sharding_rule"] = ir.Attribute.parse(text)
            _erase(ops, dead)
            try:
                passmanager.PassManager.parse(PIPELINE).run(copy)
            except Exception as e:  # noqa: BLE001 - jaxlib raises MLIRError with diagnostics
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ShardcError(
                    f"Shardy's propagation, as XLA runs it, fails on the exported module: {first}"
                ) from None
            out = self._read(copy)
            if self.keep_first:
                if self.first is None:
                    self.first = copy
                self.derived = copy
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

    def _read(self, copy: Any) -> XlaLayouts:
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

        def visit(op: Any) -> Any:
            attrs = op.attributes
            if TAG not in attrs:
                return ir.WalkResult.ADVANCE
            k = ir.IntegerAttr(attrs[TAG]).value
            if op.name == "sdy.manual_computation":
                out.manuals[k] = (
                    _keys(str(attrs["in_shardings"]), meshes, self._key_of),
                    _keys(str(attrs["out_shardings"]), meshes, self._key_of),
                )
                return ir.WalkResult.ADVANCE
            if op.name in _UNREAD:
                return ir.WalkResult.ADVANCE
            if "sdy.sharding" in attrs:
                text = str(attrs["sdy.sharding"])
                keys = parsed.get(text)
                if keys is None:
                    keys = parsed[text] = _keys(text, meshes, self._key_of)
            elif op.name == "stablehlo.while":
                return ir.WalkResult.ADVANCE  # (no sharding written: nothing to compare)
            else:
                keys = (None,) * len(op.results)  # nothing on any result: replicated
            out.results.setdefault(k, []).append(keys)
            return ir.WalkResult.ADVANCE

        copy.walk(visit, ir.WalkOrder.PRE_ORDER)
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
