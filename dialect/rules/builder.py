"""A small builder of `OpShardingRule`s (after Shardy's `OpShardingRuleBuilder`).

Rules add factors one at a time, naming for every operand and result the dim the factor sits on
(`None` or -1: absent). `build()` gives every dim that got no factor a fresh size-1 factor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from ..ir import Operation
from ..types import TensorType
from .model import FactorKind, OpShardingRule

PT = FactorKind.PASS_THROUGH
R = FactorKind.REDUCTION
NR = FactorKind.NEED_REPLICATION
P = FactorKind.PERMUTATION

DimSpec = int | None | Sequence[int | None]


def shape_of(value: object) -> tuple[int, ...]:
    """The static shape of a value's type; `()` for anything that is not a ranked tensor."""
    t = getattr(value, "type", None)
    return t.shape if isinstance(t, TensorType) else ()


class RuleBuilder:
    """Collects factors, their sizes and kinds, and the dims they sit on."""

    __slots__ = ("_sizes", "_kinds", "_blocked", "_operands", "_results")

    def __init__(self, operand_ranks: Sequence[int], result_ranks: Sequence[int]):
        self._sizes: list[int] = []
        self._kinds: list[FactorKind] = []
        self._blocked: list[int] = []
        self._operands: list[list[list[int]]] = [[[] for _ in range(r)] for r in operand_ranks]
        self._results: list[list[list[int]]] = [[[] for _ in range(r)] for r in result_ranks]

    @classmethod
    def for_op(cls, op: Operation) -> RuleBuilder:
        return cls([len(shape_of(v)) for v in op.operands], [len(shape_of(v)) for v in op.results])

    @staticmethod
    def _expand(spec: DimSpec, n: int) -> Sequence[int | None]:
        if spec is None or isinstance(spec, int):
            return [spec] * n
        if len(spec) != n:
            raise ValueError(f"factor spec {list(spec)} names {len(spec)} tensors, expected {n}")
        return spec

    def add_factor(
        self,
        operand_dims: DimSpec,
        result_dims: DimSpec,
        size: int,
        kind: FactorKind = PT,
        blocked: bool = False,
    ) -> int:
        """Add a factor of `size` on `operand_dims[i]` of operand i and `result_dims[j]` of result j.

        An int applies to every operand (result); `None`/-1 means the tensor lacks the factor.
        A size-1 factor is not added to a dim that already has a factor (Shardy's rule: no size-1
        factors inside compound dims).
        """
        index = len(self._sizes)
        self._sizes.append(size)
        self._kinds.append(kind)
        if blocked:
            self._blocked.append(index)
        for tensors, spec in ((self._operands, operand_dims), (self._results, result_dims)):
            for mapping, dim in zip(tensors, self._expand(spec, len(tensors)), strict=True):
                if dim is None or dim < 0 or dim >= len(mapping):
                    continue
                if size == 1 and mapping[dim]:
                    continue
                mapping[dim].append(index)
        return index

    def add_pointwise(
        self,
        shape: Sequence[int],
        kind_of: Callable[[int], FactorKind] | None = None,
        blocked_if: Callable[[int], bool] | None = None,
    ) -> RuleBuilder:
        """One factor per dim of `shape`, on that dim of every tensor of rank >= len(shape)."""
        rank = len(shape)
        ops = [len(m) >= rank for m in self._operands]
        res = [len(m) >= rank for m in self._results]
        for dim, size in enumerate(shape):
            self.add_factor(
                [dim if ok else None for ok in ops],
                [dim if ok else None for ok in res],
                size,
                kind_of(dim) if kind_of else PT,
                blocked_if(dim) if blocked_if else False,
            )
        return self

    def build(self, is_custom: bool = False) -> OpShardingRule:
        """The rule; every dim left without a factor gets its own size-1 factor."""
        for tensors in (self._operands, self._results):
            for mapping in tensors:
                for dim_factors in mapping:
                    if not dim_factors:
                        dim_factors.append(len(self._sizes))
                        self._sizes.append(1)
                        self._kinds.append(PT)
        return OpShardingRule(
            factor_sizes=_shared(tuple(self._sizes)),
            operand_dims=_shared_dims(self._operands),
            result_dims=_shared_dims(self._results),
            kinds=_shared(tuple(self._kinds)),
            blocked=_shared(frozenset(self._blocked)),
            is_custom=is_custom,
        )


# Equal parts of rules, stored once: a module with distinct shapes has a rule per op shape, but
# the same few dim mappings (`(0,)`, `((0,), (1,))`, ...) and kinds recur in all of them.
# Bounded (emptied when full): a long-lived process keeps at most this many.
_SHARED: dict = {}
_SHARED_MAX = 65536


def _shared(value: Any) -> Any:
    """`value`, or the equal value stored first (rules are frozen: parts may be shared)."""
    got = _SHARED.get(value)
    if got is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        got = _SHARED[value] = value
    return got


def _shared_dims(tensors: list[list[list[int]]]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    return _shared(
        tuple(_shared(tuple(_shared(tuple(d)) for d in m)) for m in tensors)
    )


def pointwise_rule(op: Operation, shape: Sequence[int] | None = None) -> OpShardingRule:
    """Element-wise: one factor per dim of `shape` (default: result 0), scalars get `[]`."""
    if shape is None:
        shape = shape_of(op.results[0]) if op.results else shape_of(op.operands[0])
    return RuleBuilder.for_op(op).add_pointwise(shape).build()


@lru_cache(maxsize=4096)
def identity_rule(shape: tuple[int, ...], num_sources: int = 1) -> OpShardingRule:
    """`([i, j], [i, j], ...)->([i, j])`: N sources and one target of the same shape, one
    pass-through factor per dim (a dim of size 0 gets a factor of size 1, which nothing shards).

    Shardy builds this on the fly for data-flow edges, function results, constraints and
    `sdy.propagation_barrier`; the propagation driver uses it the same way (the one definition).
    """
    rank = len(shape)
    sizes = tuple(max(d, 1) for d in shape)
    return RuleBuilder([rank] * num_sources, [rank]).add_pointwise(sizes).build()
