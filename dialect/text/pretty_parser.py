"""MLIR pretty (custom op syntax) text -> shardc IR, for the forms pretty_printer.py prints.

The importer has jaxlib parse the input (that verifies it and gives its errors with line:col);
this parser then builds shardc's IR straight from the same text, instead of a jaxlib generic
print and a second parse of that. The IR is the one `generic.parse_generic` builds from
jaxlib's generic print with locations: the same ops, attribute texts, types, and locations
(`loc(#locN)` with MLIR's alias numbering of `"-":line:col`, the position jaxlib gives each op).

It reads only what it can rebuild exactly: a module without locations whose ops have their
syntax in formats.py (the printer's table too), or are written in generic form
(`"stablehlo.gather"(..) <{..}> ({ ^bb0(..): .. }) : ..`, read by the generic parser's op-line
reader, regions included), written as MLIR prints them (attribute values, dense literals and
floats in their printed spelling, see spelling.py: text jaxlib would re-spell is not kept; values
it cannot check itself are checked once each against jaxlib's print through the
`printed_as_written` the importer passes). Anything else returns None and the caller takes the
generic route. tests/test_pretty_parse.py compares both routes on every program and lit input.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from typing import Any

from ..brackets import split_top_level
from ..errors import ShardcError
from ..ir import (
    AttrDict,
    Block,
    FuncOp,
    Module,
    Operation,
    OpResult,
    Region,
    Value,
)
from ..types import Type
from .directives import Declared
from .formats import FORMATS, MESH
from .generic import op_line_reader
from .spelling import (
    Unhandled,
    check_entries,
    checked_attrs,
    signature,
    type_of,
)

# printed op name -> (op name, its format's reader, whether the format is one of regions): a
# func dialect op is written without its prefix in a func's body (`return`, `call`); sdy.mesh
# is the module body's (`mesh`)
_READERS: dict[str, tuple[str, Any, bool]] = {}
for _name, _format in FORMATS.items():
    if _name != "sdy.mesh":
        _READERS[_name] = (_name, _format.read, not isinstance(_format, Declared))
        if _name.startswith("func."):
            _READERS[_name[5:]] = _READERS[_name]

_GROUPS_LINE = re.compile(
    r"[ \t]*(?P<groups>%[\w$.-]+(?::\d+)?(?:, %[\w$.-]+(?::\d+)?)+) = "
    r"(?P<name>[a-z_][\w.]*)(?P<rest>.*)$"
)
_RESULT_NAME = re.compile(r"%[\w$.-]+")

# ---------------------------------------------------------------------------------------------
# Structure: module, meshes, funcs, op lines

_LINE = re.compile(r"([ \t]*)(?:(%[\w$.-]+)(?::(\d+))? = )?([a-z_][\w.]*)(.*)$")
_MODULE_RE = re.compile(
    r"([ \t]*)module(?: @(?P<name>[A-Za-z_][\w$.]*))?(?: attributes \{(?P<attrs>.*)\})? \{$"
)
_FUNC_RE = re.compile(
    r"([ \t]*)func\.func (?:(?P<vis>public|private|nested) )?@(?P<name>[A-Za-z_][\w$.]*)\("
)
_FUNC_TAIL = re.compile(r"(?: -> (?P<res>.*))? \{$")
_ARG_RE = re.compile(r"(?P<name>%[\w$.-]+): (?P<t>[^ {}]+)(?: \{(?P<attrs>.*)\})?$")
_RESULT_RE = re.compile(r"(?P<t>[^ {}]+)(?: \{(?P<attrs>.*)\})?$")
_CLOSE = re.compile(r"[ \t]*\}$")
_BLOCK_HEADER = re.compile(r"[ \t]*\^[A-Za-z_][\w$.]*\((?P<args>.+)\):$")
_BLOCK_ARG = re.compile(r"(?P<name>%[\w$.-]+): (?P<t>[^ ,{}]+)")
_TRAILER_RE = re.compile(r"(?: \{(?P<attrs>.*)\})? : (?P<sig>[^{}]+)$")
# ops a generic line may not be: they have their own syntax and IR classes
_NOT_GENERIC = frozenset({"func.func", "builtin.module", "sdy.mesh"})


def _dict(texts: dict[str, str], text: str) -> AttrDict:
    """An attribute dictionary of raw text, the text stored once for all ops that repeat it."""
    return AttrDict(texts.setdefault(text, text))


class _Lines:
    """`text.split("\n")` as an indexable sequence that holds one chunk of about `size`
    characters' lines at a time (and the line before it, which a region's end reads again):
    all the lines of a large module at once would cost as much memory again as its text.
    Reading is forward; an index before the chunk restarts from the text's beginning."""

    __slots__ = ("text", "n", "base", "chunk", "end", "size")

    def __init__(self, text: str, size: int = 1 << 18):
        self.text = text
        self.n = text.count("\n") + 1
        self.base = 0  # the index of chunk[0]
        self.chunk: list[str] = []
        self.end = 0  # the text offset of the first line after the chunk
        self.size = size

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> str:
        j = i - self.base
        if 0 <= j < len(self.chunk):
            return self.chunk[j]
        return self.load(i)[i - self.base]

    def load(self, i: int) -> list[str]:
        """The chunk holding line `i` (made current)."""
        if not 0 <= i < self.n:
            raise IndexError(i)
        if i < self.base:
            self.base, self.chunk, self.end = 0, [], 0
        text = self.text
        while i >= self.base + len(self.chunk):
            keep = self.chunk[-1:]
            start = self.end
            stop = text.find("\n", start + self.size)
            if stop < 0:
                new = text[start:].split("\n")
                self.end = len(text) + 1
            else:
                new = text[start:stop].split("\n")
                self.end = stop + 1
            self.base += len(self.chunk) - len(keep)
            self.chunk = keep + new
        return self.chunk


class _Parser:
    def __init__(
        self, text: str, source_name: str | None, check: Callable[[str], bool] | None = None
    ):
        self.text = text
        self.check = check
        self.source_name = source_name
        self.values: dict[str, Value] = {}
        self.texts: dict[str, str] = {}
        # alias number -> line, column (two int columns: a tuple per op cost 10 MB at 1000 layers)
        self.pos_lines = array("i")
        self.pos_cols = array("i")
        self.arg_aliases: set[int] = set()
        self.lineno = 0

    def loc(self, col: int) -> str:
        """`loc(#locN)` of the op at column `col` of the current line (MLIR numbers location
        aliases in the order its printer meets them: pre-order, an op before its regions; every
        op of this syntax has a position of its own)."""
        pos_lines = self.pos_lines
        n = len(pos_lines)
        pos_lines.append(self.lineno)
        self.pos_cols.append(col)
        return f"loc(#loc{n})" if n else "loc(#loc)"

    def arg_loc(self, col: int) -> str:
        """A block argument's location: printed inline, but its alias is numbered too (and
        printed before the module rather than after it)."""
        self.loc(col)
        self.arg_aliases.add(len(self.pos_lines) - 1)
        return f'loc("-":{self.lineno}:{col})'

    def alias_text(self) -> str:
        """The `#locN = loc(...)` lines in jaxlib's order: those of block arguments first."""
        args = self.arg_aliases
        pos_lines, pos_cols = self.pos_lines, self.pos_cols
        blocks: list[str] = []  # joined a few thousand lines at a time (not a string per alias)
        for numbers in (sorted(args), (n for n in range(len(pos_lines)) if n not in args)):
            block: list[str] = []
            for n in numbers:
                name = f"#loc{n}" if n else "#loc"
                block.append(f'{name} = loc("-":{pos_lines[n]}:{pos_cols[n]})')
                if len(block) == 4096:
                    blocks.append("\n".join(block))
                    block = []
            if block:
                blocks.append("\n".join(block))
        return "\n".join(blocks)

    def intern(self, text: str | None) -> str | None:
        return None if text is None else self.texts.setdefault(text, text)

    def lookup(self, names: list[str]) -> list[Value]:
        values = self.values
        try:
            return [values[n] for n in names]
        except KeyError:
            raise Unhandled("undefined value") from None

    def define(self, op: Operation, name: str | None, count: str | None) -> None:
        if name is None:
            if op.results:
                raise Unhandled("unnamed results")
            return
        n = int(count) if count else 1
        if n != len(op.results) or n == 0:
            raise Unhandled("result count")
        if count:
            for i, r in enumerate(op.results):
                self.values[f"{name}#{i}"] = r
            self.values[name] = op.results[0]  # `%0` names the first of `%0:2`
        else:
            self.values[name] = op.results[0]

    # -----------------------------------------------------------------------------------------
    def parse(self) -> Module:
        lines = _Lines(self.text)
        i = self.skip(lines, 0)
        if i >= len(lines):
            raise Unhandled("empty")
        self.lineno = i + 1
        explicit = _MODULE_RE.match(lines[i]) is not None
        if explicit:
            top, body = self.module_header(lines[i])
            i += 1
        else:  # top-level ops: MLIR wraps them in a module located at line 0, column 0
            self.lineno = 0
            top, body = self.module_header("module {", col=0)
        while True:
            i = self.skip(lines, i)
            if i >= len(lines):
                if explicit:
                    raise Unhandled("unterminated module")
                break
            line = lines[i]
            self.lineno = i + 1
            if _CLOSE.match(line):
                if not explicit:
                    raise Unhandled("unmatched }")
                i += 1
                break
            stripped = line.lstrip()
            if stripped.startswith("sdy.mesh "):
                body.append(self.mesh(line))
                i += 1
            elif stripped.startswith("func.func "):
                i = self.func(lines, i, body)
            else:
                raise Unhandled(stripped[:40])
        if self.skip(lines, i) < len(lines):
            raise Unhandled("text after the module")
        module = Module(top, loc_alias_text=self.alias_text())
        module.source_name = self.source_name
        return module

    def skip(self, lines: _Lines, i: int) -> int:
        """The next line that is not blank or a comment."""
        while i < len(lines):
            s = lines[i].strip()
            if s and not s.startswith("//"):
                return i
            i += 1
        return i

    def module_header(self, line: str, col: int | None = None) -> tuple[Operation, Block]:
        m = _MODULE_RE.match(line)
        if m is None:
            raise Unhandled("module header")
        loc = self.loc(m.end(1) + 1 if col is None else col)
        op = Operation("builtin.module", [])
        if m.group("name"):
            op.properties = AttrDict(f'sym_name = "{m.group("name")}"')
        attrs = checked_attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(attrs)
        op.loc = loc
        op.add_region(Region())
        block = Block()
        op.regions[0].add_block(block)
        return op, block

    def mesh(self, line: str) -> Operation:
        """An `sdy.mesh` line of the module body, read by its format."""
        m = _LINE.match(line)
        if m is None or m.group(4) != "sdy.mesh" or m.group(2) is not None:
            raise Unhandled("mesh")
        _, props, attrs, _ = MESH.read(m.group(5))
        return self.build("sdy.mesh", [], props, attrs, (), m.start(4) + 1)

    def func(self, lines: _Lines, i: int, body: Block) -> int:
        line = lines[i]
        m = _FUNC_RE.match(line)
        if m is None:
            raise Unhandled("func header")
        # the `)` closing the arguments (a bracket scan of a long signature costs more than the
        # rest of the header; a wrong cut leaves text that the strict patterns below reject)
        close = line.rfind(") -> ") if ") -> " in line else line.rfind(") {")
        if close < m.end() - 1:
            raise Unhandled("func header")
        args = line[m.end() : close]
        tail = _FUNC_TAIL.match(line, close + 1)
        if tail is None:
            raise Unhandled("func header")
        func = FuncOp("func.func", [])
        func.loc = self.loc(m.end(1) + 1)
        self.values = {}
        block = Block(label="bb0") if args else Block()
        arg_types: list[str] = []
        arg_attrs: list[str] = []
        pos = m.end()
        for k, entry in enumerate(args.split(", %") if args else ()):
            if k:
                entry = "%" + entry
            am = _ARG_RE.match(entry)
            if am is None:
                raise Unhandled("argument")
            t = am.group("t")
            arg = block.add_arg(type_of(t), self.arg_loc(pos + 1))
            if am.group("name") in self.values:
                raise Unhandled("duplicate argument")
            self.values[am.group("name")] = arg
            arg_types.append(t)
            arg_attrs.append(checked_attrs(am.group("attrs")) or "")
            pos += len(entry) + 2
        res_types: list[str] = []
        res_attrs: list[str] = []
        res = tail.group("res")
        if res is not None:
            if res.startswith("(") and res.endswith(")"):
                entries = split_top_level(res[1:-1])
                if ", ".join(e.strip() for e in entries) != res[1:-1]:
                    raise Unhandled("result spacing")
            else:
                entries = [res]
            for entry in entries:
                rm = _RESULT_RE.match(entry.strip())
                if rm is None:
                    raise Unhandled("result")
                type_of(rm.group("t"))
                res_types.append(rm.group("t"))
                res_attrs.append(checked_attrs(rm.group("attrs")) or "")
        outs = res_types[0] if len(res_types) == 1 else f"({', '.join(res_types)})"
        props = []
        if any(arg_attrs):
            props.append(f"arg_attrs = [{', '.join('{' + a + '}' for a in arg_attrs)}]")
        props.append(f"function_type = ({', '.join(arg_types)}) -> {outs}")
        if any(res_attrs):
            props.append(f"res_attrs = [{', '.join('{' + a + '}' for a in res_attrs)}]")
        props.append(f'sym_name = "{m.group("name")}"')
        if m.group("vis"):
            props.append(f'sym_visibility = "{m.group("vis")}"')
        func.properties = AttrDict(", ".join(props))
        func.add_region(Region())
        i, end = self.body(lines, i + 1, block)
        self.values = {}  # a func's names end with it (the table is large: one per value)
        if end != "}":
            raise Unhandled("func end")
        if not block.ops or block.ops[-1].name != "func.return":
            raise Unhandled("func without return")
        func.regions[0].add_block(block)
        func.parent = body
        body.ops.append(func)
        return i

    def body(self, lines: _Lines, i: int, block: Block) -> tuple[int, str]:
        """The op lines of `block` from line index `i` up to a line that closes it (`}`, or
        `}, {` / `}) ...` of a generic op's regions): the index after it and its text."""
        ops = block.ops
        n_lines = len(lines)
        line_match = _LINE.match
        readers = _READERS
        check = self.check
        values = self.values
        # the current chunk of lines, read directly (an older one is still right for its lines)
        chunk, base = lines.chunk, lines.base
        top = base + len(chunk)
        while True:
            if i >= top:
                if i >= n_lines:
                    raise Unhandled("unterminated block")
                chunk = lines.load(i)
                base = lines.base
                top = base + len(chunk)
            line = chunk[i - base]
            i += 1
            m = line_match(line)
            if m is None:
                stripped = line.strip()
                if not stripped or stripped.startswith("//"):
                    continue
                if stripped[0] == "}":
                    return i, stripped
                self.lineno = i
                if stripped[0] == '"' or ' = "' in stripped:
                    op, i = self.generic(lines, i, line)
                else:
                    op, i = self.named_results(lines, i, line)
            else:
                self.lineno = i
                _, res_name, res_count, name, rest = m.groups()
                known = readers.get(name)
                if known is None:
                    raise Unhandled(name)
                generic, read, with_regions = known
                if with_regions:
                    op, i = read(self, lines, i, line, m.end(4))
                else:
                    operands, op_props, op_attrs, types = read(rest, check)
                    try:
                        operand_values = [values[v] for v in operands]
                    except KeyError:
                        raise Unhandled("undefined value") from None
                    col = m.start(4) + 1
                    op = self.build(generic, operand_values, op_props, op_attrs, types, col)
                if res_name is not None and res_count is None and len(op.results) == 1:
                    values[res_name] = op.results[0]
                else:
                    self.define(op, res_name, res_count)
            op.parent = block
            ops.append(op)

    def define_groups(self, op: Operation, groups: list[tuple[str, int]]) -> None:
        """Results named in groups (`%values, %indices = ..`, `%a:2, %b = ..`)."""
        if sum(n for _, n in groups) != len(op.results):
            raise Unhandled("result count")
        values = self.values
        k = 0
        for name, n in groups:
            if n == 1:
                values[name] = op.results[k]
            else:
                for j in range(n):
                    values[f"{name}#{j}"] = op.results[k + j]
                values[name] = op.results[k]
            k += n

    def named_results(self, lines: _Lines, i: int, line: str) -> tuple[Operation, int]:
        """An op in pretty syntax whose results are named one by one (`%values, %indices =
        chlo.top_k(..)`)."""
        m = _GROUPS_LINE.match(line)
        if m is None:
            raise Unhandled(line.strip()[:40])
        name, rest = m.group("name"), m.group("rest")
        known = _READERS.get(name)
        if known is None:
            raise Unhandled(name)
        generic, read, with_regions = known
        if with_regions:
            op, i = read(self, lines, i, line, m.end("name"))
        else:
            operands, props, attrs, types = read(rest, self.check)
            op = self.build(generic, self.lookup(operands), props, attrs, types, m.start("name") + 1)
        groups = []
        for group in m.group("groups").split(", "):
            res, _, count = group.partition(":")
            if count == "1" or not _RESULT_NAME.fullmatch(res):
                raise Unhandled("result names")
            groups.append((res, int(count) if count else 1))
        self.define_groups(op, groups)
        return op, i

    def generic(self, lines: _Lines, i: int, line: str) -> tuple[Operation, int]:
        """An op in generic form (`%0 = "stablehlo.gather"(%a, %b) <{..}> : (..) -> ..`), read
        by the generic parser's op-line reader, with its regions (`({` .. `}, {` .. `})`) whose
        ops are read by this parser: the op and the index after its last line."""
        col = line.index('"') + 1
        try:
            op, res_names, opens = op_line_reader(self.values, self.texts)(line.strip())
        except ShardcError:
            raise Unhandled("generic op") from None
        if op.successors is not None or op.name in _NOT_GENERIC:
            raise Unhandled(op.name)
        pos_lines = self.pos_lines
        op.loc = f"loc(#loc{len(pos_lines)})"
        pos_lines.append(self.lineno)
        self.pos_cols.append(col)
        if opens:
            op.add_region(Region())
            while True:
                i = self.region(lines, i, op.regions[-1])
                close = lines[i - 1].strip()
                if close == "}, {":
                    op.add_region(Region())
                    continue
                if not close.startswith("})"):
                    raise Unhandled("region end")
                tail = _TRAILER_RE.match(close, 2)
                if tail is None:
                    raise Unhandled("region op trailer")
                if tail.group("attrs") is not None:
                    op.attributes = AttrDict(self.intern(tail.group("attrs")))
                types = signature(tail.group("sig"))
                op.results = tuple(OpResult(t, op, k) for k, t in enumerate(types))
                break
        else:
            for r in op.results:
                type_of(r.type.text)
        check_entries(op.properties.body(), inherent=True, check=self.check)
        check_entries(op.attributes.body(), inherent=False, check=self.check)
        if len(res_names) > 1:
            self.define_groups(op, res_names)
        elif res_names:
            name, count = res_names[0]
            if count == 1 and f"{name}:1 " in line:
                raise Unhandled("result count 1")
            self.define(op, name, str(count) if count > 1 else None)
        elif op.results:
            raise Unhandled("unnamed results")
        return op, i

    def region(self, lines: _Lines, i: int, region: Region) -> int:
        """One region of a generic op: an optional `^bb0(%a: T, ..):` header, then its ops up
        to the line that closes it; the index after that line."""
        k = self.skip(lines, i)
        if k >= len(lines):
            raise Unhandled("unterminated region")
        header = lines[k].strip()
        if header.startswith("^"):
            hm = _BLOCK_HEADER.match(lines[k])
            if hm is None:
                raise Unhandled("block header")
            block = Block(label="bb0")
            self.lineno = k + 1
            pos = hm.start("args")
            for entry in hm.group("args").split(", "):
                am = _BLOCK_ARG.fullmatch(entry)
                if am is None:
                    raise Unhandled("block argument")
                arg = block.add_arg(type_of(am.group("t")), self.arg_loc(pos + 1))
                self.values[am.group("name")] = arg
                pos += len(entry) + 2
            i = k + 1
        else:
            block = Block()
        region.add_block(block)
        i, _ = self.body(lines, i, block)
        if not block.ops:
            raise Unhandled("empty block")
        return i

    def build(
        self,
        name: str,
        operands: list[Value],
        props: str | None,
        attrs: str | None,
        types: tuple[Type, ...],
        col: int,
    ) -> Operation:
        """The op as `parse_generic` builds it from jaxlib's generic line (its fast path for
        texts without quotes, its general one otherwise)."""
        pos_lines = self.pos_lines
        n = len(pos_lines)
        pos_lines.append(self.lineno)
        self.pos_cols.append(col)
        loc = n  # loc(#locN), stored as N; n > 0: the module's own location came first
        texts = self.texts
        if props is None:
            if attrs is None:
                op = Operation.fast(name, operands, AttrDict(""), AttrDict(""), loc)
            elif '"' not in attrs:
                op = Operation.fast(name, operands, AttrDict(""), _dict(texts, attrs), loc)
            else:
                op = Operation(name, operands, attributes=_dict(texts, attrs))
                op.set_loc_alias(loc)
        elif '"' not in props and (attrs is None or '"' not in attrs):
            op = Operation.fast(
                name,
                operands,
                _dict(texts, props),
                _dict(texts, attrs) if attrs is not None else AttrDict(""),
                loc,
            )
        else:
            op = Operation(name, operands, properties=_dict(texts, props))
            op.set_loc_alias(loc)
            if attrs is not None:
                op.attributes = _dict(texts, attrs)
        if len(types) == 1:
            op.results = (OpResult(types[0], op, 0),)
        else:
            op.results = tuple(OpResult(t, op, i) for i, t in enumerate(types))
        return op

def parse_pretty(
    text: str,
    source_name: str | None = None,
    printed_as_written: Callable[[str], bool] | None = None,
) -> Module | None:
    """shardc IR of MLIR pretty text that jaxlib has parsed (verified) already, identical to
    the generic route's; None where the text is outside what this parser rebuilds exactly.
    `printed_as_written` tells whether MLIR prints an attribute value (of a generic op line)
    exactly as written; without it only the values this module checks itself are read."""
    if "loc(" in text or "#loc" in text or "\r" in text or not text.isascii():
        return None
    parser = _Parser(text, source_name, printed_as_written)
    try:
        return parser.parse()
    except (Unhandled, ValueError, KeyError, IndexError, RecursionError):
        return None  # RecursionError: attribute values nested deeper than Python's stack
