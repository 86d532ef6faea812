"""The pretty syntax of ops that hold regions, each format's printing and reading halves side by
side: a while's `cond { } do { }`, a reduce (the compact `applies` form and the one with its
reducer written out), a manual computation (read only: jaxlib prints it).

A format's `print(op, p)` names the op's results where the op is and returns its line, or for
an op whose regions follow, a function of the indentation that prints them later (MLIR numbers a
region's values before those of the regions nested in it). `read(parser, lines, i, line, at)`
reads the op whose name ends at column `at` of `line` (index `i` is the line after it) and
returns the op and the index after its last line. Both run on the printer's and the parser's
state (pretty_printer.py, pretty_parser.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..ir import AttrDict, Block, Operation, OpResult, Region
from ..types import TensorType
from .directives import (
    VALUE,
    Unsupported,
    attr_dict,
    functional_type,
    types_of,
)
from .spelling import (
    NAT_LIST,
    Unhandled,
    canonical_value,
    check_entries,
    checked_attrs,
    i64_array,
    signature,
    type_of,
)

Later = Callable[[str], str]  # indentation -> the op's lines

_L = r"[0-9, -]*"
_ATTR = r"(?: \{(?P<attrs>.*)\})?"
_SIG = r" : (?P<sig>[^{}]+)$"
_ARG = r"%[\w$.-]+"


def _single_blocks(op: Operation, n: int) -> list[Block]:
    if len(op.regions) != n or op.successors or any(len(r.blocks) != 1 for r in op.regions):
        raise Unsupported(op.name)
    return [r.blocks[0] for r in op.regions]


def _dims(raw: object) -> str:
    """`array<i64: 0, 1>` -> `0, 1`."""
    text = str(raw)
    if text == "array<i64>":
        return ""
    if text.startswith("array<i64: ") and text.endswith(">") and NAT_LIST.match(text[11:-1]):
        return text[11:-1]
    raise Unsupported(f"dimension list {text}")


class While:
    """`stablehlo.while(%iterArg = %x, ..) : T, .. [attributes {..}]` then `cond {` .. `} do {`
    .. `}`: two regions whose blocks take the loop values (named `iterArg`, `iterArg_N`, as
    StableHLO's printer names them; in the text, one location each, shared by both blocks)."""

    _HEAD = re.compile(
        r"\((?P<pairs>[^()]+)\) : (?P<types>[^{}()]+?)(?: attributes \{(?P<attrs>.*)\})?$"
    )
    _PAIR = re.compile(rf"({_ARG}) = ({VALUE})")

    def print(self, op: Operation, p: Any) -> Later:
        cond, body = _single_blocks(op, 2)
        if op.properties or not op.operands:
            raise Unsupported(op.name)
        types = types_of(op.operands)
        for block in (cond, body):
            if block.label not in (None, "bb0") or types_of(block.args) != types:
                raise Unsupported("while region arguments")
        attrs = attr_dict(op)
        if attrs:
            attrs = " attributes" + attrs
        head = p.define(op)

        def rest(indent: str) -> str:
            inner = indent + "  "
            parts = []
            arg_names: list[str] = []
            for block in (cond, body):
                q = p.fork()
                arg_names = []
                for a in block.args:
                    arg_names.append("%" + q.unique("iterArg"))
                    q.names[a] = arg_names[-1]
                parts.append("\n".join(q.block_lines(block.ops, inner)))
            pairs = ", ".join(
                f"{a} = {p.name(v)}" for a, v in zip(arg_names, op.operands, strict=True)
            )
            return (
                f"{head}{op.name}({pairs}) : {', '.join(types)}{attrs}\n{indent}cond {{\n"
                f"{parts[0]}\n{indent}}} do {{\n{parts[1]}\n{indent}}}"
            )

        return rest

    def read(self, parser: Any, lines: Any, i: int, line: str, at: int) -> tuple[Operation, int]:
        m = self._HEAD.match(line, at)
        if m is None:
            raise Unhandled("while")
        names = []
        inits = []
        pos = m.start("pairs")
        cols = []
        for pair in m.group("pairs").split(", "):
            pm = self._PAIR.fullmatch(pair)
            if pm is None:
                raise Unhandled("while operands")
            names.append(pm.group(1))
            inits.append(pm.group(2))
            cols.append(pos + 1)
            pos += len(pair) + 2
        types = [type_of(t) for t in m.group("types").split(", ")]
        if len(types) != len(names):
            raise Unhandled("while types")
        op = Operation("stablehlo.while", parser.lookup(inits))
        op.loc = parser.loc(at - len("stablehlo.while") + 1)
        arg_locs = [parser.arg_loc(c) for c in cols]
        attrs = m.group("attrs")
        if attrs is not None:
            check_entries(attrs, inherent=False, check=parser.check)
            op.attributes = AttrDict(parser.intern(attrs))
        k = parser.skip(lines, i)
        if k >= len(lines) or lines[k].strip() != "cond {":
            raise Unhandled("while cond")
        i = k + 1
        for region_end in ("} do {", "}"):
            block = Block(label="bb0")
            values = parser.values
            for name, t, loc in zip(names, types, arg_locs, strict=True):
                values[name] = block.add_arg(t, loc)
            region = Region()
            op.add_region(region)
            region.add_block(block)
            i, end = parser.body(lines, i, block)
            if end != region_end or not block.ops:
                raise Unhandled("while region")
        op.results = tuple(OpResult(t, op, k) for k, t in enumerate(types))
        return op, i


_COMMUTATIVE = frozenset(
    f"stablehlo.{n}" for n in ("add", "multiply", "maximum", "minimum", "and", "or", "xor")
)


class Reduce:
    """`stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [..] : ..`, the
    compact form of one input whose body is one commutative binary op on the block arguments;
    else `stablehlo.reduce(%x init: %i), (..) across dimensions = [..] {..} : (..) -> (..)` then
    ` reducer(%a: T, %c: T) (%b: U, %d: U)  {` and the body (its block takes each input's first
    argument, then each one's second)."""

    _COMPACT = re.compile(
        rf"\((?P<x>{VALUE}) init: (?P<init>{VALUE})\) applies (?P<body>[a-z_][\w.]*) across "
        rf"dimensions = \[(?P<d>{_L})\]{_ATTR}{_SIG}"
    )
    _PAIR = re.compile(rf"\(({VALUE}) init: ({VALUE})\)")
    _LONG = re.compile(
        rf"(?P<pairs>\({VALUE} init: {VALUE}\)(?:, \({VALUE} init: {VALUE}\))*) across "
        rf"dimensions = \[(?P<d>{_L})\]{_ATTR}{_SIG}"
    )
    _REDUCER_GROUP = re.compile(rf"\(({_ARG}): ([^ ,()]+), ({_ARG}): ([^ ,()]+)\)")

    def print(self, op: Operation, p: Any) -> str | Later:
        try:
            return self.print_compact(op, p)
        except Unsupported:
            return self.print_long(op, p)

    def print_compact(self, op: Operation, p: Any) -> str:
        if op.properties.keys() != ["dimensions"] or len(op.operands) != 2 or len(op.regions) != 1:
            raise Unsupported(op.name)
        blocks = op.regions[0].blocks
        if len(blocks) != 1 or len(blocks[0].ops) != 2:
            raise Unsupported("reduce body")
        inner, ret = blocks[0].ops
        args = blocks[0].args
        if (
            inner.name not in _COMMUTATIVE
            or inner.properties
            or inner.attributes
            or inner.regions
            or len(inner.results) != 1
            or inner.results[0].sharding is not None
            or len(args) != 2
            or any(a.sharding is not None for a in args)
            or inner.operands != args
            or ret.name != "stablehlo.return"
            or list(ret.operands) != list(inner.results)  # (results are a tuple)
            or ret.attributes
            or ret.properties
        ):
            raise Unsupported("reduce body")
        x, init = op.operands
        element = x.type.element_type if isinstance(x.type, TensorType) else None
        scalar = f"tensor<{element}>"
        if any(a.type.text != scalar for a in args):
            raise Unsupported("reduce body types")
        dims = _dims(op.properties["dimensions"])
        head = f"{op.name}({p.name(x)} init: {p.name(init)})"
        tail = (
            f" applies {inner.name} across dimensions = [{dims}]{attr_dict(op)} : "
            f"{functional_type(op)}"
        )
        return p.define(op) + head + tail

    def print_long(self, op: Operation, p: Any) -> Later:
        (block,) = _single_blocks(op, 1)
        keys = op.properties.keys()
        n = len(op.operands) // 2
        if keys != ["dimensions"] or not n or len(op.operands) % 2 or len(block.args) != 2 * n:
            raise Unsupported(op.name)
        if block.label not in (None, "bb0"):
            raise Unsupported("reduce block")
        inputs, inits = op.operands[:n], op.operands[n:]
        pairs = ", ".join(
            f"({p.name(x)} init: {p.name(i)})" for x, i in zip(inputs, inits, strict=True)
        )
        dims = _dims(op.properties["dimensions"])
        tail = f" across dimensions = [{dims}]{attr_dict(op)} : {functional_type(op)}"
        head = p.define(op)

        def rest(indent: str) -> str:
            q = p.fork()
            names = []
            for a in block.args:
                names.append("%" + q.unique(f"arg{q.next_argument}"))
                q.next_argument += 1
                q.names[a] = names[-1]
            args = " ".join(
                f"({names[i]}: {block.args[i].type.text}, "
                f"{names[n + i]}: {block.args[n + i].type.text})"
                for i in range(n)
            )
            lines = "\n".join(q.block_lines(block.ops, indent + "  "))
            return f"{head}{op.name}{pairs}{tail}\n{indent} reducer{args}  {{\n{lines}\n{indent}}}"

        return rest

    def read(self, parser: Any, lines: Any, i: int, line: str, at: int) -> tuple[Operation, int]:
        rest, col = line[at:], at + 1
        m = self._COMPACT.match(rest)
        if m is None:
            return self.read_long(parser, lines, i, rest, col)
        dims = m.group("d")
        if not NAT_LIST.match(dims):
            raise Unhandled(dims)
        types = signature(m.group("sig"))
        x, init = parser.lookup([m.group("x"), m.group("init")])
        element = getattr(x.type, "element_type", None)
        if element is None or init.type.text != f"tensor<{element}>":
            raise Unhandled("reduce types")
        loc = parser.loc(col)
        parser.arg_aliases.add(len(parser.pos_lines) - 1)
        arg_loc = f'loc("-":{parser.lineno}:{col})'
        op = Operation("stablehlo.reduce", [x, init])
        op.properties = AttrDict(parser.intern(f"dimensions = {i64_array(dims)}"))
        op.add_region(Region())
        block = Block(label="bb0")
        scalar = init.type
        a = block.add_arg(scalar, arg_loc)
        b = block.add_arg(scalar, arg_loc)
        body_name = parser.texts.setdefault(m.group("body"), m.group("body"))
        inner = Operation.fast(body_name, [a, b], AttrDict(""), AttrDict(""), loc)
        value = OpResult(scalar, inner, 0)
        inner.results = (value,)
        ret = Operation.fast("stablehlo.return", [value], AttrDict(""), AttrDict(""), loc)
        ret.results = ()
        block.append(inner)
        block.append(ret)
        op.regions[0].add_block(block)
        attrs = checked_attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(parser.intern(attrs))
        op.loc = loc
        op.results = tuple(OpResult(t, op, k) for k, t in enumerate(types))
        return op, i

    def read_long(
        self, parser: Any, lines: Any, i: int, rest: str, col: int
    ) -> tuple[Operation, int]:
        m = self._LONG.match(rest)
        if m is None:
            raise Unhandled(rest[:80])
        dims = m.group("d")
        if not NAT_LIST.match(dims):
            raise Unhandled(dims)
        pairs = self._PAIR.findall(m.group("pairs"))
        operands = parser.lookup([x for x, _ in pairs] + [init for _, init in pairs])
        types = signature(m.group("sig"))
        op = Operation("stablehlo.reduce", operands)
        op.properties = AttrDict(parser.intern(f"dimensions = {i64_array(dims)}"))
        op.loc = parser.loc(col)
        k = parser.skip(lines, i)
        if k >= len(lines):
            raise Unhandled("reduce without reducer")
        header = lines[k]
        groups = list(self._REDUCER_GROUP.finditer(header))
        start = header.find("reducer(")
        if (
            len(groups) != len(pairs)
            or start < 0
            or header[:start].strip()
            or "reducer" + " ".join(g.group(0) for g in groups) + "  {" != header[start:]
        ):
            raise Unhandled("reducer")
        parser.lineno = k + 1
        block = Block(label="bb0")
        values = parser.values
        for side in (1, 3):  # each input's first argument, then each one's second
            for g in groups:
                arg = block.add_arg(type_of(g.group(side + 1)), parser.arg_loc(g.start(side) + 1))
                values[g.group(side)] = arg
        op.add_region(Region())
        op.regions[0].add_block(block)
        i, end = parser.body(lines, k + 1, block)
        if end != "}" or not block.ops:
            raise Unhandled("reducer end")
        attrs = checked_attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(parser.intern(attrs))
        op.results = tuple(OpResult(t, op, n) for n, t in enumerate(types))
        return op, i


class ManualComputation:
    """`sdy.manual_computation(%x, ..) in_shardings=[..] out_shardings=[..] manual_axes={..}
    (%a: T, ..) {` .. `} [{attrs}] : (T, ..) -> R`: one region, one block of the arguments.
    Read only: jaxlib prints it."""

    _AXES = r'\{(?:"[A-Za-z_]\w*"(?:, "[A-Za-z_]\w*")*)?\}'
    _HEAD = re.compile(
        rf"\((?P<ops>{VALUE}(?:, {VALUE})*)?\) in_shardings=\[(?P<in>.*?)\] "
        rf"out_shardings=\[(?P<out>.*?)\] manual_axes=(?P<axes>{_AXES}) "
        r"\((?P<args>[^()]*)\) \{$"
    )
    _BLOCK_ARG = re.compile(rf"(?P<name>{_ARG}): (?P<t>[^ ,{{}}]+)")
    _TRAILER = re.compile(r"(?: \{(?P<attrs>.*)\})? : (?P<sig>[^{}]+)$")

    def print(self, op: Operation, p: Any) -> str:
        raise Unsupported(op.name)

    def read(self, parser: Any, lines: Any, i: int, line: str, at: int) -> tuple[Operation, int]:
        m = self._HEAD.match(line, at)
        if m is None:
            raise Unhandled("manual_computation")
        ins = f"#sdy.sharding_per_value<[{m.group('in')}]>"
        outs = f"#sdy.sharding_per_value<[{m.group('out')}]>"
        if not (canonical_value(ins) and canonical_value(outs)):
            raise Unhandled("manual_computation shardings")
        ops = m.group("ops")
        op = Operation("sdy.manual_computation", parser.lookup(ops.split(", ") if ops else []))
        op.properties = AttrDict(parser.intern(
            f"in_shardings = {ins}, manual_axes = #sdy<manual_axes{m.group('axes')}>, "
            f"out_shardings = {outs}"
        ))
        op.loc = parser.loc(at - len("sdy.manual_computation") + 1)
        args = m.group("args")
        block = Block(label="bb0") if args else Block()
        pos = m.start("args")
        for entry in args.split(", ") if args else ():
            am = self._BLOCK_ARG.fullmatch(entry)
            if am is None:
                raise Unhandled("manual_computation argument")
            parser.values[am.group("name")] = block.add_arg(
                type_of(am.group("t")), parser.arg_loc(pos + 1)
            )
            pos += len(entry) + 2
        region = Region()
        op.add_region(region)
        region.add_block(block)
        i, end = parser.body(lines, i, block)
        tail = self._TRAILER.match(end, 1)
        if tail is None or not block.ops:
            raise Unhandled("manual_computation end")
        attrs = tail.group("attrs")
        if attrs is not None:
            check_entries(attrs, inherent=False, check=parser.check)
            op.attributes = AttrDict(parser.intern(attrs))
        op.results = tuple(OpResult(t, op, k) for k, t in enumerate(signature(tail.group("sig"))))
        return op, i


