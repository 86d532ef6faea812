"""The factor model of op sharding rules (after Shardy's `OpShardingRuleAttr`).

A rule names the op's factors (each with a size and a kind) and maps every operand and result dim
to the factors it is made of: one factor for a plain dim, several (major to minor) for a dim that
a reshape splits or merges, none for a dim of size 1 that carries no factor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache


class FactorKind(Enum):
    """How a factor may be sharded (Shardy's factor types)."""

    PASS_THROUGH = "pass_through"  # in operands and results alike: sharding it needs no comms
    REDUCTION = "reduction"  # only in operands: sharding it leaves partial results (all-reduce)
    NEED_REPLICATION = "need_replication"  # must stay replicated (e.g. the sort dim)
    PERMUTATION = "permutation"  # may be sharded but moving data across it needs comms


@dataclass(frozen=True, slots=True)
class OpShardingRule:
    """`factor_sizes[f]`, `kinds[f]`; `operand_dims[i][d]` = factors of dim d of operand i.

    `blocked` holds factors along which propagation must not move shardings (a flag beside the
    kind, as in Shardy). `is_custom` marks rules that came from the user or an attribute.
    """

    factor_sizes: tuple[int, ...]
    operand_dims: tuple[tuple[tuple[int, ...], ...], ...]
    result_dims: tuple[tuple[tuple[int, ...], ...], ...]
    kinds: tuple[FactorKind, ...]
    blocked: frozenset[int] = frozenset()
    is_custom: bool = False

    @property
    def num_factors(self) -> int:
        return len(self.factor_sizes)

    def __str__(self) -> str:
        return print_rule(self)

    @property
    def num_operands(self) -> int:
        return len(self.operand_dims)

    @property
    def num_results(self) -> int:
        return len(self.result_dims)

    def factor_kind(self, factor: int) -> FactorKind:
        return self.kinds[factor]

    def is_blocked(self, factor: int) -> bool:
        return factor in self.blocked


# ---------------------------------------------------------------------------------------------
# the rule's text (`syntax.py` parses it)

# the clause naming each factor kind other than pass-through, in the order Shardy prints them
KIND_CLAUSES = (
    ("reduction", FactorKind.REDUCTION),
    ("need_replication", FactorKind.NEED_REPLICATION),
    ("permutation", FactorKind.PERMUTATION),
)


@cache
def factor_symbol(index: int) -> str:
    """`i`, `j`, ..., `z`, `z_1`, `z_2`, ... for factor 0, 1, ..."""
    return chr(ord("i") + index) if index < 18 else f"z_{index - 17}"


def _tensor_maps(maps: Sequence[Sequence[Sequence[int]]]) -> str:
    return ", ".join(
        "[" + ", ".join("".join(factor_symbol(f) for f in dim) for dim in m) + "]" for m in maps
    )


def print_rule(rule: OpShardingRule) -> str:
    """The exact `#sdy.op_sharding_rule<...>` text Shardy prints for `rule`."""
    parts = [
        f"#sdy.op_sharding_rule<({_tensor_maps(rule.operand_dims)})"
        f"->({_tensor_maps(rule.result_dims)})"
    ]
    if rule.factor_sizes:
        sizes = ", ".join(f"{factor_symbol(f)}={s}" for f, s in enumerate(rule.factor_sizes))
        parts.append(f" {{{sizes}}}")
    for clause, kind in KIND_CLAUSES:
        members = [f for f, k in enumerate(rule.kinds) if k is kind]
        if members:
            parts.append(f" {clause}={{{', '.join(factor_symbol(f) for f in members)}}}")
    if rule.blocked:
        syms = ", ".join(factor_symbol(f) for f in sorted(rule.blocked))
        parts.append(f" blocked_propagation={{{syms}}}")
    if rule.is_custom:
        parts.append(", custom")
    parts.append(">")
    return "".join(parts)
