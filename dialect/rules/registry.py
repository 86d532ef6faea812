"""The registry of op sharding rules, keyed by op name (interface; rules live beside it).

`rule_for(op)` returns the op's `OpShardingRule`: an `sdy.sharding_rule` attribute already on the
op first, then the registered rule, else `None` (no rule: propagation moves nothing through the op
and reports it by name).
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Operation
from .model import OpShardingRule

RuleFn = Callable[[Operation], OpShardingRule | None]

_RULES: dict[str, RuleFn] = {}


def register_rule(*names: str, override: bool = False) -> Callable[[RuleFn], RuleFn]:
    """Register `fn` as the rule builder of the ops `names`; twice raises unless `override`."""

    def deco(fn: RuleFn) -> RuleFn:
        for n in names:
            if n in _RULES and not override:
                raise ValueError(f"a sharding rule for {n} is already registered")
            _RULES[n] = fn
        return fn

    return deco


def rule_for(op: Operation) -> OpShardingRule | None:
    fn = _RULES.get(op.name)
    return fn(op) if fn is not None else None


def registered_ops() -> list[str]:
    return sorted(_RULES)
