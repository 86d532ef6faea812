"""The pieces an op's pretty syntax is declared in (formats.py), each with the two halves the
pretty printer and the pretty parser run.

A `Declared` format is the op's line after its name, as MLIR's declarative assembly formats
write it: literal text, the operands, properties in their own syntax (`dims = [0, 1]` for
`broadcast_dimensions = array<i64: 0, 1>`: properties.py), the attribute dictionary, the
types. The printer writes each piece from the op (`Unsupported` where the op holds something the
piece cannot write); the parser matches one regular expression built from the pieces and reads
each back into what the generic route would build: operand names, property entries (sorted, as
MLIR prints them), the attribute text, the result types (`Unhandled` where the text is not as
jaxlib would print it). A piece reads back exactly what it writes, so print and parse are one
declaration.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..brackets import split_top_level
from ..ir import AttrDict, Operation, Value
from ..types import Type
from .sharding_attrs import result_sharding_attrs
from .spelling import (
    Unhandled,
    check_entries,
    checked_attrs,
    same_or_functional,
    signature,
    type_of,
)


class Unsupported(Exception):
    """An op or form the pretty printer does not write: print through jaxlib instead."""


VALUE = r"%[\w$.-]+(?:#\d+)?"  # an SSA use: `%0`, `%arg1`, `%cst_2`, `%3#1`
NAT = r"(?:0|[1-9]\d*)"

# what reading a line gives: operand names, properties text, attributes text, result types
Parsed = tuple[list[str], str | None, str | None, tuple[Type, ...]]
Check = Callable[[str], bool] | None  # whether jaxlib prints an attribute value as written
TypesReader = Callable[[str, list[str]], tuple[Type, ...]]  # (text, operand names) -> types


def types_of(values: Sequence[Value]) -> list[str]:
    return [v.type.text for v in values]


def functional_type(op: Operation) -> str:
    """`(T, U) -> R` / `(T) -> (R, S)`, MLIR's functional-type."""
    ins = ", ".join(types_of(op.operands))
    outs = types_of(op.results)
    out = outs[0] if len(outs) == 1 and not outs[0].startswith("(") else f"({', '.join(outs)})"
    return f"({ins}) -> {out}"


def attr_dict(op: Operation) -> str:
    """` {attrs}`: the op's discardable attributes and its results' `sdy.sharding`."""
    body = result_sharding_attrs(op)
    if not body:
        return ""
    if op.attributes and "sdy.sharding" in body:
        body = AttrDict(items=dict(sorted(AttrDict(body).items()))).body()
    return " {" + body + "}"


# ---------------------------------------------------------------------------------------------
# Pieces: `pattern(g)` is the piece's regular expression (its groups named with prefix `g`),
# `print(op, p)` its text; the reading half depends on what the piece contributes.


class Piece:
    """Part of a declared format."""

    keys: tuple[str, ...] = ()  # the properties it always writes and reads
    optional_keys: tuple[str, ...] = ()  # those it writes and reads where the op has them
    reads_entries = False  # whether `entries` reads properties back
    n_results: int | None = None  # a piece spelling the result types: how many (None: any)

    def pattern(self, g: str) -> str:
        raise NotImplementedError

    def print(self, op: Operation, p: Any) -> str:
        raise NotImplementedError

    def entries(self, m: re.Match[str], g: str) -> list[str]:
        """The property entries (`key = value`) its text in `m` stands for."""
        return []

    def result_types(self, g: str) -> tuple[str, TypesReader] | None:
        """Where its text in the match spells the result types, and the reader of that text
        (None: it spells none)."""
        return None

    def expression(self, name: str) -> str:
        """The printing half as a Python expression of `op` and `p`, this piece named `name`
        (see `Declared`)."""
        return f"{name}(op, p)"


class Text(Piece):
    """Literal text (`, dims = `)."""

    def __init__(self, text: str):
        self.text = text

    def pattern(self, g: str) -> str:
        return re.escape(self.text)

    def print(self, op: Operation, p: Any) -> str:
        return self.text

    def expression(self, name: str) -> str:
        return repr(self.text)


class Operands(Piece):
    """`%a, %b`: all the op's operands; `count` None for one or more, else exactly that many
    (0 with `optional`: none or more)."""

    def __init__(self, count: int | None = None, optional: bool = False):
        self.count = count
        self.optional = optional
        self.least = count if count is not None else 0 if optional else 1
        self.most = count if count is not None else 1 << 30

    def pattern(self, g: str) -> str:
        if self.count is not None:
            return f"(?P<{g}>{', '.join([VALUE] * self.count)})"
        return f"(?P<{g}>{VALUE}(?:, {VALUE})*)" + ("?" if self.optional else "")

    def print(self, op: Operation, p: Any) -> str:
        return p.operands(op)  # (the count is checked with the op's shape)

    def expression(self, name: str) -> str:
        return "p.operands(op)"


class Attrs(Piece):
    """` {attr-dict}`: the discardable attributes and the results' shardings, or with
    `results=False` the attributes alone (ops whose results carry no sharding of their own
    in this syntax: a sharding op's is its operand's), sorted as MLIR prints them."""

    def __init__(self, results: bool = True):
        self.results = results

    def pattern(self, g: str) -> str:
        return rf"(?: \{{(?P<{g}>.*)\}})?"

    def expression(self, name: str) -> str:
        return "attr_dict(op)" if self.results else super().expression(name)

    def print(self, op: Operation, p: Any) -> str:
        if self.results:
            return attr_dict(op)
        if any(r.sharding is not None for r in op.results):
            raise Unsupported(f"a result sharding on {op.name}")
        return f" {{{op.attributes.sorted_body()}}}" if op.attributes else ""


class OwnAttrs(Attrs):
    """` {attr-dict}` that also holds the op's own attributes `own` (those it has no syntax for:
    a custom_call's `backend_config`, a convolution's group counts): they are its properties,
    the others its attributes, all printed in one sorted dictionary."""

    def __init__(self, own: frozenset[str]):
        super().__init__()
        self.own = own
        self.optional_keys = tuple(sorted(own))

    def expression(self, name: str) -> str:
        return Piece.expression(self, name)

    def print(self, op: Operation, p: Any) -> str:
        props = op.properties
        items = {k: str(props[k]) for k in self.optional_keys if k in props}
        body = result_sharding_attrs(op)
        if body:
            items.update(AttrDict(body).items())
        return f" {{{AttrDict(items=dict(sorted(items.items()))).body()}}}" if items else ""

    def read(self, text: str | None, given: list[str], check: Check) -> tuple[list[str], str]:
        """Split the dictionary as jaxlib does (own attributes join the properties `given`,
        the others stay attributes), both checked as MLIR prints them: (entries, attributes)."""
        names = {e.partition(" = ")[0] for e in given}
        props = list(given)
        attrs: list[str] = []
        entries = [e.strip() for e in split_top_level(text)] if text else []
        if text is not None and ", ".join(entries) != text:
            raise Unhandled("attribute spacing")
        for entry in entries:
            key = entry.partition(" = ")[0]
            if key in names:
                raise Unhandled(f"{key} twice")
            (props if key in self.own else attrs).append(entry)
        props.sort(key=lambda e: e.partition(" = ")[0])
        check_entries(", ".join(props), inherent=True, check=check)
        attr_text = ", ".join(attrs)
        check_entries(attr_text, inherent=False, check=check)
        return props, attr_text


class Optional(Piece):
    """Pieces printed when the op has property `key` (or, without a key, operands), and read
    when their text is there."""

    def __init__(self, *pieces: Piece, key: str | None = None):
        self.pieces = pieces
        self.key = key
        self.optional_keys = tuple(k for p in pieces for k in (*p.keys, *p.optional_keys))

    def pattern(self, g: str) -> str:
        inner = "".join(p.pattern(f"{g}_{i}") for i, p in enumerate(self.pieces))
        return f"(?P<{g}>{inner})?"

    def present(self, op: Operation) -> bool:
        return self.key in op.properties if self.key is not None else bool(op.operands)

    def print(self, op: Operation, p: Any) -> str:
        if not self.present(op):
            return ""
        return "".join([piece.print(op, p) for piece in self.pieces])


# ---------------------------------------------------------------------------------------------
# Types: the last piece of most formats (` : ...`)


class Types(Piece):
    """` : ` and the types; `read(text, operands)` gives the result types."""

    group = r"[^{}]+"

    def pattern(self, g: str) -> str:
        return f" : (?P<{g}>{self.group})"

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        raise NotImplementedError

    def result_types(self, g: str) -> tuple[str, TypesReader] | None:
        return g, self.read


class SameOrFunctional(Types):
    """`T` when every operand and the one result have type T, else functional-type
    (StableHLO's custom<SameOperandsAndResultType>)."""

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        return same_or_functional(text)

    def print(self, op: Operation, p: Any) -> str:
        types = types_of(op.operands) + types_of(op.results)
        if len(op.results) == 1 and all(t == types[0] for t in types):
            return " : " + types[0]
        return " : " + functional_type(op)


class Functional(Types):
    """`(T, U) -> R`."""

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        if not text.startswith("("):
            raise Unhandled(text)
        return signature(text)

    def print(self, op: Operation, p: Any) -> str:
        return " : " + functional_type(op)


_FUNCTIONAL = Functional()


class ResultType(Types):
    """`T`: the one result's type."""

    group = r"[^ {}]+"

    n_results = 1

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        return (type_of(text),)

    def print(self, op: Operation, p: Any) -> str:
        return " : " + op.results[0].type.text


class SelectTypes(Types):
    """`P, T`: the predicate's type and the one shared by both branches and the result
    (a form whose types differ: functional-type, read only)."""

    _PAIR = re.compile(r"([^ ,{}()]+), ([^ ,{}()]+)$")
    n_results = 1

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        m = self._PAIR.match(text)
        if m is None:
            return _FUNCTIONAL.read(text, operands)
        type_of(m.group(1))
        return (type_of(m.group(2)),)

    def print(self, op: Operation, p: Any) -> str:
        if len(op.operands) != 3:
            raise Unsupported("select types")
        pred, a, b = types_of(op.operands)
        result = op.results[0].type.text
        if a != result or b != result or pred == result:
            raise Unsupported("select types")
        return f" : {pred}, {result}"


class Arrow(Types):
    """`T -> R` (`-> (R, S)` for two results): one operand's type, the results' (chlo)."""

    _ONE = r"[^ ,{}()]+"

    def __init__(self, results: int = 1):
        self.n = self.n_results = results
        outs = self._ONE if results == 1 else rf"\({', '.join([self._ONE] * results)}\)"
        self.group = f"{self._ONE} -> {outs}"

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        t, _, outs = text.partition(" -> ")
        type_of(t)
        names = outs[1:-1].split(", ") if self.n > 1 else [outs]
        return tuple(type_of(n) for n in names)

    def print(self, op: Operation, p: Any) -> str:
        if len(op.operands) != 1:
            raise Unsupported(op.name)
        outs = types_of(op.results)
        out = outs[0] if self.n == 1 else f"({', '.join(outs)})"
        return f" : {op.operands[0].type.text} -> {out}"


class OperandTypes(Types):
    """`T, U`: the operands' types, of an op without results (a terminator, sharding_group)."""

    n_results = 0

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        types = text.split(", ")
        if len(types) != len(operands):
            raise Unhandled("types")
        for t in types:
            type_of(t)
        return ()

    def print(self, op: Operation, p: Any) -> str:
        return " : " + ", ".join(types_of(op.operands))


class PairwiseTypes(Types):
    """`T, U`: the operands' types, which are also the results' (optimization_barrier)."""

    def read(self, text: str, operands: list[str]) -> tuple[Type, ...]:
        types = tuple(type_of(t) for t in text.split(", "))
        if len(types) != len(operands):
            raise Unhandled("types")
        return types

    def print(self, op: Operation, p: Any) -> str:
        ins = types_of(op.operands)
        if ins != types_of(op.results):
            raise Unsupported("pairwise types")
        return " : " + ", ".join(ins)


# ---------------------------------------------------------------------------------------------
# A declared format


class Declared:
    """An op whose line is `pieces` after its name: printed and read by the same pieces.

    `hint`: how the printer names the op's result (`%cst`: see `constant_hint`), None for
    `%N`. `result_names`: the names the op gives its results (`%values, %indices`); the
    printer does not write those (jaxlib does), the parser reads them as written."""

    def __init__(
        self,
        *pieces: Piece,
        hint: Callable[[Operation], str] | None = None,
        result_names: tuple[str, ...] = (),
    ):
        self.pieces = pieces
        self.hint = hint
        self.result_names = result_names
        named = list(_named(pieces, "p", None))  # (piece, its group, its optional group)
        self.operands = next((p for p, _, _ in named if isinstance(p, Operands)), None)
        self.attrs = next((p for p, _, _ in named if isinstance(p, Attrs)), None)
        self.own = self.attrs if isinstance(self.attrs, OwnAttrs) else None
        self.required = frozenset(k for p in pieces for k in p.keys)
        self.allowed = self.required | {k for p in pieces for k in p.optional_keys}
        # the parser's half: one expression, the pieces reading properties back, and indices
        # into the match's groups (-1: none) of the operands, the attributes and the types
        self.regex = re.compile("".join(p.pattern(f"p{i}") for i, p in enumerate(pieces)) + "$")
        self.entry_readers = [(p, g, within) for p, g, within in named if p.reads_entries]
        index = self.regex.groupindex
        self.ops_index = self.attrs_index = self.types_index = -1
        self.n_results: int | None = 0  # (no types written: no results)
        for piece, g, _ in named:
            if piece is self.operands:
                self.ops_index = index[g] - 1
            elif piece is self.attrs:
                self.attrs_index = index[g] - 1
            elif (found := piece.result_types(g)) is not None and self.types_index < 0:
                self.types_index = index[found[0]] - 1
                self.read_types = found[1]
                self.n_results = piece.n_results
        # the printer's half
        self.key_list = sorted(self.required)  # (the keys as MLIR prints them: sorted)
        self.bare = self.attrs is None  # no attribute dictionary in the syntax
        self.printable = not result_names
        self.least = self.operands.least if self.operands is not None else 0
        self.most = self.operands.most if self.operands is not None else 0
        # compiled (as MLIR generates C++ from an assembly format): one function writing the
        # pieces in turn, a third faster than a loop calling each
        env: dict[str, Any] = {"check": self.check, "hint": hint, "attr_dict": attr_dict}
        exprs = []
        for i, piece in enumerate(pieces):
            env[f"w{i}"] = piece.print
            exprs.append(piece.expression(f"w{i}"))
        source = (
            "def write(op, p, name):\n"
            "    check(op)\n"
            f"    body = {' + '.join(exprs) or repr('')}\n"
            f"    return p.define(op{', hint(op)' if hint else ''}) + name + body\n"
        )
        exec(source, env)  # noqa: S102 - code built from the pieces above, no input text
        self.write: Callable[[Operation, Any, str], str] = env["write"]

    # -----------------------------------------------------------------------------------------
    def read(self, rest: str, check: Check = None) -> Parsed:
        """The op line's text after the name -> what the generic route would build."""
        m = self.regex.match(rest)
        if m is None:
            raise Unhandled(rest[:80])
        groups = m.groups()
        ops = groups[self.ops_index] if self.ops_index >= 0 else None
        operands = ops.split(", ") if ops else []
        entries: list[str] = []
        for piece, g, within in self.entry_readers:
            if within is None or m.group(within) is not None:
                entries += piece.entries(m, g)
        text = groups[self.attrs_index] if self.attrs_index >= 0 else None
        if self.own is not None:
            entries, text = self.own.read(text, entries, check)
            attrs = text or None
        else:
            attrs = checked_attrs(text) if text is not None else None
            if len(entries) > 1:
                entries.sort()
        text = groups[self.types_index] if self.types_index >= 0 else None
        # (absent: no types, or those of an optional group not written)
        types = self.read_types(text, operands) if text is not None else ()
        return operands, ", ".join(entries) if entries else None, attrs, types

    def print(self, op: Operation, p: Any, name: str) -> str:
        """The op's line (without indentation), its results named by `p`; `name` as printed."""
        return self.write(op, p, name)

    def check(self, op: Operation) -> None:
        """`Unsupported` unless the op has the shape this format writes: no regions, its
        properties, operand and result counts, attributes only with an attribute dictionary."""
        if op.regions or op.successors or not self.printable:
            raise Unsupported(op.name)
        if self.allowed:
            keys = op.properties.keys()
            if keys != self.key_list and not self.required <= set(keys) <= self.allowed:
                raise Unsupported(op.name)
        elif op.properties:
            raise Unsupported(op.name)
        n = len(op.operands)
        if n < self.least or n > self.most or (
            self.n_results is not None and len(op.results) != self.n_results
        ):
            raise Unsupported(op.name)
        if self.bare and (op.attributes or any(r.sharding for r in op.results)):
            raise Unsupported(op.name)


def _named(
    pieces: Sequence[Piece], prefix: str, within: str | None
) -> Iterator[tuple[Piece, str, str | None]]:
    """Each piece with the name of its group (`p1`, an optional group's `p3_0`) and that of
    the optional group holding it."""
    for i, piece in enumerate(pieces):
        g = f"{prefix}{i}" if within is None else f"{prefix}_{i}"
        yield piece, g, within
        if isinstance(piece, Optional):
            yield from _named(piece.pieces, g, g)
