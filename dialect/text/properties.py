"""Properties in an op's own syntax: the codecs between a property's attribute text and its
spelling in the op's line (`[0, 1]` for `array<i64: 0, 1>`, `GT` for `#stablehlo<comparison_direction
GT>`), and the pieces that write and read properties (`Prop`, and those that spell several, or
one in a syntax of its own: dot dimension numbers, slice ranges, a convolution's window, a
constant's value). Each codec's `read` gives back the text its `write` was given.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..brackets import split_top_level
from ..ir import Operation
from ..types import TensorType, Type
from .directives import NAT, Piece, TypesReader, Unsupported
from .spelling import (
    INT,
    INT_LIST,
    NAT_LIST,
    Unhandled,
    canonical_value,
    dense_as_printed,
    i64_array,
    type_of,
)


class Codec:
    """One property's spelling in an op's syntax: `pattern` matches it, `read` turns the match
    into the attribute text (`Unhandled` unless jaxlib prints it so), `write` the attribute
    text into the syntax (`Unsupported` unless `read` gives it back)."""

    pattern = ""

    def read(self, text: str) -> str:
        raise NotImplementedError

    def write(self, raw: str) -> str:
        raise NotImplementedError


class I64List(Codec):
    """`[0, 1]` <-> `array<i64: 0, 1>` (`[]` <-> `array<i64>`); `signed`: negative entries."""

    pattern = r"\[[0-9, -]*\]"

    def __init__(self, signed: bool = False):
        self.signed = signed
        self.items = INT_LIST if signed else NAT_LIST

    def read(self, text: str) -> str:
        items = text[1:-1]
        if not self.items.match(items):
            raise Unhandled(items)
        return i64_array(items)

    def write(self, raw: str) -> str:
        return _write_i64_list(raw, self.signed)


@lru_cache(maxsize=4096)
def _write_i64_list(raw: str, signed: bool) -> str:
    if raw == "array<i64>":
        return "[]"
    if raw.startswith("array<i64: ") and raw.endswith(">"):
        items = raw[11:-1]
        if items and (INT_LIST if signed else NAT_LIST).match(items):
            return f"[{items}]"
    raise Unsupported(f"dimension list {raw}")


class I64(Codec):
    """`N` <-> `N : i64` (`signed`: negative numbers too)."""

    def __init__(self, signed: bool = False):
        self.pattern = INT if signed else NAT
        self.number = re.compile(f"{self.pattern} : i64$")

    def read(self, text: str) -> str:
        return f"{text} : i64"

    def write(self, raw: str) -> str:
        if not self.number.match(raw):
            raise Unsupported(f"integer {raw}")
        return raw[:-6]


class Enum(Codec):
    """`GT` <-> `#stablehlo<comparison_direction GT>`."""

    pattern = "[A-Z]+"

    def __init__(self, kind: str):
        self.prefix = f"#stablehlo<{kind} "
        self.value = re.compile(re.escape(self.prefix) + r"([A-Z]+)>$")

    def read(self, text: str) -> str:
        return f"{self.prefix}{text}>"

    def write(self, raw: str) -> str:
        m = self.value.match(raw)
        if m is None:
            raise Unsupported(f"enum {raw}")
        return m.group(1)


class Wrapped(Codec):
    """`<@mesh, [..]>` <-> `#sdy.sharding<@mesh, [..]>`: an attribute whose kind the op's syntax
    fixes (`prefix` and `suffix` left out), `checked` here as MLIR prints it (else by the own
    attribute dictionary's check, see `OwnAttrs`)."""

    def __init__(self, prefix: str, pattern: str, suffix: str = "", checked: bool = True):
        self.prefix = prefix
        self.suffix = suffix
        self.pattern = pattern
        self.checked = checked
        self.whole = re.compile(pattern + "$")

    def read(self, text: str) -> str:
        raw = self.prefix + text + self.suffix
        if self.checked and not canonical_value(raw):
            raise Unhandled(raw)
        return raw

    def write(self, raw: str) -> str:
        prefix, suffix = self.prefix, self.suffix
        if not (raw.startswith(prefix) and raw.endswith(suffix)) or len(raw) < len(prefix) + len(
            suffix
        ):
            raise Unsupported(f"attribute {raw[:40]}")
        text = raw[len(prefix) : len(raw) - len(suffix)]
        if not self.whole.match(text):
            raise Unsupported(f"attribute {raw[:40]}")
        return text


SYMBOL = r"[A-Za-z_][A-Za-z0-9_$.]*"


class SymbolRef(Codec):
    """`@name` <-> `@name` (a symbol MLIR prints bare)."""

    pattern = "@" + SYMBOL
    whole = re.compile(pattern + "$")

    def read(self, text: str) -> str:
        return text

    def write(self, raw: str) -> str:
        if not self.whole.match(raw):
            raise Unsupported(f"symbol {raw}")
        return raw


class SymbolName(Codec):
    """`name` <-> `"name"` (a string printed as a bare symbol: an op's own symbol name, after
    `@` a custom_call's target)."""

    pattern = SYMBOL
    whole = re.compile(f'"{SYMBOL}"$')

    def read(self, text: str) -> str:
        return f'"{text}"'

    def write(self, raw: str) -> str:
        if not self.whole.match(raw):
            raise Unsupported(f"symbol {raw}")
        return raw[1:-1]


class PrecisionList(Codec):
    """`[DEFAULT, HIGHEST]` <-> `[#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]`."""

    pattern = r"\[[A-Z]+(?:, [A-Z]+)*\]"
    name = re.compile(r"#stablehlo<precision (\w+)>")

    def read(self, text: str) -> str:
        names = text[1:-1].split(", ")
        return f"[{', '.join(f'#stablehlo<precision {n}>' for n in names)}]"

    def write(self, raw: str) -> str:
        names = self.name.findall(raw)
        text = f"[{', '.join(names)}]"
        if not names or self.read(text) != raw or not re.fullmatch(self.pattern, text):
            raise Unsupported("precision config")
        return text


class Prop(Piece):
    """One property in its own spelling (`codec`)."""

    reads_entries = True

    def __init__(self, key: str, codec: Codec):
        self.key = key
        self.codec = codec
        self.keys = (key,)
        # both halves memoized on the text: a module repeats its spellings layer after layer
        self.write = lru_cache(maxsize=4096)(codec.write)
        self.entry = lru_cache(maxsize=4096)(lambda text: f"{key} = {codec.read(text)}")

    def pattern(self, g: str) -> str:
        return f"(?P<{g}>{self.codec.pattern})"

    def entries(self, m: re.Match[str], g: str) -> list[str]:
        return [self.entry(m.group(g))]

    def print(self, op: Operation, p: Any) -> str:
        return self.write(str(op.properties[self.key]))


class DotDims(Piece):
    """`batching_dims = [0] x [0], contracting_dims = [2] x [1]` <-> `dot_dimension_numbers =
    #stablehlo.dot<lhs_batching_dimensions = [0], ...>` (a list is written when not empty)."""

    keys = ("dot_dimension_numbers",)
    reads_entries = True
    FIELDS = (
        "lhs_batching_dimensions",
        "rhs_batching_dimensions",
        "lhs_contracting_dimensions",
        "rhs_contracting_dimensions",
    )
    _LIST = r"\[[0-9, -]*\]"
    _RAW = re.compile(r"(\w+) = \[([0-9, ]*)\]")

    def pattern(self, g: str) -> str:
        lists = [f"(?P<{g}{i}>{self._LIST})" for i in range(4)]
        return (
            f"(?:batching_dims = {lists[0]} x {lists[1]}, )?"
            f"contracting_dims = {lists[2]} x {lists[3]}"
        )

    def entries(self, m: re.Match[str], g: str) -> list[str]:
        return [self._entry(m.group(f"{g}0", f"{g}1", f"{g}2", f"{g}3"))]

    @staticmethod
    @lru_cache(maxsize=1024)
    def _entry(lists: tuple[str | None, ...]) -> str:
        parts = []
        for name, text in zip(DotDims.FIELDS, lists, strict=True):
            dims = (text or "[]")[1:-1]
            if not NAT_LIST.match(dims):
                raise Unhandled(dims)
            if dims:
                parts.append(f"{name} = [{dims}]")
        return f"dot_dimension_numbers = #stablehlo.dot<{', '.join(parts)}>"

    @staticmethod
    @lru_cache(maxsize=1024)
    def _write(raw: str) -> str:
        if not (raw.startswith("#stablehlo.dot<") and raw.endswith(">")):
            raise Unsupported("dot dimension numbers")
        fields = dict(DotDims._RAW.findall(raw))
        lists = [fields.pop(name, "") for name in DotDims.FIELDS]
        rebuilt = ", ".join(
            f"{name} = [{d}]" for name, d in zip(DotDims.FIELDS, lists, strict=True) if d
        )
        if fields or raw != f"#stablehlo.dot<{rebuilt}>" or not all(map(NAT_LIST.match, lists)):
            raise Unsupported("dot dimension numbers")
        lb, rb, lc, rc = lists
        batching = f"batching_dims = [{lb}] x [{rb}], " if lb or rb else ""
        return f"{batching}contracting_dims = [{lc}] x [{rc}]"

    def print(self, op: Operation, p: Any) -> str:
        return self._write(str(op.properties["dot_dimension_numbers"]))


_NAT_LIST = I64List()


class SliceRanges(Piece):
    """`[0:2, 0:16]` <-> `start_indices`, `limit_indices` and unit `strides`."""

    keys = ("limit_indices", "start_indices", "strides")
    reads_entries = True
    _RANGE = f"{NAT}:{NAT}"

    def pattern(self, g: str) -> str:
        return rf"\[(?P<{g}>(?:{self._RANGE}(?:, {self._RANGE})*)?)\]"

    def entries(self, m: re.Match[str], g: str) -> list[str]:
        text = m.group(g)
        ranges = [r.split(":") for r in text.split(", ")] if text else []
        starts = ", ".join(a for a, _ in ranges)
        limits = ", ".join(b for _, b in ranges)
        strides = ", ".join("1" for _ in ranges)
        return [
            f"limit_indices = {i64_array(limits)}",
            f"start_indices = {i64_array(starts)}",
            f"strides = {i64_array(strides)}",
        ]

    def print(self, op: Operation, p: Any) -> str:
        props = op.properties
        starts, limits, strides = (
            _NAT_LIST.write(str(props[k]))[1:-1].split(", ")
            for k in ("start_indices", "limit_indices", "strides")
        )
        if any(s not in ("1", "") for s in strides):
            raise Unsupported("strided slice")
        ranges = ", ".join(f"{a}:{b}" for a, b in zip(starts, limits, strict=True) if a or b)
        return f"[{ranges}]"


class Window(Piece):
    """`, window = {stride = [..], pad = [[..], ..], lhs_dilate = [..], rhs_dilate = [..],
    reverse = [..]}`: a convolution's window properties, each where the op has it (values
    beyond the checks here are checked by the op's own attribute dictionary, see `OwnAttrs`)."""

    LABELS = {  # label -> (property, array element type, or "pad"), in printed order
        "stride": ("window_strides", "i64"),
        "pad": ("padding", "pad"),
        "lhs_dilate": ("lhs_dilation", "i64"),
        "rhs_dilate": ("rhs_dilation", "i64"),
        "reverse": ("window_reversal", "i1"),
    }
    optional_keys = tuple(key for key, _ in LABELS.values())
    reads_entries = True
    _LIST = re.compile(r"\[[\w-]+(?:, [\w-]+)*\]")
    _PADS = re.compile(r"\[\[-?\d+, -?\d+\](?:, \[-?\d+, -?\d+\])*\]")
    _PADDING = re.compile(
        r"dense<(-?\d+|\[\[-?\d+, -?\d+\](?:, \[-?\d+, -?\d+\])*\])> : tensor<(\d+)x2xi64>$"
    )
    _BOOLS = re.compile(r"array<i1(?:: ((?:true|false)(?:, (?:true|false))*))?>$")

    def pattern(self, g: str) -> str:
        return rf"(?:, window = \{{(?P<{g}>[^{{}}]*)\}})?"

    def entries(self, m: re.Match[str], g: str) -> list[str]:
        text = m.group(g)
        out = []
        for entry in split_top_level(text) if text else ():
            label, eq, value = entry.strip().partition(" = ")
            if label not in self.LABELS or not eq:
                raise Unhandled("convolution window")
            key, kind = self.LABELS[label]
            if kind == "pad":
                if not self._PADS.fullmatch(value):
                    raise Unhandled("convolution padding")
                flat = value.replace("[", "").replace("]", "").split(", ")
                literal = flat[0] if flat.count(flat[0]) == len(flat) else value
                out.append(f"{key} = dense<{literal}> : tensor<{len(flat) // 2}x2xi64>")
            else:
                if not self._LIST.fullmatch(value):
                    raise Unhandled("convolution window")
                out.append(f"{key} = array<{kind}: {value[1:-1]}>")
        return out

    def print(self, op: Operation, p: Any) -> str:
        props = op.properties
        window = []
        for label, (key, kind) in self.LABELS.items():
            if key not in props:
                continue
            raw = str(props[key])
            if kind == "pad":
                value = self._padding(raw)
            elif kind == "i1":
                b = self._BOOLS.match(raw)
                if b is None:
                    raise Unsupported(f"window reversal {raw}")
                value = f"[{b.group(1) or ''}]"
            else:
                value = _NAT_LIST.write(raw)
            window.append(f"{label} = {value}")
        return ", window = {" + ", ".join(window) + "}" if window else ""

    def _padding(self, raw: str) -> str:
        """`dense<1> : tensor<2x2xi64>` -> `[[1, 1], [1, 1]]` (non-splat values as written)."""
        m = self._PADDING.match(raw)
        if m is None:
            raise Unsupported(f"padding {raw}")
        value, rows = m.group(1), int(m.group(2))
        if value.startswith("["):
            return value
        return "[" + ", ".join([f"[{value}, {value}]"] * rows) + "]"


class DenseValue(Piece):
    """`dense<...> : T`: a constant's `value` and its result type (the literal checked as MLIR
    prints it)."""

    keys = ("value",)
    reads_entries = True
    n_results = 1

    def pattern(self, g: str) -> str:
        return f"dense<(?P<{g}>[^<>]*)> : (?P<{g}t>[^ {{}}]+)"

    def result_types(self, g: str) -> tuple[str, TypesReader] | None:
        return g + "t", _one_type

    def entries(self, m: re.Match[str], g: str) -> list[str]:
        literal, t = m.group(g), m.group(g + "t")
        if not dense_as_printed(literal, t):
            raise Unhandled(f"literal {literal}")
        return [f"value = dense<{literal}> : {t}"]

    def print(self, op: Operation, p: Any) -> str:
        t = op.results[0].type if len(op.results) == 1 else None
        if not isinstance(t, TensorType) or t.encoding:
            raise Unsupported("constant type")
        value = str(op.properties["value"])
        suffix = " : " + t.text
        if not value.startswith("dense<") or not value.endswith(suffix):
            raise Unsupported("constant whose value type is not its result type")
        return value


_INT_ELEMENT = re.compile(r"(?:[su]?i\d+)$")
_FLOAT_ELEMENT = re.compile(r"(?:bf16|f16|f32|f64|complex<(?:bf16|f16|f32|f64)>)$")


def constant_hint(op: Operation) -> str:
    """A constant's result name, as StableHLO names it: `%c` for integers, `%cst` for floats
    (others: jaxlib prints them)."""
    t = op.results[0].type
    return _constant_hint(t.element_type if isinstance(t, TensorType) else "")


@lru_cache(maxsize=256)
def _constant_hint(element: str) -> str:
    if _INT_ELEMENT.match(element):
        return "c"
    if _FLOAT_ELEMENT.match(element):
        return "cst"
    raise Unsupported(f"constant of {element}")


def _one_type(text: str, operands: list[str]) -> tuple[Type, ...]:
    return (type_of(text),)
