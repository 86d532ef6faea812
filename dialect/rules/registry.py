"""The registry of op sharding rules, keyed by op name (rules live in the family modules).

`rule_for(op)` returns the op's `OpShardingRule`: an `sdy.sharding_rule` attribute already on the
op first (Shardy's lookup order), then the registered rule, else `None` (no rule: propagation
moves nothing through the op and reports it by name).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ShardcError
from ..ir import Operation
from .model import OpShardingRule

RuleFn = Callable[[Operation], OpShardingRule | None]

RULE_ATTR = "sdy.sharding_rule"

_RULES: dict[str, RuleFn] = {}


class RuleRegistrationError(ShardcError, ValueError):
    """A second rule for an op name registered without `override=True`."""


def register_rule(*names: str, override: bool = False) -> Callable[[RuleFn], RuleFn]:
    """Register `fn` as the rule builder of the ops `names`; twice raises unless `override`."""

    def deco(fn: RuleFn) -> RuleFn:
        for n in names:
            if n in _RULES and not override:
                raise RuleRegistrationError(
                    f"a sharding rule for {n} is already registered "
                    f"({getattr(_RULES[n], '__qualname__', _RULES[n])})",
                    hint="pass override=True to register_rule to replace it",
                )
        for n in names:
            _RULES[n] = fn
        return fn

    return deco


def unregister_rule(name: str) -> RuleFn | None:
    """Remove the rule of `name` (returns it); for tests and users who want no rule."""
    return _RULES.pop(name, None)


def rule_for(op: Operation) -> OpShardingRule | None:
    """The rule on the op (`sdy.sharding_rule`), else the registered one, else None."""
    attached = op.attributes.get(RULE_ATTR)
    if attached is not None:
        if isinstance(attached, OpShardingRule):
            return attached
        from .syntax import parse_rule

        return parse_rule(str(attached))
    fn = _RULES.get(op.name)
    return fn(op) if fn is not None else None


def has_registered_rule(name: str) -> bool:
    return name in _RULES


def registered_ops() -> list[str]:
    return sorted(_RULES)


def _load_builtin_rules() -> None:
    from . import (  # noqa: F401
        collectives,
        contraction,
        custom_call,
        gather_scatter,
        linalg,
        pointwise,
        reduction,
        sdy_ops,
        shape,
    )


_load_builtin_rules()
