"""Memoize rules that depend only on the op's name, shapes and a few attribute texts.

Rules are frozen, so equal keys can share one object. A 100k-op module has few distinct
(shape, attribute) combinations; this turns most `rule_for` calls into one dict lookup.
Rules that look at other ops (defining ops of operands, users, regions) must not use it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from ..ir import Operation
from ..types import TensorType
from .model import OpShardingRule

RuleFn = Callable[[Operation], OpShardingRule | None]

_MAX_ENTRIES = 65536


def _shape(value: object) -> tuple[int, ...] | None:
    t = getattr(value, "type", None)
    return t.shape if isinstance(t, TensorType) else None


def shape_keyed(*attr_names: str) -> Callable[[RuleFn], RuleFn]:
    """Cache `fn(op)` on (op name, operand/result shapes, the raw texts of `attr_names`)."""

    def deco(fn: RuleFn) -> RuleFn:
        cache: dict[tuple, OpShardingRule | None] = {}

        @wraps(fn)
        def wrapper(op: Operation) -> OpShardingRule | None:
            key = (
                op.name,
                tuple(_shape(v) for v in op.operands),
                tuple(_shape(v) for v in op.results),
                tuple(str(op.attr(a)) for a in attr_names),
            )
            try:
                return cache[key]
            except KeyError:
                pass
            rule = fn(op)
            if len(cache) >= _MAX_ENTRIES:
                cache.clear()
            cache[key] = rule
            return rule

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return deco
