"""What MLIR prints as written: the checks that let the pretty parser keep text raw.

The pretty parser keeps attribute values, dense literals and types as the raw text it read, so it
may only keep text that jaxlib's print of the parsed module would spell the same (attribute
dictionaries sorted, bare names, integers without redundant signs, floats as `floats.py` spells
them, dense literals as splats, nested lists or hex strings by size). Each check is memoized on
the text: a module repeats its spellings layer after layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ..brackets import split_top_level
from ..errors import ShardcError
from ..sharding_syntax import parse_attr
from ..types import TensorType, Type, parse_type, split_function_type
from .floats import FLOAT_FORMATS, canonical_float


class Unhandled(Exception):
    """A form the pretty parser does not rebuild exactly: take the generic route."""



_ELEMENT = r"(?:[a-zA-Z][a-zA-Z0-9]*|complex<[a-z0-9]+>)"
_TENSOR = re.compile(rf"tensor<(?:(?:0|[1-9]\d*)x)*{_ELEMENT}>")
INT = r"(?:0|-?[1-9]\d*)"
INT_LIST = re.compile(rf"(?:{INT}(?:, {INT})*)?$")
NAT_LIST = re.compile(r"(?:(?:0|[1-9]\d*)(?:, (?:0|[1-9]\d*))*)?$")
BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*$")
# an integer attribute (`1 : i1` prints as `true`, unsigned ones have no sign)
_INT_ATTR = re.compile(rf"(?:{INT} : (?:si|i)(?!1$)\d+|(?:0|[1-9]\d*) : ui\d+|{INT} : index)$")
_FLOAT_ATTR = re.compile(r"(\S+) : (f64|f32|f16|bf16)$")
_STRING = re.compile(r'"[ !#-\[\]-~]*"$')  # printable ASCII without `"` and `\`
_SDY_ATTR = ("#sdy.sharding<", "#sdy.sharding_per_value<", "#sdy.mesh<")


@lru_cache(maxsize=4096)
def type_of(text: str) -> Type:
    """A canonically spelled tensor type."""
    if not _TENSOR.fullmatch(text):
        raise Unhandled(f"type {text}")
    return parse_type(text)


@lru_cache(maxsize=4096)
def signature(text: str) -> tuple[Type, ...]:
    """The result types of a functional type `(T, ...) -> R` / `-> (R, ...)`."""
    try:
        ins, outs = split_function_type(text)
    except ValueError:
        raise Unhandled(f"signature {text}") from None
    for t in ins:
        type_of(t)
    return tuple(type_of(t) for t in outs)


@lru_cache(maxsize=4096)
def same_or_functional(text: str) -> tuple[Type, ...]:
    """`T` (operands and result alike) or a functional type."""
    if text.startswith("("):
        return signature(text)
    return (type_of(text),)


@lru_cache(maxsize=4096)
def canonical_value(text: str) -> bool:
    """Whether MLIR prints the attribute value `text` as written."""
    if _STRING.match(text) or _INT_ATTR.match(text) or text in ("true", "false"):
        return True
    if text.startswith(_SDY_ATTR):
        try:
            return str(parse_attr(text)) == text
        except ShardcError:
            return False
    if text.startswith("{") and text.endswith("}"):
        return canonical_dict(text[1:-1])
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1]
        if not inner:
            return True
        # elements: no numbers (MLIR elides an element's `: i64` in arrays, not in dicts)
        parts = [p.strip() for p in split_top_level(inner)]
        return ", ".join(parts) == inner and all(
            not (_INT_ATTR.match(p) or _FLOAT_ATTR.match(p)) and canonical_value(p)
            for p in parts
        )
    m = _FLOAT_ATTR.match(text)
    return m is not None and canonical_float(m.group(1), m.group(2))


@lru_cache(maxsize=4096)
def canonical_dict(body: str) -> bool:
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
        if not BARE_KEY.match(key) or (eq and not canonical_value(value)):
            return False
        keys.append(key)
        rebuilt.append(entry)
    return keys == sorted(keys) and len(set(keys)) == len(keys) and ", ".join(rebuilt) == body


def checked_attrs(text: str | None) -> str | None:
    """An op's attribute-dictionary body, checked canonical (None when the op has none)."""
    if text is None:
        return None
    if not text or not canonical_dict(text):
        raise Unhandled(f"attributes {{{text}}}")
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
    return re.fullmatch(INT, literal) is not None


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
def dense_as_printed(literal: str, type_text: str) -> bool:
    """Whether `dense<literal>` of `type_text` is spelled as MLIR prints it: a splat, a nested
    list of up to 100 elements that are not all equal, or a hex string of more."""
    t = type_of(type_text)
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


def i64_array(items: str) -> str:
    """`0, 1` -> `array<i64: 0, 1>` (and `` -> `array<i64>`)."""
    return f"array<i64: {items}>" if items else "array<i64>"


def check_entries(body: str, inherent: bool, check: Callable[[str], bool] | None) -> None:
    """Check a generic op's properties (`inherent`) or attribute dictionary body as MLIR prints
    it: sorted bare names, values printed as written (checked here, else by `check`, jaxlib's
    print of the value); attributes only of names with a dialect prefix (jaxlib moves an op's
    own attributes written there to its properties). Raises `Unhandled` otherwise."""
    if not body:
        return
    entries = [e.strip() for e in split_top_level(body)]
    if ", ".join(entries) != body:
        raise Unhandled("attribute spacing")
    keys = []
    for entry in entries:
        key, eq, value = entry.partition(" = ")
        if not BARE_KEY.match(key) or (not inherent and "." not in key):
            raise Unhandled(f"attribute {key}")
        if eq and not (canonical_value(value) or (check is not None and check(value))):
            raise Unhandled(f"attribute value {value[:40]}")
        keys.append(key)
    if keys != sorted(keys) or len(set(keys)) != len(keys):
        raise Unhandled("attribute order")
