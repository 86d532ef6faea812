"""MLIR generic-form text <-> shardc IR: one parser and one printer for the generic syntax.

The generic form (`"stablehlo.add"(%0, %1) <{props}> ({regions}) {attrs} : (T, T) -> T loc(..)`)
is uniform for every op of every dialect, which is what makes the road lossless: attributes stay
raw text until something reads them. The importer (compiler/) asks jaxlib to print any module in
this form first; the printer writes it back, and jaxlib re-prints it pretty on request.
The parser is line-oriented (the MLIR printer puts one op per line) and linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ..brackets import balanced, split_top_level
from ..brackets import match_close as _match_close
from ..errors import ParseError
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
from ..types import Type, parse_type, split_function_type
from .sharding_attrs import (
    INTERPRETED_PROPERTIES,
    absorb_op,
    func_properties,
    result_sharding_attrs,
)

# the signature runs to the first ` loc(` (possessive: no backtracking over it, a third of
# the parse's time with a lazy `.*?`); a line where that is not the location's start takes the
# exact path (`parse_op_line`'s slow route)
_FAST_OP = re.compile(
    r'(?:(%[^"=]*?) = )?"([^"]+)"\(([^)]*)\)(?: <\{(.*?)\}>)?(?: \{(.*?)\})? : '
    r'([^ ]*+(?: (?!loc\()[^ ]*+)*+)(?: (loc\(.*\)))?$'
)
_OP_HEAD = re.compile(r'(?:(%[^"=]*?) = )?"([^"]+)"\(([^)]*)\)')
_BLOCK = re.compile(r"\^(\w+)(?:\((.*)\))?:$")

_DIGITS_1_TO_9 = frozenset("123456789")  # (no leading zero: the number prints back as it was)

# printers join their lines into chunks of this many as they go (see `_Printer.print_op`)
FOLD_LINES = 4096



_type = parse_type


def _balanced(text: str | None) -> bool:
    """Cheap check that a fast-path capture did not cut a nested attribute in two.

    A capture without `{` cannot have stopped at an inner `}`: its closing brace is the outer
    one. Otherwise the bracket counts must match (strings go to the exact slow path)."""
    if text is None:
        return True
    if '"' in text:
        return False
    if "{" not in text:
        return True
    return balanced(text)


class _Frame:
    __slots__ = ("op", "res_names", "block", "lineno")

    def __init__(self, op: Operation, res_names: list[tuple[str, int]], lineno: int):
        self.op = op
        self.res_names = res_names
        self.block: Block | None = None
        self.lineno = lineno


class _Parser:
    def __init__(self, text: str, source_name: str | None):
        self.text = text
        self.source_name = source_name or "<input>"
        self.values: dict[str, Value] = {}
        self.aliases: list[str] = []
        self.texts: dict[str, str] = {}
        # with `parse_generic(absorb=True)`: the ops with something for `absorb_sharding_attrs`
        # to read (an interpreted op, `sdy.sharding` in the attributes, any op off the fast path)
        self.to_absorb: list[Operation] | None = None
        # a signature's result types, parsed once (every layer repeats its signatures)
        self.result_types: dict[str, tuple[Type, ...]] = {}
        self.lineno = 0

    def error(self, msg: str) -> ParseError:
        return ParseError(f"{self.source_name}:{self.lineno}: {msg}")

    # -----------------------------------------------------------------------------------------
    def parse(self) -> Module:
        stack: list[_Frame] = []
        top: list[Operation] = []
        fast_match = _FAST_OP.match
        texts = self.texts
        result_types = self.result_types
        new_op = Operation.fast
        to_absorb = self.to_absorb
        interpreted = INTERPRETED_PROPERTIES
        block: Block | None
        lineno = 0
        for lineno, raw in enumerate(_lines(self.text), 1):
            line = raw.strip()
            if not line or line.startswith("//"):
                continue
            c = line[0]
            if c == '"' or c == "%":
                m = fast_match(line)
                if m is not None:
                    # `build_fast`, inlined: the hot path of the import (an op a line)
                    res_text, name, opnd_text, props, attrs, sig, loc = m.groups()
                    if (
                        (props is None or ('"' not in props and ("{" not in props or balanced(props))))
                        and (attrs is None or ('"' not in attrs and ("{" not in attrs or balanced(attrs))))
                    ):
                        values = self.values
                        try:
                            operands = [values[v] for v in opnd_text.split(", ")] if opnd_text else []
                        except KeyError as e:
                            self.lineno = lineno
                            raise self.error(f"use of undefined value {e.args[0]}") from None
                        op = new_op(
                            texts.setdefault(name, name),
                            operands,
                            AttrDict(texts.setdefault(props, props)) if props is not None else AttrDict(""),
                            AttrDict(texts.setdefault(attrs, attrs)) if attrs is not None else AttrDict(""),
                            loc,
                        )
                        if loc is not None and loc.startswith("loc(#loc") and loc[8:9] in _DIGITS_1_TO_9:
                            number = loc[8:-1]
                            if number.isascii() and number.isdigit() and loc[-1] == ")":
                                op._loc = int(number)  # (`set_loc_alias`: an int is half the string)
                        types = result_types.get(sig)
                        if types is None:
                            self.lineno = lineno
                            types = self.signature_results(name, sig)
                        if len(types) == 1:
                            result = OpResult(types[0], op, 0)
                            op.results = (result,)
                        else:
                            result = None
                            op.results = tuple([OpResult(t, op, i) for i, t in enumerate(types)])
                        if stack:
                            frame = stack[-1]
                            block = frame.block
                            if block is None:
                                block = frame.block = Block()
                                frame.op.regions[-1].add_block(block)
                            op.parent = block
                            block.ops.append(op)
                        else:
                            top.append(op)
                        if to_absorb is not None and (
                            (attrs is not None and "sdy.sharding" in attrs) or name in interpreted
                        ):
                            to_absorb.append(op)
                        if res_text is None:
                            if op.results:
                                self.lineno = lineno
                                self.define_results(op, [])
                        elif result is not None and "," not in res_text and ":" not in res_text:
                            values[res_text] = result
                        else:
                            self.lineno = lineno
                            self.define_results(op, _result_names(res_text))
                        continue
                self.lineno = lineno
                op, res_names, opens = self.parse_op_line(line)
                if to_absorb is not None:
                    to_absorb.append(op)
                if stack:
                    block = stack[-1].block
                    if block is None:
                        frame = stack[-1]
                        block = frame.block = Block()
                        frame.op.regions[-1].add_block(block)
                    op.parent = block
                    block.ops.append(op)
                else:
                    top.append(op)
                if opens:
                    if op.name == "func.func":
                        self.values = {}
                    op.add_region(Region())
                    stack.append(_Frame(op, res_names, lineno))
                elif len(res_names) == 1 and res_names[0][1] == 1 and len(op.results) == 1:
                    self.values[res_names[0][0]] = op.results[0]
                else:
                    self.define_results(op, res_names)
            elif c == "}":
                self.lineno = lineno
                if not stack:
                    raise self.error(f"unexpected '}}': {line}")
                frame = stack[-1]
                if line.startswith("}, {"):
                    frame.op.add_region(Region())
                    frame.block = None
                elif line.startswith("})"):
                    stack.pop()
                    self.parse_trailer(frame.op, line[2:])
                    self.define_results(frame.op, frame.res_names)
                else:
                    raise self.error(f"unexpected line: {line}")
            elif c == "^":
                self.lineno = lineno
                if not stack:
                    raise self.error(f"block outside a region: {line}")
                frame = stack[-1]
                frame.block = self.parse_block_header(line)
                frame.op.regions[-1].add_block(frame.block)
            elif c == "#":
                self.lineno = lineno
                if " = loc(" not in line:
                    raise self.error(f"unexpected attribute alias: {line[:80]}")
                self.aliases.append(line)  # parsed when the module's loc_aliases are read
            elif line.startswith("{-#"):
                break  # dialect resources: not used by stablehlo text that JAX emits
            else:
                self.lineno = lineno
                raise self.error(f"cannot parse line: {line[:120]}")
        self.lineno = lineno  # (the fast path leaves it behind: the errors below name the end)
        if stack:
            raise self.error(f"unterminated region of {stack[-1].op.name}")
        if len(top) != 1 or top[0].name != "builtin.module":
            raise ParseError("expected exactly one top-level builtin.module")
        module = Module(top[0], loc_alias_text="\n".join(self.aliases))
        return module

    # -----------------------------------------------------------------------------------------
    def define_results(self, op: Operation, res_names: list[tuple[str, int]]) -> None:
        i = 0
        for name, count in res_names:
            if count == 1:
                self.values[name] = op.results[i]
            else:
                for k in range(count):
                    self.values[f"{name}#{k}"] = op.results[i + k]
            i += count
        if i != len(op.results):
            raise self.error(f"{op.name} defines {i} names for {len(op.results)} results")

    def lookup(self, name: str) -> Value:
        try:
            return self.values[name]
        except KeyError:
            raise self.error(f"use of undefined value {name}") from None

    def parse_op_line(self, line: str) -> tuple[Operation, list[tuple[str, int]], bool]:
        fast = _FAST_OP.match(line)
        if fast is not None and _balanced(fast.group(4)) and _balanced(fast.group(5)):
            return self.build_fast(fast)
        m = _OP_HEAD.match(line)
        if not m:
            raise self.error(f"expected an op in generic form: {line[:120]}")
        res_text, name, opnd_text = m.groups()
        res_names: list[tuple[str, int]] = []
        if res_text:
            for r in res_text.split(","):
                r = r.strip()
                nm, _, cnt = r.partition(":")
                res_names.append((nm, int(cnt) if cnt else 1))
        operands = [self.lookup(v.strip()) for v in opnd_text.split(",")] if opnd_text else []
        op = FuncOp(name, operands) if name == "func.func" else Operation(name, operands)
        rest = line[m.end() :]
        pos = 0
        if rest.startswith(" ["):
            end = _match_close(rest, 1)
            op.successors = rest[1 : end + 1]
            pos = end + 1
        if rest.startswith(" <{", pos):
            end = _match_close(rest, pos + 1)
            op.properties = AttrDict(rest[pos + 3 : end - 1])
            pos = end + 1
        if rest.startswith(" ({", pos) and rest.endswith("({"):
            return op, res_names, True
        self.parse_trailer(op, rest[pos:])
        return op, res_names, False

    def build_fast(self, m: re.Match[str]) -> tuple[Operation, list[tuple[str, int]], bool]:
        res_text, name, opnd_text, props, attrs, sig, loc = m.groups()
        res_names = _result_names(res_text) if res_text else []
        values = self.values
        try:
            operands = [values[v] for v in opnd_text.split(", ")] if opnd_text else []
        except KeyError as e:
            raise self.error(f"use of undefined value {e.args[0]}") from None
        texts = self.texts  # identical attribute texts (every layer repeats them) stored once
        op = Operation.fast(
            texts.setdefault(name, name),
            operands,
            AttrDict(texts.setdefault(props, props)) if props is not None else AttrDict(""),
            AttrDict(texts.setdefault(attrs, attrs)) if attrs is not None else AttrDict(""),
            loc,
        )
        if loc is not None and loc.startswith("loc(#loc") and loc[8:9] in _DIGITS_1_TO_9:
            number = loc[8:-1]
            if number.isascii() and number.isdigit() and loc[-1] == ")":
                op.set_loc_alias(int(number))  # (an int is half the string it prints as)
        types = self.result_types.get(sig)
        if types is None:
            types = self.signature_results(name, sig)
        if len(types) == 1:
            op.results = (OpResult(types[0], op, 0),)
        else:
            op.results = tuple([OpResult(t, op, i) for i, t in enumerate(types)])
        return op, res_names, False

    def signature_results(self, name: str, sig: str) -> tuple[Type, ...]:
        """The result types of the op signature `sig` (`(T, T) -> T`), parsed once per text."""
        try:
            _, outs = split_function_type(sig)
        except ValueError:
            raise self.error(f"bad type signature of {name}: {sig[:80]}") from None
        types = self.result_types[sig] = tuple(_type(t) for t in outs)
        return types

    def parse_trailer(self, op: Operation, rest: str) -> None:
        """` {attrs} : (T) -> T loc(...)`: attributes, result types and location."""
        pos = 0
        if rest.startswith(" {"):
            end = _match_close(rest, 1)
            op.attributes = AttrDict(rest[2:end])
            pos = end + 1
        if not rest.startswith(" : ", pos):
            raise self.error(f"expected ' : type' after {op.name}: {rest[pos : pos + 80]}")
        sig = rest[pos + 3 :]
        cut = sig.rfind(" loc(")
        if cut >= 0:
            op.loc = sig[cut + 1 :]
            sig = sig[:cut]
        try:
            _, outs = split_function_type(sig)
        except ValueError:
            raise self.error(f"bad type signature of {op.name}: {sig[:80]}") from None
        op.results = tuple([OpResult(parse_type(t), op, i) for i, t in enumerate(outs)])

    def parse_block_header(self, line: str) -> Block:
        m = _BLOCK.match(line)
        if not m:
            raise self.error(f"bad block header: {line[:120]}")
        block = Block(label=m.group(1))
        if m.group(2):
            simple = _simple_block_args(m.group(2))
            if simple is not None:  # the common case: no nested types, plain locations
                for arg_name, type_text, arg_loc in simple:
                    self.values[arg_name] = block.add_arg(parse_type(type_text), arg_loc or None)
                return block
            for entry in split_top_level(m.group(2)):
                entry = entry.strip()
                name, _, rest = entry.partition(": ")
                loc = None
                cut = rest.find(" loc(")
                if cut >= 0:
                    loc = rest[cut + 1 :]
                    rest = rest[:cut]
                arg = block.add_arg(parse_type(rest), loc)
                self.values[name.strip()] = arg
        return block


def _result_names(res_text: str) -> list[tuple[str, int]]:
    """`%0` or `%0:2, %1` (a fast-path op's result names) as (name, count) pairs."""
    if "," not in res_text and ":" not in res_text:
        return [(res_text, 1)]
    out = []
    for r in res_text.split(", "):
        nm, _, cnt = r.partition(":")
        out.append((nm, int(cnt) if cnt else 1))
    return out


def _lines(text: str, chunk: int = 1 << 20) -> Iterator[str]:
    """`text.split("\n")`, split about `chunk` characters at a time: the lines of a whole
    module at once would cost as much memory again as its text (a header per line)."""
    start, n = 0, len(text)
    if not n:
        yield ""
    while start < n:
        end = text.find("\n", start + chunk)
        if end < 0:
            yield from text[start:].split("\n")
            return
        yield from text[start:end].split("\n")
        start = end + 1
    if n and text[-1] == "\n" and start == n:
        yield ""


def op_line_reader(
    values: dict[str, Value], texts: dict[str, str]
) -> Callable[[str], tuple[Operation, list[tuple[str, int]], bool]]:
    """The generic parser's reading of one op line (`"name"(%a) <{..}> {..} : (T) -> T`, or its
    head ending in `({` when it opens regions) over the caller's value and text tables: the op,
    its result names with counts, and whether regions follow. For the pretty parser's generic
    lines; it raises `ParseError` on what it cannot read."""
    parser = _Parser("", None)
    parser.values = values
    parser.texts = texts
    return parser.parse_op_line


# a block argument with a type without nested brackets or commas and a plain location
_SIMPLE_ARG = re.compile(
    r'(%[\w$.-]+): ((?:tensor<[^<>,"]*>|[\w.!]+))(?: (loc\((?:#[\w.$-]+|"[^"\\]*":\d+:\d+)\)))?'
)


def _simple_block_args(text: str) -> list[tuple[str, str, str]] | None:
    """`%a: T loc(..), %b: T` as (name, type, loc) triples when every argument is simple
    (see `_SIMPLE_ARG`), else None (the bracket-aware split handles the rest)."""
    out = []
    for i, entry in enumerate(text.split(", %")):
        m = _SIMPLE_ARG.fullmatch(entry if i == 0 else "%" + entry)
        if m is None:
            return None
        out.append((m.group(1), m.group(2), m.group(3) or ""))
    return out


def parse_generic(text: str, source_name: str | None = None, absorb: bool = False) -> Module:
    """Parse MLIR in generic op form (as jaxlib prints it) into a `Module`; `absorb`: then
    `absorb_sharding_attrs` it, visiting only the ops the parse saw something to absorb on."""
    parser = _Parser(text, source_name)
    if absorb:
        parser.to_absorb = []
    try:
        module = parser.parse()
    except ValueError as e:
        raise parser.error(str(e)) from None
    module.source_name = source_name
    if parser.to_absorb is not None:
        for op in parser.to_absorb:  # (in walk order, as `absorb_sharding_attrs` goes)
            absorb_op(op)
    return module


# ---------------------------------------------------------------------------------------------
# Printer


class _Printer:
    def __init__(self, with_locs: bool):
        self.names: dict[Value, str] = {}  # (values hash by identity)
        self.next_value = 0
        self.next_arg = 0
        self.out: list[str] = []
        self.with_locs = with_locs

    def name_of(self, v: Value) -> str:
        name = self.names.get(v)
        if name is None:
            raise ValueError(f"value used before it is defined: {v!r}")
        return name

    def print_op(self, op: Operation, indent: str) -> None:
        """Print `op` and everything nested in it; an explicit stack, so nesting depth is data."""
        # work items: a finished line, an (op, indent) to print, or a (block, indent) to open
        stack: list[str | tuple[Operation | Block, str]] = [(op, indent)]
        out = self.out
        first = len(out)
        while stack:
            if len(out) - first > FOLD_LINES:
                # lines joined into one chunk as they come: a line's object header costs as
                # much as its text, and all lines would be alive until the final join
                out[first:] = ["\n".join(out[first:])]
                first += 1
            item = stack.pop()
            if isinstance(item, str):
                self.out.append(item)
            elif isinstance(item[0], Operation):
                self._print_one(item[0], item[1], stack)
            else:
                self._print_block_header(item[0], item[1])
                inner = item[1] + "  "
                stack.extend((o, inner) for o in reversed(item[0].ops))

    def _print_one(
        self, op: Operation, indent: str, stack: list[str | tuple[Operation | Block, str]]
    ) -> None:
        """Print `op`'s own line(s); its regions' blocks go on `stack`, then its closing line."""
        head = ""
        n = len(op.results)
        if n:
            name = f"%{self.next_value}"
            self.next_value += 1
            if n == 1:
                self.names[op.results[0]] = name
                head = f"{name} = "
            else:
                for i, r in enumerate(op.results):
                    self.names[r] = f"{name}#{i}"
                head = f"{name}:{n} = "
        names = self.names
        try:
            operands = ", ".join(names[v] for v in op.operands)
        except KeyError:
            raise ValueError(f"an operand of {op.name} is used before it is defined") from None
        parts = [f'{indent}{head}"{op.name}"({operands})']
        if op.successors:
            parts.append(" " + op.successors)
        props = func_properties(op) if isinstance(op, FuncOp) else op.properties
        if props:
            parts.append(" <{" + props.body() + "}>")
        attrs = result_sharding_attrs(op)
        nested: list[str | tuple[Operation | Block, str]] = []
        if op.regions:
            parts.append(" ({")
            self.out.append("".join(parts))
            for ri, region in enumerate(op.regions):
                if ri:
                    nested.append(indent + "}, {")
                nested.extend((block, indent) for block in region.blocks)
            parts = [indent + "})"]
        if attrs:
            parts.append(" {" + attrs + "}")
        ins = ", ".join([v.type.text for v in op.operands])
        outs = ", ".join([r.type.text for r in op.results])
        if n != 1 or outs.startswith("("):
            outs = f"({outs})"
        parts.append(f" : ({ins}) -> {outs}")
        if self.with_locs and op.loc:
            parts.append(" " + op.loc)
        closing = "".join(parts)
        if not op.regions:
            self.out.append(closing)
            return
        stack.append(closing)
        stack.extend(reversed(nested))

    def _print_block_header(self, block: Block, indent: str) -> None:
        """Name the block's arguments and print its label line where one is needed."""
        # an empty block needs its label: `({\n})` would be a region with no block at all
        multi = block.label is not None and block.parent and len(block.parent.blocks) > 1
        if block.args or multi or not block.ops:
            args = []
            for a in block.args:
                name = f"%arg{self.next_arg}"
                self.next_arg += 1
                self.names[a] = name
                loc = f" {a.loc}" if self.with_locs and a.loc else ""
                args.append(f"{name}: {a.type}{loc}")
            label = block.label or "bb0"
            self.out.append(f"{indent}^{label}" + (f"({', '.join(args)})" if args else "") + ":")


def print_generic(module: Module, with_locs: bool = True) -> str:
    """Print `module` in MLIR generic op form (jaxlib parses it back)."""
    p = _Printer(with_locs)
    if with_locs:
        for alias in module.loc_alias_order:
            p.out.append(f"{alias} = {module.loc_aliases[alias]}")
    p.print_op(module.op, "")
    p.out.append("")  # the final newline, without copying the whole text once more
    return "\n".join(p.out)


__all__ = ["parse_generic", "print_generic"]
