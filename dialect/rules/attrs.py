"""Readers of the raw MLIR attribute texts the rules need, cached by text.

Property values arrive as raw text (`array<i64: 0, 1>`, `1 : i64`, `#stablehlo.dot<...>`);
a 100k-op module repeats a few distinct texts, so every reader is an `lru_cache` on the string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..ir import Operation

_INT = re.compile(r"-?\d+")
_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)")
_CONV = re.compile(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]")
_DENSE = re.compile(r"dense<(.*)>\s*:\s*tensor<([\dx]*)x?i\d+>", re.S)
_WORD = re.compile(r"<\s*\w+\s+(\w+)\s*>")


@lru_cache(maxsize=4096)
def int_list(text: str | None) -> tuple[int, ...]:
    """`array<i64: 0, 1>`, `array<i64>`, `[0, 1]` -> (0, 1)."""
    if not text:
        return ()
    body = text.split(":", 1)[1] if text.startswith("array<") and ":" in text else text
    if text.startswith("array<") and ":" not in text:
        return ()
    return tuple(int(x) for x in _INT.findall(body))


@lru_cache(maxsize=4096)
def bool_list(text: str | None) -> tuple[bool, ...]:
    if not text:
        return ()
    body = text.split(":", 1)[1] if ":" in text else text
    return tuple(w == "true" for w in re.findall(r"true|false", body))


@lru_cache(maxsize=4096)
def int_value(text: str | None, default: int = 0) -> int:
    """`1 : i64` -> 1."""
    if text is None:
        return default
    m = _INT.search(text)
    return int(m.group(0)) if m else default


@lru_cache(maxsize=4096)
def struct_fields(text: str | None) -> dict[str, Any]:
    """`#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>` -> {name: tuple | int}."""
    out: dict[str, Any] = {}
    for name, value in _FIELD.findall(text or ""):
        out[name] = (
            tuple(int(x) for x in _INT.findall(value)) if value.startswith("[") else int(value)
        )
    return out


@lru_cache(maxsize=4096)
def enum_word(text: str | None) -> str:
    """`#stablehlo<fft_type RFFT>` -> `RFFT`."""
    if not text:
        return ""
    m = _WORD.search(text)
    return m.group(1) if m else text.strip()


@lru_cache(maxsize=4096)
def dense_pairs(text: str | None, rank: int) -> tuple[tuple[int, int], ...]:
    """Padding `dense<1> : tensor<2x2xi64>` or `dense<[[0, 0], [1, 1]]> ...` -> ((lo, hi), ...)."""
    if not text:
        return ((0, 0),) * rank
    m = _DENSE.search(text)
    values = [int(x) for x in _INT.findall(m.group(1) if m else text)]
    if len(values) == 1:
        values = values * (2 * rank)
    return tuple((values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2))


@dataclass(frozen=True, slots=True)
class ConvDims:
    """Dimension numbers of `stablehlo.convolution`."""

    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]


def _layout(text: str, batch: str, feature: str) -> tuple[int, int, tuple[int, ...]]:
    letters = [x.strip() for x in text.split(",")]
    spatial = sorted((int(x), d) for d, x in enumerate(letters) if x.isdigit())
    return letters.index(batch), letters.index(feature), tuple(d for _, d in spatial)


@lru_cache(maxsize=1024)
def conv_dims(text: str) -> ConvDims:
    """`#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>` or its `raw` form."""
    m = _CONV.search(text)
    if m:
        ib, if_, isp = _layout(m.group(1), "b", "f")
        ki, ko, ksp = _layout(m.group(2), "i", "o")
        ob, of, osp = _layout(m.group(3), "b", "f")
        return ConvDims(
            input_batch=ib,
            input_feature=if_,
            input_spatial=isp,
            kernel_input_feature=ki,
            kernel_output_feature=ko,
            kernel_spatial=ksp,
            output_batch=ob,
            output_feature=of,
            output_spatial=osp,
        )
    f = struct_fields(text)
    return ConvDims(
        input_batch=f["input_batch_dimension"],
        input_feature=f["input_feature_dimension"],
        input_spatial=f.get("input_spatial_dimensions", ()),
        kernel_input_feature=f["kernel_input_feature_dimension"],
        kernel_output_feature=f["kernel_output_feature_dimension"],
        kernel_spatial=f.get("kernel_spatial_dimensions", ()),
        output_batch=f["output_batch_dimension"],
        output_feature=f["output_feature_dimension"],
        output_spatial=f.get("output_spatial_dimensions", ()),
    )


def attr_ints(op: Operation, key: str) -> tuple[int, ...]:
    value = op.attr(key)
    return int_list(value if isinstance(value, str) or value is None else str(value))


def attr_int(op: Operation, key: str, default: int = 0) -> int:
    value = op.attr(key)
    return int_value(value if isinstance(value, str) or value is None else str(value), default)


def attr_text(op: Operation, key: str) -> str | None:
    value = op.attr(key)
    return value if value is None or isinstance(value, str) else str(value)
