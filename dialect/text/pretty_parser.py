"""MLIR pretty (custom op syntax) text -> shardc IR, for the forms pretty_printer.py prints.

The importer has jaxlib parse the input (that verifies it and gives its errors with line:col);
this parser then builds shardc's IR straight from the same text, instead of a jaxlib generic
print and a second parse of that. The IR is the one `generic.parse_generic` builds from
jaxlib's generic print with locations: the same ops, attribute texts, types, and locations
(`loc(#locN)` with MLIR's alias numbering of `"-":line:col`, the position jaxlib gives each op).

It reads only what it can rebuild exactly: a module without locations whose ops are in the
table `_FORMATS` (the inverse of the printer's), or have their own syntax with regions read by a
method here (`stablehlo.while`, `sdy.manual_computation`, reduce with its reducer written out,
custom_call, convolution: `_REGION_OPS`), or are written in generic form (`"stablehlo.gather"(..)
<{..}> ({ ^bb0(..): .. }) : ..`, read by the generic parser's op-line reader, regions included),
written as MLIR prints them (attribute values, dense literals and floats in their printed
spelling: text jaxlib would re-spell is not kept; values this module cannot check itself are
checked once each against jaxlib's print through the `printed_as_written` the importer passes).
Anything else returns None and the caller takes the generic route. tests/test_pretty_parse.py compares
both routes on every program and lit input.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from functools import lru_cache

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
from ..sharding_syntax import parse_attr
from ..types import TensorType, Type, parse_type, split_function_type
from .floats import FLOAT_FORMATS, canonical_float
from .generic import op_line_reader
from .pretty_printer import ELEMENTWISE_FORM


class _Unhandled(Exception):
    """A form this parser does not rebuild exactly: take the generic route."""


# ---------------------------------------------------------------------------------------------
# Canonical spellings: text kept raw must be what jaxlib's print would write

_ELEMENT = r"(?:[a-zA-Z][a-zA-Z0-9]*|complex<[a-z0-9]+>)"
_TENSOR = re.compile(rf"tensor<(?:(?:0|[1-9]\d*)x)*{_ELEMENT}>")
_INT = r"(?:0|-?[1-9]\d*)"
_INT_LIST = re.compile(rf"(?:{_INT}(?:, {_INT})*)?$")
_NAT_LIST = re.compile(r"(?:(?:0|[1-9]\d*)(?:, (?:0|[1-9]\d*))*)?$")
_BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*$")
# an integer attribute (`1 : i1` prints as `true`, unsigned ones have no sign)
_INT_ATTR = re.compile(rf"(?:{_INT} : (?:si|i)(?!1$)\d+|(?:0|[1-9]\d*) : ui\d+|{_INT} : index)$")
_FLOAT_ATTR = re.compile(r"(\S+) : (f64|f32|f16|bf16)$")
_STRING = re.compile(r'"[ !#-\[\]-~]*"$')  # printable ASCII without `"` and `\`
_SDY_ATTR = ("#sdy.sharding<", "#sdy.sharding_per_value<", "#sdy.mesh<")


@lru_cache(maxsize=4096)
def _type(text: str) -> Type:
    """A canonically spelled tensor type."""
    if not _TENSOR.fullmatch(text):
        raise _Unhandled(f"type {text}")
    return parse_type(text)


@lru_cache(maxsize=4096)
def _signature(text: str) -> tuple[Type, ...]:
    """The result types of a functional type `(T, ...) -> R` / `-> (R, ...)`."""
    try:
        ins, outs = split_function_type(text)
    except ValueError:
        raise _Unhandled(f"signature {text}") from None
    for t in ins:
        _type(t)
    return tuple(_type(t) for t in outs)


@lru_cache(maxsize=4096)
def _same_or_functional(text: str) -> tuple[Type, ...]:
    """`T` (operands and result alike) or a functional type."""
    if text.startswith("("):
        return _signature(text)
    return (_type(text),)


@lru_cache(maxsize=4096)
def _canonical_value(text: str) -> bool:
    """Whether MLIR prints the attribute value `text` as written."""
    if _STRING.match(text) or _INT_ATTR.match(text) or text in ("true", "false"):
        return True
    if text.startswith(_SDY_ATTR):
        try:
            return str(parse_attr(text)) == text
        except ShardcError:
            return False
    if text.startswith("{") and text.endswith("}"):
        return _canonical_dict(text[1:-1])
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        if not inner:
            return True
        # elements: no numbers (MLIR elides an element's `: i64` in arrays, not in dicts)
        parts = [p.strip() for p in split_top_level(inner)]
        return ", ".join(parts) == inner and all(
            not (_INT_ATTR.match(p) or _FLOAT_ATTR.match(p)) and _canonical_value(p)
            for p in parts
        )
    m = _FLOAT_ATTR.match(text)
    return m is not None and canonical_float(m.group(1), m.group(2))


@lru_cache(maxsize=4096)
def _canonical_dict(body: str) -> bool:
    """Whether `body` (between the braces) is an attribute dictionary as MLIR prints it:
    entries sorted by name, bare names, canonical values."""
    if not body:
        return True
    entries = split_top_level(body)
    keys = []
    rebuilt = []
    for entry in entries:
        entry = entry.strip()
        key, eq, value = entry.partition(" = ")
        if not _BARE_KEY.match(key) or (eq and not _canonical_value(value)):
            return False
        keys.append(key)
        rebuilt.append(entry)
    return keys == sorted(keys) and len(set(keys)) == len(keys) and ", ".join(rebuilt) == body


def _attrs(text: str | None) -> str | None:
    """An op's attribute-dictionary body, checked canonical (None when the op has none)."""
    if text is None:
        return None
    if not text or not _canonical_dict(text):
        raise _Unhandled(f"attributes {{{text}}}")
    return text


# MLIR prints a dense literal of more elements than this as a hex string
_HEX_THRESHOLD = 100
_HEX_STRING = re.compile(r'"0x(?:[0-9A-F][0-9A-F])*"$')
_INT_ELEMENT = re.compile(r"(s|u)?i(\d+)$")


def _scalar(literal: str, element: str) -> bool:
    """Whether one element of a dense literal is spelled as MLIR prints it."""
    if element in FLOAT_FORMATS:
        return canonical_float(literal, element)
    if element == "i1":
        return literal in ("true", "false")
    m = _INT_ELEMENT.match(element)
    if m is None:
        return False
    if m.group(1) == "u":
        return re.fullmatch(r"0|[1-9]\d*", literal) is not None
    return re.fullmatch(_INT, literal) is not None


def _element_bytes(element: str) -> int:
    """Bytes per element in a hex dense literal (0: not printed in hex here)."""
    if element in FLOAT_FORMATS:
        return FLOAT_FORMATS[element][3] // 8
    if element == "i1":
        return 1
    m = _INT_ELEMENT.match(element)
    bits = int(m.group(2)) if m else 0
    return bits // 8 if bits in (8, 16, 32, 64) else 0


def _nested(flat: list[str], shape: tuple[int, ...]) -> str:
    """Elements in row-major order as MLIR's nested list `[[a, b], [c, d]]`."""
    if len(shape) == 1:
        return "[" + ", ".join(flat) + "]"
    step = len(flat) // shape[0]
    return "[" + ", ".join(_nested(flat[i * step : (i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


@lru_cache(maxsize=4096)
def _dense(literal: str, type_text: str) -> bool:
    """Whether `dense<literal>` of `type_text` is spelled as MLIR prints it: a splat, a nested
    list of up to 100 elements that are not all equal, or a hex string of more."""
    t = _type(type_text)
    if not isinstance(t, TensorType):
        return False
    element = t.element_type
    if not literal.startswith(("[", '"')):
        return _scalar(literal, element)
    n = t.num_elements()
    if literal.startswith('"'):
        width = 2 * _element_bytes(element)
        if n <= _HEX_THRESHOLD or not width or not _HEX_STRING.match(literal):
            return False
        body = literal[3:-1]
        if len(body) != width * n or body == body[:width] * n:
            return False  # a wrong size, or a splat (printed as one element)
        bools = (body[i : i + 2] for i in range(0, len(body), 2))
        return element != "i1" or all(b in ("00", "01") for b in bools)
    if n == 0 or n > _HEX_THRESHOLD or t.rank == 0:
        return False
    flat = literal.replace("[", "").replace("]", "").split(", ")
    if len(flat) != n or flat.count(flat[0]) == n:
        return False  # a wrong count, or a splat
    return all(_scalar(e, element) for e in set(flat)) and _nested(flat, t.shape) == literal


def _i64_array(items: str) -> str:
    """`0, 1` -> `array<i64: 0, 1>` (and `` -> `array<i64>`)."""
    return f"array<i64: {items}>" if items else "array<i64>"


# ---------------------------------------------------------------------------------------------
# Op formats: each reads the text after the op name and returns (operand names, properties
# text or None, attributes text or None, result types)

_V = r"%[\w$.-]+(?:#\d+)?"
_OPS = rf"(?P<ops>{_V}(?:, {_V})*)"
_ATTR = r"(?: \{(?P<attrs>.*)\})?"
_SIG = r" : (?P<sig>[^{}]+)$"
_L = r"[0-9, -]*"

Parsed = tuple[list[str], str | None, str | None, tuple[Type, ...]]
Format = Callable[[str], Parsed]


def _match(pattern: re.Pattern[str], rest: str) -> re.Match[str]:
    m = pattern.match(rest)
    if m is None:
        raise _Unhandled(rest[:80])
    return m


def _operands(text: str | None) -> list[str]:
    return text.split(", ") if text else []


_ELEMENTWISE_RE = re.compile(rf" {_OPS}{_ATTR}{_SIG}")


def _elementwise(rest: str) -> Parsed:
    m = _match(_ELEMENTWISE_RE, rest)
    types = _same_or_functional(m.group("sig"))
    return _operands(m.group("ops")), None, _attrs(m.group("attrs")), types


def _functional_op(rest: str) -> Parsed:
    m = _match(_ELEMENTWISE_RE, rest)
    sig = m.group("sig")
    if not sig.startswith("("):
        raise _Unhandled(sig)
    return _operands(m.group("ops")), None, _attrs(m.group("attrs")), _signature(sig)


_CONSTANT_RE = re.compile(r"(?: \{(?P<attrs>.*)\})? dense<(?P<lit>[^<>]*)> : (?P<t>[^ {}]+)$")


def _constant(rest: str) -> Parsed:
    m = _match(_CONSTANT_RE, rest)
    t = m.group("t")
    types = (_type(t),)
    if not _dense(m.group("lit"), t):
        raise _Unhandled(f"literal {m.group('lit')}")
    return [], f"value = dense<{m.group('lit')}> : {t}", _attrs(m.group("attrs")), types


def _dims_format(label: str, key: str, same_type: bool = False, scalar: bool = False) -> Format:
    """`%x, <label> = [..]` (or `= N` when `scalar`) -> `<key> = array<i64: ..>` / `N : i64`."""
    value = r"(?P<d>0|[1-9]\d*)" if scalar else rf"\[(?P<d>{_L})\]"
    pattern = re.compile(rf" {_OPS}, {label} = {value}{_ATTR}{_SIG}")

    def fmt(rest: str) -> Parsed:
        m = _match(pattern, rest)
        d = m.group("d")
        if scalar:
            prop = f"{key} = {d} : i64"
        else:
            if not _NAT_LIST.match(d):
                raise _Unhandled(d)
            prop = f"{key} = {_i64_array(d)}"
        sig = m.group("sig")
        types = _same_or_functional(sig) if same_type else _signature(sig)
        return _operands(m.group("ops")), prop, _attrs(m.group("attrs")), types

    return fmt


_DOT_RE = re.compile(
    rf" {_OPS}, (?:batching_dims = \[(?P<lb>{_L})\] x \[(?P<rb>{_L})\], )?"
    rf"contracting_dims = \[(?P<lc>{_L})\] x \[(?P<rc>{_L})\]"
    rf"(?:, precision = \[(?P<prec>[A-Z]+(?:, [A-Z]+)*)\])?{_ATTR}{_SIG}"
)


def _dot_general(rest: str) -> Parsed:
    m = _match(_DOT_RE, rest)
    parts = []
    for group, name in (
        ("lb", "lhs_batching_dimensions"),
        ("rb", "rhs_batching_dimensions"),
        ("lc", "lhs_contracting_dimensions"),
        ("rc", "rhs_contracting_dimensions"),
    ):
        dims = m.group(group) or ""
        if not _NAT_LIST.match(dims):
            raise _Unhandled(dims)
        if dims:
            parts.append(f"{name} = [{dims}]")
    prop = f"dot_dimension_numbers = #stablehlo.dot<{', '.join(parts)}>"
    if m.group("prec"):
        names = m.group("prec").split(", ")
        prop += f", precision_config = [{', '.join(f'#stablehlo<precision {n}>' for n in names)}]"
    return _operands(m.group("ops")), prop, _attrs(m.group("attrs")), _signature(m.group("sig"))


_COMPARE_RE = re.compile(
    rf" (?P<dir>[A-Z]+), (?P<ops>{_V}, {_V})(?:, (?P<kind>[A-Z]+))?{_ATTR}{_SIG}"
)


def _compare(rest: str) -> Parsed:
    m = _match(_COMPARE_RE, rest)
    prop = f"comparison_direction = #stablehlo<comparison_direction {m.group('dir')}>"
    if m.group("kind"):
        prop = f"compare_type = #stablehlo<comparison_type {m.group('kind')}>, " + prop
    sig = m.group("sig")
    if not sig.startswith("("):
        raise _Unhandled(sig)
    return _operands(m.group("ops")), prop, _attrs(m.group("attrs")), _signature(sig)


_SELECT_RE = re.compile(rf" {_OPS}{_ATTR} : (?P<p>[^ ,{{}}()]+), (?P<t>[^ ,{{}}()]+)$")


def _select(rest: str) -> Parsed:
    m = _SELECT_RE.match(rest)
    if m is None:
        return _functional_op(rest)
    _type(m.group("p"))
    return _operands(m.group("ops")), None, _attrs(m.group("attrs")), (_type(m.group("t")),)


_IOTA_RE = re.compile(rf" dim = (?P<d>0|[1-9]\d*){_ATTR} : (?P<t>[^ {{}}]+)$")


def _iota(rest: str) -> Parsed:
    m = _match(_IOTA_RE, rest)
    prop = f"iota_dimension = {m.group('d')} : i64"
    return [], prop, _attrs(m.group("attrs")), (_type(m.group("t")),)


_RANGE = r"(?:0|[1-9]\d*):(?:0|[1-9]\d*)"
_SLICE_RE = re.compile(rf" (?P<ops>{_V}) \[(?P<r>(?:{_RANGE}(?:, {_RANGE})*)?)\]{_ATTR}{_SIG}")


def _slice(rest: str) -> Parsed:
    m = _match(_SLICE_RE, rest)
    ranges = [r.split(":") for r in m.group("r").split(", ")] if m.group("r") else []
    starts = ", ".join(a for a, _ in ranges)
    limits = ", ".join(b for _, b in ranges)
    strides = ", ".join("1" for _ in ranges)
    prop = (
        f"limit_indices = {_i64_array(limits)}, start_indices = {_i64_array(starts)}, "
        f"strides = {_i64_array(strides)}"
    )
    return _operands(m.group("ops")), prop, _attrs(m.group("attrs")), _signature(m.group("sig"))


_PAD_RE = re.compile(
    rf" {_OPS}, low = \[(?P<lo>{_L})\], high = \[(?P<hi>{_L})\], "
    rf"interior = \[(?P<in>{_L})\]{_ATTR}{_SIG}"
)


def _pad(rest: str) -> Parsed:
    m = _match(_PAD_RE, rest)
    lo, hi, inner = m.group("lo"), m.group("hi"), m.group("in")
    if not (_INT_LIST.match(lo) and _INT_LIST.match(hi) and _NAT_LIST.match(inner)):
        raise _Unhandled("pad")
    prop = (
        f"edge_padding_high = {_i64_array(hi)}, edge_padding_low = {_i64_array(lo)}, "
        f"interior_padding = {_i64_array(inner)}"
    )
    return _operands(m.group("ops")), prop, _attrs(m.group("attrs")), _signature(m.group("sig"))


_NULLARY_RE = re.compile(rf"{_ATTR} : (?P<t>[^ {{}}]+)$")


def _partition_id(rest: str) -> Parsed:
    m = _match(_NULLARY_RE, rest)
    return [], None, _attrs(m.group("attrs")), (_type(m.group("t")),)


_SHARDING_OP_RE = re.compile(rf" (?P<ops>{_V}) (?P<sh><@[^>]*>){_ATTR} : (?P<t>[^ {{}}]+)$")


def _sharding_op(rest: str) -> Parsed:
    m = _match(_SHARDING_OP_RE, rest)
    sharding = "#sdy.sharding" + m.group("sh")
    if not _canonical_value(sharding):
        raise _Unhandled(sharding)
    return [m.group("ops")], f"sharding = {sharding}", _attrs(m.group("attrs")), (
        _type(m.group("t")),
    )


_RETURN_RE = re.compile(rf"(?: {_OPS} : (?P<types>[^{{}}]+))?$")


def _return(rest: str) -> Parsed:
    m = _match(_RETURN_RE, rest)
    if m.group("types"):
        for t in m.group("types").split(", "):
            _type(t)
    return _operands(m.group("ops")), None, None, ()


_CALL_RE = re.compile(rf" (?P<callee>@[A-Za-z_][\w$.]*)\((?P<ops>{_V}(?:, {_V})*)?\){_ATTR}{_SIG}")


def _call(rest: str) -> Parsed:
    m = _match(_CALL_RE, rest)
    prop = f"callee = {m.group('callee')}"
    return _operands(m.group("ops")), prop, _attrs(m.group("attrs")), _signature(m.group("sig"))


_ARROW_RE = re.compile(rf" {_OPS}{_ATTR} : (?P<in>[^ ,{{}}()]+) -> (?P<out>[^ ,{{}}()]+)$")


def _arrow(rest: str) -> Parsed:
    """`%x : T -> R` (chlo's unary ops)."""
    m = _match(_ARROW_RE, rest)
    _type(m.group("in"))
    return _operands(m.group("ops")), None, _attrs(m.group("attrs")), (_type(m.group("out")),)


# chlo's unary ops as JAX emits them (erf, erfc, erf_inv, lgamma, square, hyperbolic, ...)
_CHLO_UNARY = (
    "acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc is_inf "
    "is_neg_inf is_pos_inf lgamma sinh square tan"
).split()


_TOP_K_RE = re.compile(
    rf"\((?P<ops>{_V}), k = (?P<k>0|[1-9]\d*)\){_ATTR} : (?P<in>[^ ,{{}}()]+) -> "
    r"\((?P<v>[^ ,{}()]+), (?P<i>[^ ,{}()]+)\)$"
)


def _top_k(rest: str) -> Parsed:
    """`chlo.top_k(%x, k = N) : T -> (V, I)`."""
    m = _match(_TOP_K_RE, rest)
    _type(m.group("in"))
    types = (_type(m.group("v")), _type(m.group("i")))
    return [m.group("ops")], f"k = {m.group('k')} : i64", _attrs(m.group("attrs")), types


_GROUP_RE = re.compile(rf" (?P<ops>{_V}) group_id=(?P<g>{_INT}){_ATTR} : (?P<t>[^ ,{{}}()]+)$")


def _sharding_group(rest: str) -> Parsed:
    """`sdy.sharding_group %x group_id=N : T` (jax's shard_alike): no results."""
    m = _match(_GROUP_RE, rest)
    _type(m.group("t"))
    return [m.group("ops")], f"group_id = {m.group('g')} : i64", _attrs(m.group("attrs")), ()


def _same_types(rest: str) -> Parsed:
    """`%a, %b : T, U`: results of the operands' types (optimization_barrier)."""
    m = _match(_ELEMENTWISE_RE, rest)
    operands = _operands(m.group("ops"))
    types = tuple(_type(t) for t in m.group("sig").split(", "))
    if len(types) != len(operands):
        raise _Unhandled("types")
    return operands, None, _attrs(m.group("attrs")), types



# pretty op name -> (generic op name, format); the compact reduce is read by `_Parser.reduce`
_FORMATS: dict[str, tuple[str, Format]] = {
    **{f"stablehlo.{n}": (f"stablehlo.{n}", _elementwise) for n in ELEMENTWISE_FORM},
    "stablehlo.reshape": ("stablehlo.reshape", _functional_op),
    "stablehlo.dynamic_update_slice": ("stablehlo.dynamic_update_slice", _functional_op),
    "stablehlo.bitcast_convert": ("stablehlo.bitcast_convert", _functional_op),
    "stablehlo.real": ("stablehlo.real", _functional_op),
    "stablehlo.imag": ("stablehlo.imag", _functional_op),
    "stablehlo.clamp": ("stablehlo.clamp", _elementwise),
    "stablehlo.is_finite": ("stablehlo.is_finite", _functional_op),
    **{f"chlo.{n}": (f"chlo.{n}", _arrow) for n in _CHLO_UNARY},
    "chlo.top_k": ("chlo.top_k", _top_k),
    "stablehlo.optimization_barrier": ("stablehlo.optimization_barrier", _same_types),
    "stablehlo.constant": ("stablehlo.constant", _constant),
    "stablehlo.broadcast_in_dim": (
        "stablehlo.broadcast_in_dim",
        _dims_format("dims", "broadcast_dimensions"),
    ),
    "stablehlo.transpose": ("stablehlo.transpose", _dims_format("dims", "permutation")),
    "stablehlo.dot_general": ("stablehlo.dot_general", _dot_general),
    "stablehlo.compare": ("stablehlo.compare", _compare),
    "stablehlo.select": ("stablehlo.select", _select),
    "stablehlo.iota": ("stablehlo.iota", _iota),
    "stablehlo.slice": ("stablehlo.slice", _slice),
    "stablehlo.concatenate": (
        "stablehlo.concatenate",
        _dims_format("dim", "dimension", scalar=True),
    ),
    "stablehlo.pad": ("stablehlo.pad", _pad),
    "stablehlo.reverse": (
        "stablehlo.reverse",
        _dims_format("dims", "dimensions", same_type=True),
    ),
    "stablehlo.dynamic_slice": ("stablehlo.dynamic_slice", _dims_format("sizes", "slice_sizes")),
    "stablehlo.partition_id": ("stablehlo.partition_id", _partition_id),
    "sdy.sharding_constraint": ("sdy.sharding_constraint", _sharding_op),
    "sdy.reshard": ("sdy.reshard", _sharding_op),
    "sdy.sharding_group": ("sdy.sharding_group", _sharding_group),
    "return": ("func.return", _return),
    "call": ("func.call", _call),
    "func.call": ("func.call", _call),
    "func.return": ("func.return", _return),
    "stablehlo.return": ("stablehlo.return", _return),
    "sdy.return": ("sdy.return", _return),
}

_REDUCE_RE = re.compile(
    rf"\((?P<x>{_V}) init: (?P<init>{_V})\) applies (?P<body>[a-z_][\w.]*) across "
    rf"dimensions = \[(?P<d>{_L})\]{_ATTR}{_SIG}"
)

_WHILE_RE = re.compile(
    r"\((?P<pairs>[^()]+)\) : (?P<types>[^{}()]+?)(?: attributes \{(?P<attrs>.*)\})?$"
)
_WHILE_PAIR = re.compile(rf"(%[\w$.-]+) = ({_V})")
_CUSTOM_RE = re.compile(
    rf" @(?P<target>[A-Za-z_][\w$.]*)\((?P<ops>{_V}(?:, {_V})*)?\)(?: \{{(?P<attrs>.*)\}})?"
    r" : (?P<sig>[^{}]+)$"
)
# stablehlo.custom_call's own attributes (written in its attribute dictionary when pretty)
_CUSTOM_CALL_PROPS = frozenset(
    "api_version backend_config call_target_name called_computations has_side_effect "
    "operand_layouts output_operand_aliases result_layouts".split()
)
_DIMS = r"\[[\w, ]*\]"
_CONV_RE = re.compile(
    rf"\((?P<ops>{_V}, {_V})\) dim_numbers = (?P<dims>{_DIMS}x{_DIMS}->{_DIMS})"
    r"(?:, window = \{(?P<win>[^{}]*)\})?(?: \{(?P<attrs>.*)\})? : (?P<sig>[^{}]+)$"
)
# the window entries: (property, array element type or "pad")
_WINDOW = {
    "stride": ("window_strides", "i64"),
    "pad": ("padding", "pad"),
    "lhs_dilate": ("lhs_dilation", "i64"),
    "rhs_dilate": ("rhs_dilation", "i64"),
    "reverse": ("window_reversal", "i1"),
}
_WINDOW_LIST = re.compile(r"\[[\w-]+(?:, [\w-]+)*\]")  # values checked against jaxlib's print
_PADS = re.compile(r"\[\[-?\d+, -?\d+\](?:, \[-?\d+, -?\d+\])*\]")
_CONV_PROPS = frozenset({"batch_group_count", "feature_group_count", "precision_config"})
_AXES = r'\{(?:"[A-Za-z_]\w*"(?:, "[A-Za-z_]\w*")*)?\}'
_MANUAL_RE = re.compile(
    rf"\((?P<ops>{_V}(?:, {_V})*)?\) in_shardings=\[(?P<in>.*?)\] "
    rf"out_shardings=\[(?P<out>.*?)\] manual_axes=(?P<axes>{_AXES}) "
    r"\((?P<args>[^()]*)\) \{$"
)

_REDUCE_PAIR = re.compile(rf"\(({_V}) init: ({_V})\)")
_REDUCE_LONG_RE = re.compile(
    rf"(?P<pairs>\({_V} init: {_V}\)(?:, \({_V} init: {_V}\))*) across "
    rf"dimensions = \[(?P<d>{_L})\]{_ATTR}{_SIG}"
)
_REDUCER_GROUP = re.compile(r"\((%[\w$.-]+): ([^ ,()]+), (%[\w$.-]+): ([^ ,()]+)\)")

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
_MESH_RE = re.compile(
    r"([ \t]*)sdy\.mesh @(?P<name>[A-Za-z_][\w$.]*) = (?P<mesh><.*?>)(?: \{(?P<attrs>.*)\})?$"
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
            raise _Unhandled("undefined value") from None

    def define(self, op: Operation, name: str | None, count: str | None) -> None:
        if name is None:
            if op.results:
                raise _Unhandled("unnamed results")
            return
        n = int(count) if count else 1
        if n != len(op.results) or n == 0:
            raise _Unhandled("result count")
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
            raise _Unhandled("empty")
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
                    raise _Unhandled("unterminated module")
                break
            line = lines[i]
            self.lineno = i + 1
            if _CLOSE.match(line):
                if not explicit:
                    raise _Unhandled("unmatched }")
                i += 1
                break
            stripped = line.lstrip()
            if stripped.startswith("sdy.mesh "):
                body.append(self.mesh(line))
                i += 1
            elif stripped.startswith("func.func "):
                i = self.func(lines, i, body)
            else:
                raise _Unhandled(stripped[:40])
        if self.skip(lines, i) < len(lines):
            raise _Unhandled("text after the module")
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
            raise _Unhandled("module header")
        loc = self.loc(m.end(1) + 1 if col is None else col)
        op = Operation("builtin.module", [])
        if m.group("name"):
            op.properties = AttrDict(f'sym_name = "{m.group("name")}"')
        attrs = _attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(attrs)
        op.loc = loc
        op.add_region(Region())
        block = Block()
        op.regions[0].add_block(block)
        return op, block

    def mesh(self, line: str) -> Operation:
        m = _MESH_RE.match(line)
        if m is None:
            raise _Unhandled("mesh")
        mesh = "#sdy.mesh" + m.group("mesh")
        if not _canonical_value(mesh):
            raise _Unhandled(mesh)
        op = Operation("sdy.mesh", [])
        op.properties = AttrDict(f'mesh = {mesh}, sym_name = "{m.group("name")}"')
        attrs = _attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(attrs)
        op.loc = self.loc(m.end(1) + 1)
        return op

    def func(self, lines: _Lines, i: int, body: Block) -> int:
        line = lines[i]
        m = _FUNC_RE.match(line)
        if m is None:
            raise _Unhandled("func header")
        # the `)` closing the arguments (a bracket scan of a long signature costs more than the
        # rest of the header; a wrong cut leaves text that the strict patterns below reject)
        close = line.rfind(") -> ") if ") -> " in line else line.rfind(") {")
        if close < m.end() - 1:
            raise _Unhandled("func header")
        args = line[m.end() : close]
        tail = _FUNC_TAIL.match(line, close + 1)
        if tail is None:
            raise _Unhandled("func header")
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
                raise _Unhandled("argument")
            t = am.group("t")
            arg = block.add_arg(_type(t), self.arg_loc(pos + 1))
            if am.group("name") in self.values:
                raise _Unhandled("duplicate argument")
            self.values[am.group("name")] = arg
            arg_types.append(t)
            arg_attrs.append(_attrs(am.group("attrs")) or "")
            pos += len(entry) + 2
        res_types: list[str] = []
        res_attrs: list[str] = []
        res = tail.group("res")
        if res is not None:
            if res.startswith("(") and res.endswith(")"):
                entries = split_top_level(res[1:-1])
                if ", ".join(e.strip() for e in entries) != res[1:-1]:
                    raise _Unhandled("result spacing")
            else:
                entries = [res]
            for entry in entries:
                rm = _RESULT_RE.match(entry.strip())
                if rm is None:
                    raise _Unhandled("result")
                _type(rm.group("t"))
                res_types.append(rm.group("t"))
                res_attrs.append(_attrs(rm.group("attrs")) or "")
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
            raise _Unhandled("func end")
        if not block.ops or block.ops[-1].name != "func.return":
            raise _Unhandled("func without return")
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
        formats = _FORMATS
        values = self.values
        # the current chunk of lines, read directly (an older one is still right for its lines)
        chunk, base = lines.chunk, lines.base
        top = base + len(chunk)
        while True:
            if i >= top:
                if i >= n_lines:
                    raise _Unhandled("unterminated block")
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
                known = formats.get(name)
                if known is None:
                    if name == "stablehlo.reduce":
                        op, i = self.reduce(lines, i, rest, m.end(4) + 1)
                    elif name in _REGION_OPS:
                        op, i = _REGION_OPS[name](self, lines, i, line, m.end(4))
                    else:
                        raise _Unhandled(name)
                else:
                    generic, read = known
                    operands, op_props, op_attrs, types = read(rest)
                    try:
                        operand_values = [values[v] for v in operands]
                    except KeyError:
                        raise _Unhandled("undefined value") from None
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
            raise _Unhandled("result count")
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
            raise _Unhandled(line.strip()[:40])
        name, rest = m.group("name"), m.group("rest")
        known = _FORMATS.get(name)
        if known is not None:
            generic, read = known
            operands, props, attrs, types = read(rest)
            op = self.build(generic, self.lookup(operands), props, attrs, types, m.start("name") + 1)
        elif name in _REGION_OPS:
            op, i = _REGION_OPS[name](self, lines, i, line, m.end("name"))
        else:
            raise _Unhandled(name)
        groups = []
        for group in m.group("groups").split(", "):
            res, _, count = group.partition(":")
            if count == "1" or not _RESULT_NAME.fullmatch(res):
                raise _Unhandled("result names")
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
            raise _Unhandled("generic op") from None
        if op.successors is not None or op.name in _NOT_GENERIC:
            raise _Unhandled(op.name)
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
                    raise _Unhandled("region end")
                tail = _TRAILER_RE.match(close, 2)
                if tail is None:
                    raise _Unhandled("region op trailer")
                if tail.group("attrs") is not None:
                    op.attributes = AttrDict(self.intern(tail.group("attrs")))
                types = _signature(tail.group("sig"))
                op.results = tuple(OpResult(t, op, k) for k, t in enumerate(types))
                break
        else:
            for r in op.results:
                _type(r.type.text)
        self.generic_attrs(op.properties.body(), inherent=True)
        self.generic_attrs(op.attributes.body(), inherent=False)
        if len(res_names) > 1:
            self.define_groups(op, res_names)
        elif res_names:
            name, count = res_names[0]
            if count == 1 and f"{name}:1 " in line:
                raise _Unhandled("result count 1")
            self.define(op, name, str(count) if count > 1 else None)
        elif op.results:
            raise _Unhandled("unnamed results")
        return op, i

    def generic_attrs(self, body: str, inherent: bool) -> None:
        """Check a generic op's properties (`inherent`) or attributes dictionary body: as MLIR
        prints it (sorted bare names, values printed as written); attributes only of names with
        a dialect prefix (jaxlib moves an op's own attributes written there to its properties)."""
        if not body:
            return
        entries = [e.strip() for e in split_top_level(body)]
        if ", ".join(entries) != body:
            raise _Unhandled("attribute spacing")
        keys = []
        check = self.check
        for entry in entries:
            key, eq, value = entry.partition(" = ")
            if not _BARE_KEY.match(key) or (not inherent and "." not in key):
                raise _Unhandled(f"attribute {key}")
            if eq and not (_canonical_value(value) or (check is not None and check(value))):
                raise _Unhandled(f"attribute value {value[:40]}")
            keys.append(key)
        if keys != sorted(keys) or len(set(keys)) != len(keys):
            raise _Unhandled("attribute order")

    def region(self, lines: _Lines, i: int, region: Region) -> int:
        """One region of a generic op: an optional `^bb0(%a: T, ..):` header, then its ops up
        to the line that closes it; the index after that line."""
        k = self.skip(lines, i)
        if k >= len(lines):
            raise _Unhandled("unterminated region")
        header = lines[k].strip()
        if header.startswith("^"):
            hm = _BLOCK_HEADER.match(lines[k])
            if hm is None:
                raise _Unhandled("block header")
            block = Block(label="bb0")
            self.lineno = k + 1
            pos = hm.start("args")
            for entry in hm.group("args").split(", "):
                am = _BLOCK_ARG.fullmatch(entry)
                if am is None:
                    raise _Unhandled("block argument")
                arg = block.add_arg(_type(am.group("t")), self.arg_loc(pos + 1))
                self.values[am.group("name")] = arg
                pos += len(entry) + 2
            i = k + 1
        else:
            block = Block()
        region.add_block(block)
        i, _ = self.body(lines, i, block)
        if not block.ops:
            raise _Unhandled("empty block")
        return i

    def while_op(self, lines: _Lines, i: int, line: str, at: int) -> tuple[Operation, int]:
        """`stablehlo.while(%it = %x, ..) : T, .. [attributes {..}]` then `cond {` .. `} do {`
        .. `}`: two regions whose blocks take the loop values (one location each, shared)."""
        m = _WHILE_RE.match(line, at)
        if m is None:
            raise _Unhandled("while")
        pairs = m.group("pairs")
        names = []
        inits = []
        pos = m.start("pairs")
        cols = []
        for pair in pairs.split(", "):
            pm = _WHILE_PAIR.fullmatch(pair)
            if pm is None:
                raise _Unhandled("while operands")
            names.append(pm.group(1))
            inits.append(pm.group(2))
            cols.append(pos + 1)
            pos += len(pair) + 2
        types = [_type(t) for t in m.group("types").split(", ")]
        if len(types) != len(names):
            raise _Unhandled("while types")
        op = Operation("stablehlo.while", self.lookup(inits))
        op.loc = self.loc(at - len("stablehlo.while") + 1)
        arg_locs = [self.arg_loc(c) for c in cols]
        attrs = m.group("attrs")
        if attrs is not None:
            self.generic_attrs(attrs, inherent=False)
            op.attributes = AttrDict(self.intern(attrs))
        k = self.skip(lines, i)
        if k >= len(lines) or lines[k].strip() != "cond {":
            raise _Unhandled("while cond")
        i = k + 1
        for region_end in ("} do {", "}"):
            block = Block(label="bb0")
            values = self.values
            for name, t, loc in zip(names, types, arg_locs, strict=True):
                values[name] = block.add_arg(t, loc)
            region = Region()
            op.add_region(region)
            region.add_block(block)
            i, end = self.body(lines, i, block)
            if end != region_end or not block.ops:
                raise _Unhandled("while region")
        op.results = tuple(OpResult(t, op, k) for k, t in enumerate(types))
        return op, i

    def manual_computation(
        self, lines: _Lines, i: int, line: str, at: int
    ) -> tuple[Operation, int]:
        """`sdy.manual_computation(%x, ..) in_shardings=[..] out_shardings=[..] manual_axes={..}
        (%a: T, ..) {` .. `} [{attrs}] : (T, ..) -> R`: one region, one block of the args."""
        m = _MANUAL_RE.match(line, at)
        if m is None:
            raise _Unhandled("manual_computation")
        ins = f"#sdy.sharding_per_value<[{m.group('in')}]>"
        outs = f"#sdy.sharding_per_value<[{m.group('out')}]>"
        if not (_canonical_value(ins) and _canonical_value(outs)):
            raise _Unhandled("manual_computation shardings")
        op = Operation("sdy.manual_computation", self.lookup(_operands(m.group("ops"))))
        op.properties = AttrDict(self.intern(
            f"in_shardings = {ins}, manual_axes = #sdy<manual_axes{m.group('axes')}>, "
            f"out_shardings = {outs}"
        ))
        op.loc = self.loc(at - len("sdy.manual_computation") + 1)
        args = m.group("args")
        block = Block(label="bb0") if args else Block()
        pos = m.start("args")
        for entry in args.split(", ") if args else ():
            am = _BLOCK_ARG.fullmatch(entry)
            if am is None:
                raise _Unhandled("manual_computation argument")
            self.values[am.group("name")] = block.add_arg(
                _type(am.group("t")), self.arg_loc(pos + 1)
            )
            pos += len(entry) + 2
        region = Region()
        op.add_region(region)
        region.add_block(block)
        i, end = self.body(lines, i, block)
        tail = _TRAILER_RE.match(end, 1)
        if tail is None or not block.ops:
            raise _Unhandled("manual_computation end")
        attrs = tail.group("attrs")
        if attrs is not None:
            self.generic_attrs(attrs, inherent=False)
            op.attributes = AttrDict(self.intern(attrs))
        op.results = tuple(OpResult(t, op, k) for k, t in enumerate(_signature(tail.group("sig"))))
        return op, i

    def own_attrs(
        self, text: str | None, own: frozenset[str], props: list[str]
    ) -> tuple[str, str]:
        """Split a pretty op's attribute dictionary as jaxlib does: the op's `own` attributes
        join `props` (entries built from its syntax) as its properties, the others stay its
        attributes; both checked as MLIR prints them. The two texts."""
        given = {e.partition(" = ")[0] for e in props}
        attrs: list[str] = []
        entries = [e.strip() for e in split_top_level(text)] if text else []
        if text is not None and ", ".join(entries) != text:
            raise _Unhandled("attribute spacing")
        for entry in entries:
            key = entry.partition(" = ")[0]
            if key in given:
                raise _Unhandled(f"{key} twice")
            (props if key in own else attrs).append(entry)
        props.sort(key=lambda e: e.partition(" = ")[0])
        prop_text = ", ".join(props)
        attr_text = ", ".join(attrs)
        self.generic_attrs(prop_text, inherent=True)
        self.generic_attrs(attr_text, inherent=False)
        return prop_text, attr_text

    def convolution(self, lines: _Lines, i: int, line: str, at: int) -> tuple[Operation, int]:
        """`stablehlo.convolution(%x, %k) dim_numbers = [..]x[..]->[..], window = {stride = [..],
        pad = [[..], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]} {attrs} : ..`."""
        m = _CONV_RE.match(line, at)
        if m is None:
            raise _Unhandled("convolution")
        props = [f"dimension_numbers = #stablehlo.conv<{m.group('dims')}>"]
        window = m.group("win")
        for entry in split_top_level(window) if window else ():
            key, eq, value = entry.strip().partition(" = ")
            if key not in _WINDOW or not eq:
                raise _Unhandled("convolution window")
            name, kind = _WINDOW[key]
            if kind == "pad":
                if not _PADS.fullmatch(value):
                    raise _Unhandled("convolution padding")
                flat = value.replace("[", "").replace("]", "").split(", ")
                literal = flat[0] if flat.count(flat[0]) == len(flat) else value
                props.append(f"{name} = dense<{literal}> : tensor<{len(flat) // 2}x2xi64>")
            else:
                if not _WINDOW_LIST.fullmatch(value):
                    raise _Unhandled("convolution window")
                props.append(f"{name} = array<{kind}: {value[1:-1]}>")
        prop_text, attr_text = self.own_attrs(m.group("attrs"), _CONV_PROPS, props)
        return self.build_matched("stablehlo.convolution", m, at, prop_text, attr_text), i

    def custom_call(self, lines: _Lines, i: int, line: str, at: int) -> tuple[Operation, int]:
        """`stablehlo.custom_call @target(%x, ..) {attrs} : (T, ..) -> R`: the op's own
        attributes (and `call_target_name`) are its properties, the others its attributes."""
        m = _CUSTOM_RE.match(line, at)
        if m is None:
            raise _Unhandled("custom_call")
        prop_text, attr_text = self.own_attrs(
            m.group("attrs"), _CUSTOM_CALL_PROPS, [f'call_target_name = "{m.group("target")}"']
        )
        return self.build_matched("stablehlo.custom_call", m, at, prop_text, attr_text), i

    def build_matched(
        self, name: str, m: re.Match[str], at: int, prop_text: str, attr_text: str
    ) -> Operation:
        """`build` from a match with `ops` and `sig` groups of op `name` written at `at`."""
        operands = self.lookup(_operands(m.group("ops")))
        col = at - len(name) + 1
        return self.build(name, operands, prop_text, attr_text or None, _signature(m.group("sig")), col)

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

    def reduce(self, lines: _Lines, i: int, rest: str, col: int) -> tuple[Operation, int]:
        """The compact `stablehlo.reduce(%x init: %i) applies <op> across dimensions = [..]`:
        one region whose block applies <op> to its two scalar arguments and returns it (or
        the long form, see `reduce_long`); the op and the index after its last line."""
        m = _REDUCE_RE.match(rest)
        if m is None:
            return self.reduce_long(lines, i, rest, col)
        dims = m.group("d")
        if not _NAT_LIST.match(dims):
            raise _Unhandled(dims)
        types = _signature(m.group("sig"))
        x, init = self.lookup([m.group("x"), m.group("init")])
        element = getattr(x.type, "element_type", None)
        if element is None or init.type.text != f"tensor<{element}>":
            raise _Unhandled("reduce types")
        loc = self.loc(col)
        self.arg_aliases.add(len(self.pos_lines) - 1)
        arg_loc = f'loc("-":{self.lineno}:{col})'
        op = Operation("stablehlo.reduce", [x, init])
        op.properties = AttrDict(self.intern(f"dimensions = {_i64_array(dims)}"))
        op.add_region(Region())
        block = Block(label="bb0")
        scalar = init.type
        a = block.add_arg(scalar, arg_loc)
        b = block.add_arg(scalar, arg_loc)
        body_name = self.texts.setdefault(m.group("body"), m.group("body"))
        inner = Operation.fast(body_name, [a, b], AttrDict(""), AttrDict(""), loc)
        value = OpResult(scalar, inner, 0)
        inner.results = (value,)
        ret = Operation.fast("stablehlo.return", [value], AttrDict(""), AttrDict(""), loc)
        ret.results = ()
        block.append(inner)
        block.append(ret)
        op.regions[0].add_block(block)
        attrs = _attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(self.intern(attrs))
        op.loc = loc
        op.results = tuple(OpResult(t, op, k) for k, t in enumerate(types))
        return op, i

    def reduce_long(self, lines: _Lines, i: int, rest: str, col: int) -> tuple[Operation, int]:
        """`stablehlo.reduce(%x init: %i), (%y init: %j) across dimensions = [..] : ..` then
        `reducer(%a: T, %c: T) (%b: U, %d: U)  {` .. `}`: the block takes each input's first
        argument, then each one's second (`%a, %b, %c, %d`), each located where it is written."""
        m = _match(_REDUCE_LONG_RE, rest)
        dims = m.group("d")
        if not _NAT_LIST.match(dims):
            raise _Unhandled(dims)
        pairs = _REDUCE_PAIR.findall(m.group("pairs"))
        operands = self.lookup([x for x, _ in pairs] + [init for _, init in pairs])
        types = _signature(m.group("sig"))
        op = Operation("stablehlo.reduce", operands)
        op.properties = AttrDict(self.intern(f"dimensions = {_i64_array(dims)}"))
        op.loc = self.loc(col)
        k = self.skip(lines, i)
        if k >= len(lines):
            raise _Unhandled("reduce without reducer")
        header = lines[k]
        groups = list(_REDUCER_GROUP.finditer(header))
        start = header.find("reducer(")
        if (
            len(groups) != len(pairs)
            or start < 0
            or header[:start].strip()
            or "reducer" + " ".join(g.group(0) for g in groups) + "  {" != header[start:]
        ):
            raise _Unhandled("reducer")
        self.lineno = k + 1
        block = Block(label="bb0")
        values = self.values
        for side in (1, 3):  # each input's first argument, then each one's second
            for g in groups:
                arg = block.add_arg(_type(g.group(side + 1)), self.arg_loc(g.start(side) + 1))
                values[g.group(side)] = arg
        op.add_region(Region())
        op.regions[0].add_block(block)
        i, end = self.body(lines, k + 1, block)
        if end != "}" or not block.ops:
            raise _Unhandled("reducer end")
        attrs = _attrs(m.group("attrs"))
        if attrs is not None:
            op.attributes = AttrDict(self.intern(attrs))
        op.results = tuple(OpResult(t, op, n) for n, t in enumerate(types))
        return op, i


# ops read by a parser method (regions in their own syntax, or attribute values checked against
# jaxlib's print): a reader of the op's lines, from the end of its name
_REGION_OPS: dict[str, Callable[[_Parser, _Lines, int, str, int], tuple[Operation, int]]] = {
    "stablehlo.while": _Parser.while_op,
    "sdy.manual_computation": _Parser.manual_computation,
    "stablehlo.custom_call": _Parser.custom_call,
    "stablehlo.convolution": _Parser.convolution,
}


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
    except (_Unhandled, ValueError, KeyError, IndexError, RecursionError):
        return None  # RecursionError: attribute values nested deeper than Python's stack
