"""`stablehlo.custom_call`: the targets Shardy knows (docs/op_rules.md §3.8).

An `sdy.sharding_rule` attribute on the call wins (the registry's lookup does that); unknown
targets get no rule.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Operation
from .attrs import attr_text
from .builder import NR, PT, RuleBuilder, pointwise_rule, shape_of
from .model import OpShardingRule
from .registry import check_registration, register_rule

CustomRuleFn = Callable[[Operation], OpShardingRule | None]

NO_RULE_TARGETS = frozenset(
    {
        "sdy_testonly",
        "tpu_custom_call",
        "xla_python_cpu_callback",
        "xla_python_gpu_callback",
        "xla_ffi_python_cpu_callback",
        "xla_ffi_python_gpu_callback",
    }
)

ELEMENTWISE_TARGETS = frozenset(
    {
        "annotate_device_placement",
        "Cholesky",
        "CompactWyHelper",
        "InspectSharding",
        "InvertDiagBlocksLowerTriangular",
        "InvertDiagBlocksUpperTriangular",
        "LayoutConstraint",
        "mhlo.erf",
        "MoveToDevice",
        "MoveToHost",
        "X64SplitHigh",
        "X64SplitLow",
        "xla.megascale.provide_metadata",
        "_SPMDInternalOp_MultiPad",
        "_SPMDInternalOp_RotateRight",
        "_SPMDInternalOp_MultiRotate",
        "_SPMDInternalOp_MultiSlice",
        "_SPMDInternalOp_Wrap",
    }
)

_TARGET_RULES: dict[str, CustomRuleFn] = {}
# target -> (operands, results) its rule reads (None: any number); a call of another shape has
# no rule (the builder would read operands it does not have)
_TARGET_ARITY: dict[str, tuple[int | None, int | None]] = {}


def register_custom_call_rule(
    *targets: str, override: bool = False, operands: int | None = None, results: int | None = None
) -> Callable[[CustomRuleFn], CustomRuleFn]:
    """Register a rule for `stablehlo.custom_call @target`; twice raises unless `override`.
    Nothing is registered unless every target can be (`RuleRegistrationError`, a ShardcError).
    `operands`, `results`: how many the rule reads; a call with other counts gets no rule."""

    def deco(fn: CustomRuleFn) -> CustomRuleFn:
        check_registration(
            "custom_call target",
            targets,
            fn,
            _TARGET_RULES,
            override,
            "register_custom_call_rule",
            key=lambda t: f"custom_call @{t}",
        )
        for t in targets:
            _TARGET_RULES[t] = fn
            _TARGET_ARITY[t] = (operands, results)
        return fn

    return deco


def unregister_custom_call_rule(target: str) -> None:
    """Remove a custom_call target's rule (ops with it then fall back to the default)."""
    _TARGET_RULES.pop(target, None)
    _TARGET_ARITY.pop(target, None)


def call_target(op: Operation) -> str:
    text = attr_text(op, "call_target_name") or ""
    return text.strip().strip('"')


@register_rule("stablehlo.custom_call")
def custom_call(op: Operation) -> OpShardingRule | None:
    target = call_target(op)
    if target in ELEMENTWISE_TARGETS:
        return pointwise_rule(op)
    fn = _TARGET_RULES.get(target)
    if fn is None:
        return None
    n_operands, n_results = _TARGET_ARITY.get(target, (None, None))
    if (n_operands is not None and len(op.operands) != n_operands) or (
        n_results is not None and len(op.results) != n_results
    ):
        return None
    return fn(op)


@register_custom_call_rule("X64Combine")
def x64_combine(op: Operation) -> OpShardingRule:
    """Element-wise, unless a user is rng_bit_generator: then every dim is NR and blocked."""
    feeds_rng = any(u.name == "stablehlo.rng_bit_generator" for r in op.results for u in r.users)
    if not feeds_rng:
        return pointwise_rule(op)
    shape = shape_of(op.results[0])
    return RuleBuilder.for_op(op).add_pointwise(shape, lambda d: NR, lambda d: True).build()


def _batch(b: RuleBuilder, shape: tuple[int, ...], batch: int) -> None:
    for d in range(batch):
        b.add_factor(d, d, shape[d])


@register_custom_call_rule("Eigh", operands=1, results=2)
def eigh(op: Operation) -> OpShardingRule:
    """`([i, j, k])->([i, j, k], [i, k])`."""
    shape = shape_of(op.operands[0])
    m, n = len(shape) - 2, len(shape) - 1
    b = RuleBuilder.for_op(op)
    _batch(b, shape, m)
    b.add_factor(m, [m, None], shape[m])
    b.add_factor(n, [n, m], shape[n])
    return b.build()


@register_custom_call_rule("Qr", "QrDecompositionBlock", operands=1)
def qr(op: Operation) -> OpShardingRule:
    """`([i, j, k])->([i, j, k], [i, l])`, matrix factors need replication."""
    shape = shape_of(op.operands[0])
    taus = shape_of(op.results[1]) if len(op.results) > 1 else ()
    m, n = len(shape) - 2, len(shape) - 1
    b = RuleBuilder.for_op(op)
    _batch(b, shape, m)
    b.add_factor(m, [m, None], shape[m], NR)
    b.add_factor(n, [n, None], shape[n], NR)
    if taus:
        b.add_factor(None, [None, len(taus) - 1], taus[-1], NR)
    return b.build()


@register_custom_call_rule("ProductOfElementaryHouseholderReflectors", operands=2, results=1)
def householder_product(op: Operation) -> OpShardingRule:
    """`([i, j, k], [i, l])->([i, j, k])`, matrix factors need replication."""
    shape, taus = shape_of(op.operands[0]), shape_of(op.operands[1])
    m, n = len(shape) - 2, len(shape) - 1
    b = RuleBuilder.for_op(op)
    for d in range(m):
        b.add_factor([d, d], d, shape[d])
    b.add_factor([m, None], m, shape[m], NR)
    b.add_factor([n, None], n, shape[n], NR)
    b.add_factor([None, len(taus) - 1], None, taus[-1], NR)
    return b.build()


@register_rule("chlo.top_k")
@register_custom_call_rule("mhlo.topk", operands=1, results=2)
def topk(op: Operation) -> OpShardingRule:
    """Batch dims pass through; the top-k dim is one NR, blocked factor of the operand size.

    Also `chlo.top_k`, which JAX emits: Shardy's standalone pipeline has no rule for it, but XLA
    turns it into `mhlo.topk` before its own Shardy run (docs/op_rules.md §3.9), so this is
    the rule the compiled program is partitioned with."""
    shape = shape_of(op.operands[0])
    last = len(shape) - 1
    return (
        RuleBuilder.for_op(op)
        .add_pointwise(shape, lambda d: NR if d == last else PT, lambda d: d == last)
        .build()
    )


@register_custom_call_rule("ApproxTopK", "PartialReduce")
def approx_topk(op: Operation) -> OpShardingRule:
    """The reduced dim: an operand-only factor and a result-only NR, blocked factor."""
    shape, out = shape_of(op.operands[0]), shape_of(op.results[0])
    changed = [d for d in range(len(shape)) if shape[d] != out[d]] or [len(shape) - 1]
    rd = changed[0]
    b = RuleBuilder.for_op(op)
    n_in = len(op.results)
    for d, size in enumerate(shape):
        if d == rd:
            b.add_factor([d] * n_in + [None] * (len(op.operands) - n_in), None, size)
            b.add_factor(None, d, out[d], NR, blocked=True)
        else:
            b.add_factor([d] * n_in + [None] * (len(op.operands) - n_in), d, size)
    return b.build()
