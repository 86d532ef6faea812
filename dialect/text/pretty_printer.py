"""shardc IR -> MLIR pretty (custom op syntax) text, byte-identical to jaxlib's pretty print.

Each op is written by its format in formats.py (the pretty parser reads the same table); this
module holds what the formats share: MLIR's naming of values (`%0`, `%cst`, `%arg0`, `%iterArg`,
the name-conflict counter, each restarting in every function), blocks, functions, the module.
Anything without a format, or a form its format does not write (more than one block, location
printing, an attribute spelled otherwise), raises `Unsupported`, and the caller prints through
jaxlib instead: this printer never guesses a format. tests/test_pretty_printer.py checks it
byte for byte against jaxlib on every lit input, the test programs and every format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..ir import AttrList, FuncOp, Module, Operation, Value, parse_dict_list
from ..types import split_function_type
from .directives import Declared, Unsupported
from .formats import FORMATS, MESH
from .generic import FOLD_LINES
from .regions import Later
from .sharding_attrs import func_properties


class _Names:
    """The printer's state in one function, as MLIR's SSANameState keeps it (an isolated-from-
    above scope: `%0`, `%cst`, `%arg0` and the name-conflict counter all restart in each
    function), and the printing of its blocks."""

    def __init__(self) -> None:
        self.names: dict[Value, str] = {}  # (values hash by identity)
        self.next_value = 0
        self.next_conflict = 0
        self.next_argument = 0
        self.used: set[str] = set()
        self.dialect = "func"  # the default dialect: its ops print without their prefix

    def fork(self) -> _Names:
        """The naming state a nested region starts from (MLIR's SSANameState): the counters
        and names of its whole parent region, which a sibling region does not see."""
        child = _Names()
        child.names = self.names  # (a value is named once; a sibling never reads another's)
        child.next_value = self.next_value
        child.next_conflict = self.next_conflict
        child.next_argument = self.next_argument
        child.used = set(self.used)
        child.dialect = ""  # (a region of a stablehlo op: no default dialect)
        return child

    def unique(self, hint: str) -> str:
        """`hint`, or `hint_N` with the next free conflict number (MLIR's uniqueValueName)."""
        name = hint
        if hint in self.used:
            while True:
                name = f"{hint}_{self.next_conflict}"
                self.next_conflict += 1
                if name not in self.used:
                    break
        self.used.add(name)
        return name

    def name(self, v: Value) -> str:
        try:
            return self.names[v]
        except KeyError:
            raise Unsupported("a value used before its definition") from None

    def operands(self, op: Operation) -> str:
        names = self.names
        try:
            return ", ".join([names[v] for v in op.operands])
        except KeyError:
            raise Unsupported("a value used before its definition") from None

    def define(self, op: Operation, hint: str | None = None) -> str:
        """Name `op`'s results; the `%x = ` / `%x:n = ` head of its line."""
        n = len(op.results)
        if not n:
            return ""
        if hint is None:
            name = f"%{self.next_value}"
            self.next_value += 1
        else:
            name = "%" + self.unique(hint)
        if n == 1:
            self.names[op.results[0]] = name
            return f"{name} = "
        for i, r in enumerate(op.results):
            self.names[r] = f"{name}#{i}"
        return f"{name}:{n} = "

    def block_lines(
        self, ops: Sequence[Operation], indent: str, out: list[str] | None = None
    ) -> list[str]:
        """The lines of one block's ops at `indent` (regions nested in them included), appended
        to `out` when given (a function's body: joined into chunks as they come, up to the first
        op whose regions are printed later)."""
        lines: list[str] = [] if out is None else out
        first = len(lines)
        later: list[tuple[int, Later]] = []
        func_dialect = self.dialect == "func"
        for op in ops:
            if out is not None and not later and len(lines) - first > FOLD_LINES:
                # lines joined into one chunk as they come: a line's object header costs as
                # much as its text, and the module's lines would all be alive until the join
                lines[first:] = ["\n".join(lines[first:])]
                first += 1
            name = op.name
            fmt = FORMATS.get(name)
            if fmt is None:
                raise Unsupported(name)
            if isinstance(fmt, Declared):
                if func_dialect and name.startswith("func."):
                    name = name[5:]  # (the default dialect's ops print without its prefix)
                lines.append(indent + fmt.write(op, self, name))
                continue
            text = fmt.print(op, self)
            if isinstance(text, str):
                lines.append(indent + text)
            else:  # regions printed once the block's own ops are named
                later.append((len(lines), text))
                lines.append("")
        for i, rest in later:
            lines[i] = indent + rest(indent)
        return lines


# ---------------------------------------------------------------------------------------------
# Module, meshes, functions


def print_pretty(module: Module, release: bool = False) -> str:
    """`module` in MLIR's pretty form, as jaxlib prints it without locations; raises
    `Unsupported` for an op without a format (formats.py) or a form its format does not write.
    `release`: the module is emptied (`Module.release`) once printed, before its lines are
    joined, so the IR and the whole text are never alive together."""
    top = module.op
    out: list[str] = []
    props = top.properties
    if not props.keys() <= ["sym_name"] or top.successors or len(top.regions) != 1:
        raise Unsupported("module")
    head = "module"
    if "sym_name" in props:
        head += " @" + _symbol(str(props["sym_name"]))
    if top.attributes:
        head += f" attributes {{{top.attributes.sorted_body()}}}"
    out.append(head + " {")
    body = module.body
    if len(top.regions[0].blocks) != 1 or body.args:
        raise Unsupported("module body")
    for op in body.ops:
        if op.name == "sdy.mesh":
            out.append("  " + MESH.print(op, _Names(), op.name))
        elif op.name == "func.func" and isinstance(op, FuncOp):
            _func(op, out)
        else:
            raise Unsupported(op.name)
    out.append("}")
    out.append("")  # the final newline, without copying the whole text once more
    if release:
        module.release()
    return "\n".join(out)


def _symbol(raw: str) -> str:
    """`"name"` -> `name` when MLIR prints it bare, else raise."""
    if not (raw.startswith('"') and raw.endswith('"')):
        raise Unsupported(f"symbol {raw}")
    name = raw[1:-1]
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        raise Unsupported(f"symbol {raw}")
    return name


_FUNC_PROPS = {"sym_name", "function_type", "arg_attrs", "res_attrs", "sym_visibility"}


def _func(func: FuncOp, out: list[str]) -> None:
    props = func_properties(func)
    keys = set(props.keys())
    if not keys <= _FUNC_PROPS or func.attributes or func.operands or func.results:
        raise Unsupported("func.func")
    if len(func.regions) != 1 or len(func.regions[0].blocks) != 1:
        raise Unsupported("func.func body")
    entry = func.regions[0].entry
    if entry.label not in (None, "bb0"):
        raise Unsupported("func.func block label")
    ins, outs = split_function_type(str(props["function_type"]))
    arg_attrs = _dict_list(props.get("arg_attrs"), len(ins))
    res_attrs = _dict_list(props.get("res_attrs"), len(outs))
    if len(entry.args) != len(ins) or any(
        a.type.text != t for a, t in zip(entry.args, ins, strict=True)
    ):
        raise Unsupported("func.func arguments")
    p = _Names()
    args = []
    for i, (a, d) in enumerate(zip(entry.args, arg_attrs, strict=True)):
        name = f"%arg{i}"
        p.names[a] = name
        args.append(f"{name}: {a.type.text}" + (f" {{{d}}}" if d else ""))
    vis = props.get("sym_visibility")
    head = "func.func " + (str(vis).strip('"') + " " if vis is not None else "")
    head += f"@{_symbol(str(props['sym_name']))}({', '.join(args)})"
    if outs:
        results = [t + (f" {{{d}}}" if d else "") for t, d in zip(outs, res_attrs, strict=True)]
        parens = len(outs) > 1 or res_attrs[0] or outs[0].startswith("(")
        head += " -> " + (f"({', '.join(results)})" if parens else results[0])
    out.append("  " + head + " {")
    p.next_argument = len(entry.args)
    p.block_lines(entry.ops, "    ", out)
    out.append("  }")


def _dict_list(raw: object, n: int) -> list[str]:
    """The bodies of a func's `arg_attrs`/`res_attrs` entries (sorted), `n` of them."""
    if raw is None:
        return [""] * n
    attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
    if not isinstance(attrs, AttrList) or len(attrs.items) != n:
        raise Unsupported("argument attributes")
    return [d.sorted_body() for d in attrs.items]
