"""Op sharding rules: the factor model, a builder, the registry and its built-in rules (one module
per op family), and the text syntaxes (`#sdy.op_sharding_rule<...>`, einsum-like custom rules).

The built-in rules register themselves when their family module is imported, here, so importing
any part of the package (the registry included) brings them all.
"""

# the op families: each registers its rules with the registry on import
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
from .builder import RuleBuilder, identity_rule, pointwise_rule
from .custom_call import register_custom_call_rule, unregister_custom_call_rule
from .model import FactorKind, OpShardingRule, print_rule
from .no_rule import NO_RULE
from .registry import register_rule, registered_ops, rule_for, unregister_rule
from .syntax import einsum_rule, parse_rule, rule_from_einsum

__all__ = [
    "NO_RULE",
    "FactorKind",
    "OpShardingRule",
    "RuleBuilder",
    "einsum_rule",
    "identity_rule",
    "parse_rule",
    "pointwise_rule",
    "print_rule",
    "register_custom_call_rule",
    "register_rule",
    "registered_ops",
    "rule_for",
    "rule_from_einsum",
    "unregister_custom_call_rule",
    "unregister_rule",
]
