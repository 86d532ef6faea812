"""The registry of op sharding rules, keyed by op name (rules live in the family modules).

`rule_for(op)` returns the op's `OpShardingRule`: an `sdy.sharding_rule` attribute already on the
op first (Shardy's lookup order), then the registered rule, else `None` (no rule: propagation
moves nothing through the op and reports it by name). `rule_for(op, conservative=True)` is
Shardy's conservative mode (`conservative-propagation=true`): the few ops whose rule differs
there register a second builder with `register_rule(..., conservative=True)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ShardcError
from ..ir import Operation
from .model import OpShardingRule
from .syntax import parse_rule

RuleFn = Callable[[Operation], OpShardingRule | None]

RULE_ATTR = "sdy.sharding_rule"

_RULES: dict[str, RuleFn] = {}
# the rules of conservative propagation where they differ from `_RULES`
_CONSERVATIVE_RULES: dict[str, RuleFn] = {}


class RuleRegistrationError(ShardcError, ValueError):
    """A registration the registry refuses (bad name, not callable, a second rule without
    `override=True`); raised before anything is registered."""


def check_registration(
    what: str,
    names: tuple[str, ...],
    fn: object,
    table: dict[str, Any],
    override: bool,
    register: str,
    key: Callable[[str], str] = lambda n: n,
) -> None:
    """Validate a whole registration before it changes `table` (every registry's one check):
    at least one non-empty name, a callable rule, and no second rule unless `override`."""
    if not names:
        raise RuleRegistrationError(f"{register}() was given no {what}", hint=f"name at least one {what}")
    for n in names:
        if not isinstance(n, str) or not n.strip():
            raise RuleRegistrationError(
                f"{register}({n!r}): a {what} must be a non-empty string",
                hint=f"pass {what}s as strings, e.g. {register}('stablehlo.add')",
            )
    if not callable(fn):
        raise RuleRegistrationError(
            f"{register}({', '.join(map(repr, names))}) decorates {fn!r}, which is not callable",
            hint="decorate a function op -> OpShardingRule (or use einsum_rule(...))",
        )
    if override:
        return
    for n in names:
        if n in table:
            raise RuleRegistrationError(
                f"a sharding rule for {key(n)} is already registered "
                f"({getattr(table[n], '__qualname__', table[n])})",
                hint=f"pass override=True to {register} to replace it",
            )


def register_rule(
    *names: str, override: bool = False, conservative: bool = False
) -> Callable[[RuleFn], RuleFn]:
    """Register `fn` as the rule builder of the ops `names`; twice raises unless `override`.
    Nothing is registered unless every name can be. `conservative`: the builder of conservative
    propagation's rule for those ops (the ops without one use their ordinary rule there)."""
    table = _CONSERVATIVE_RULES if conservative else _RULES

    def deco(fn: RuleFn) -> RuleFn:
        check_registration("op name", names, fn, table, override, "register_rule")
        for n in names:
            table[n] = fn
        return fn

    return deco


def unregister_rule(name: str) -> RuleFn | None:
    """Remove the rule of `name` (returns it); for tests and users who want no rule."""
    return _RULES.pop(name, None)


def rule_for(op: Operation, conservative: bool = False) -> OpShardingRule | None:
    """The rule on the op (`sdy.sharding_rule`), else the registered one (with `conservative`,
    conservative propagation's where the op has one), else None."""
    attached = op.attributes.get(RULE_ATTR)
    if attached is not None:
        if isinstance(attached, OpShardingRule):
            return attached
        return parse_rule(str(attached))
    fn = (conservative and _CONSERVATIVE_RULES.get(op.name)) or _RULES.get(op.name)
    return fn(op) if fn is not None else None


@dataclass
class RuleProblems:
    """The op names of one run whose rule could not be used (it raised, or its tensor counts
    are not the op's), each with the first reason: reported once per op name, however many ops
    and passes met it."""

    reasons: dict[str, str] = field(default_factory=dict)

    def note(self, name: str, reason: str) -> None:
        self.reasons.setdefault(name, reason)

    def lines(self) -> list[str]:
        """One line per op name, in the order they were met."""
        return [f"sharding rule of {name} {why}" for name, why in self.reasons.items()]


def checked_rule(
    op: Operation, conservative: bool = False
) -> tuple[OpShardingRule | None, str | None]:
    """`rule_for(op, conservative)` under the one policy every pass applies: (the rule, None);
    (None, None) for an op without one; (None, why) for a rule that cannot be used, because it
    raised (a user's rule, a bad `sdy.sharding_rule` text) or its operand and result counts are
    not the op's: no rule either, never a crash."""
    try:
        rule = rule_for(op, conservative)
    except Exception as e:  # noqa: BLE001 - a broken rule must not stop a pass
        return None, f"failed: {e}"
    if rule is not None and (
        len(rule.operand_dims) != len(op.operands) or len(rule.result_dims) != len(op.results)
    ):
        return None, "does not match its arity"
    return rule, None


def usable_rule(
    op: Operation, conservative: bool = False, problems: RuleProblems | None = None
) -> OpShardingRule | None:
    """The op's rule where it can be used (`checked_rule`), else None; an unusable one is noted
    in `problems` (the run's), once per op name."""
    rule, why = checked_rule(op, conservative)
    if why is not None and problems is not None:
        problems.note(op.name, why)
    return rule


def rule_keyed_on_signature(name: str, conservative: bool = False) -> bool:
    """Whether ops named `name` get their rule from a registered builder memoized on shapes and
    attribute texts (`cache.shape_keyed`): then every such op with the same operand and result
    types and the same attribute texts (an attached `sdy.sharding_rule` included) gets an
    equal rule. False without a registered rule, or for one that reads other ops."""
    fn = (conservative and _CONSERVATIVE_RULES.get(name)) or _RULES.get(name)
    return hasattr(fn, "cache")


def registered_ops() -> list[str]:
    return sorted(_RULES)
