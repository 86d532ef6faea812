"""Ops that deliberately have no sharding rule, with the reason (docs/op_rules.md §3.9).
Propagation moves nothing through them (or handles them elsewhere) and reports them."""

from __future__ import annotations

_HANDLED_ELSEWHERE = "handled by the propagation driver (regions, calls or data-flow edges)"
_NONE = "Shardy has no rule for it"
_CHLO = (
    "chlo op: XLA rewrites it before Shardy runs; Shardy's pipeline on the same text has no rule"
)

NO_RULE: dict[str, str] = {
    "builtin.module": _HANDLED_ELSEWHERE,
    "func.func": _HANDLED_ELSEWHERE,
    "func.call": _HANDLED_ELSEWHERE,
    "func.return": "terminator",
    "stablehlo.return": "terminator",
    "sdy.return": "terminator",
    "stablehlo.while": _HANDLED_ELSEWHERE,
    "stablehlo.case": _HANDLED_ELSEWHERE,
    "stablehlo.optimization_barrier": _HANDLED_ELSEWHERE,
    "sdy.propagation_barrier": _HANDLED_ELSEWHERE + "; identity with a direction",
    "sdy.manual_computation": _HANDLED_ELSEWHERE,
    "sdy.named_computation": _HANDLED_ELSEWHERE,
    "sdy.data_flow_edge": _HANDLED_ELSEWHERE,
    "sdy.mesh": "not an op on tensors",
    "stablehlo.constant": _NONE,
    "sdy.constant": _NONE,
    "stablehlo.iota": _NONE,
    "stablehlo.after_all": _NONE,
    "stablehlo.create_token": _NONE,
    "stablehlo.get_tuple_element": _NONE,
    "stablehlo.tuple": _NONE,
    "stablehlo.infeed": _NONE,
    "stablehlo.outfeed": _NONE,
    "stablehlo.partition_id": _NONE,
    "stablehlo.replica_id": _NONE,
    "stablehlo.recv": _NONE,
    "stablehlo.send": _NONE,
    "stablehlo.rng": _NONE,
    "stablehlo.if": _NONE + " (ops inside still propagate among themselves)",
    "stablehlo.map": _NONE,
    "sdy.reshard": _NONE,
    "sdy.sharding_group": _NONE,
    "chlo.erf": _CHLO,
    "chlo.lgamma": _CHLO,
    "chlo.digamma": _CHLO,
    "chlo.erf_inv": _CHLO,
    "chlo.tan": _CHLO,
    "chlo.sinh": _CHLO,
    "chlo.cosh": _CHLO,
    "chlo.asin": _CHLO,
    "chlo.acos": _CHLO,
    "chlo.atan": _CHLO,
    "chlo.asinh": _CHLO,
    "chlo.acosh": _CHLO,
    "chlo.atanh": _CHLO,
    "chlo.square": _CHLO,
    "chlo.bessel_i1e": _CHLO,
    "chlo.polygamma": _CHLO,
    "chlo.zeta": _CHLO,
    "chlo.next_after": _CHLO,
    "chlo.is_inf": _CHLO,
    "chlo.is_neg_inf": _CHLO,
    "chlo.is_pos_inf": _CHLO,
}
