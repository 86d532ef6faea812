"""MLIR types: ranked tensors (shape + element type) and an opaque type for the rest."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .brackets import split_top_level, top_level_arrow

_TENSOR = re.compile(r"tensor<((?:(?:\d+|\?)x)*)([^,<>]+(?:<[^>]*>)?)(?:,\s*(.+))?>$")


@dataclass(frozen=True, slots=True)
class TensorType:
    """`tensor<8x16xf32>`; `-1` marks a dynamic dim; `encoding` keeps any layout text."""

    shape: tuple[int, ...]
    element_type: str
    encoding: str | None = None
    text: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.text:
            dims = "".join(("?" if d < 0 else str(d)) + "x" for d in self.shape)
            enc = f", {self.encoding}" if self.encoding else ""
            object.__setattr__(self, "text", f"tensor<{dims}{self.element_type}{enc}>")

    @property
    def rank(self) -> int:
        return len(self.shape)

    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= max(d, 0)
        return n

    def byte_size(self) -> int:
        return self.num_elements() * element_bytes(self.element_type)

    def with_shape(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(tuple(shape), self.element_type, self.encoding)

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class OpaqueType:
    """Any type shardc does not interpret (`!stablehlo.token`, `tuple<...>`, ...)."""

    text: str

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


Type = TensorType | OpaqueType


@lru_cache(maxsize=16384)
def parse_type(text: str) -> Type:
    text = text.strip()
    if text.startswith("tensor<"):
        m = _TENSOR.match(text)
        if m:
            dims = m.group(1)
            shape = tuple(-1 if d == "?" else int(d) for d in dims.split("x")[:-1]) if dims else ()
            return TensorType(shape, m.group(2).strip(), m.group(3), text)
    return OpaqueType(text)


_BITS = re.compile(r"[a-z]+(\d+)")


def element_bytes(element_type: str) -> int:
    if element_type == "i1":
        return 1
    if element_type.startswith("complex<"):
        return 2 * element_bytes(element_type[8:-1])
    m = _BITS.search(element_type)
    return max(int(m.group(1)) // 8, 1) if m else 4


def split_types(text: str) -> list[str]:
    """`tensor<2xf32>, tensor<f32>` -> the types (respecting nested `<...>`)."""
    text = text.strip()
    if not text:
        return []
    return [t.strip() for t in split_top_level(text)]


@lru_cache(maxsize=16384)
def split_function_type(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`(A, B) -> (C, D)` or `(A) -> C` -> (("A", "B"), ("C", "D"))."""
    text = text.strip()
    arrow = top_level_arrow(text)
    if arrow < 0:
        raise ValueError(f"not a function type: {text}")
    ins = text[:arrow].strip()
    outs = text[arrow + 2 :].strip()
    ins_l = split_types(ins[1:-1]) if ins.startswith("(") else split_types(ins)
    if outs.startswith("(") and outs.endswith(")"):
        outs_l = split_types(outs[1:-1])
    else:
        outs_l = split_types(outs)
    return tuple(ins_l), tuple(outs_l)
