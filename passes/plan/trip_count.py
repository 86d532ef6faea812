"""Known trip counts of `stablehlo.while` loops (the counted loops JAX's fori_loop/scan emit).

A loop is counted when its condition is `compare LT, %iterArg_k, C` with C a constant, the
initial value of carry k is a constant and the body returns `add %iterArg_k, 1` in slot k:
then it runs `C - init` times (XLA's own analysis finds the same loops).
"""

from __future__ import annotations

import re

from shardc.dialect.data_flow import WHILE
from shardc.dialect.ir import BlockArgument, Operation, Value

_INT = re.compile(r"dense<(-?\d+)>")


def constant_int(v: Value) -> int | None:
    """The value of a scalar integer constant (`stablehlo.constant dense<3> : tensor<i32>`)."""
    owner = getattr(v, "owner", None)
    if owner is None or owner.name not in ("stablehlo.constant", "sdy.constant"):
        return None
    m = _INT.search(str(owner.attr("value", "")))
    return int(m.group(1)) if m else None


def trip_count(op: Operation) -> int | None:
    """The trip count of a `stablehlo.while`, or None when it is not a counted loop."""
    if op.name != WHILE or len(op.regions) < 2:
        return None
    cond, body = op.regions[0].entry, op.regions[1].entry
    ret = cond.terminator
    if ret is None or not ret.operands:
        return None
    cmp = getattr(ret.operands[0], "owner", None)
    if cmp is None or cmp.name != "stablehlo.compare" or len(cmp.operands) != 2:
        return None
    direction = str(cmp.attr("comparison_direction", ""))
    if "LT" not in direction:
        return None
    lhs, rhs = cmp.operands
    if not isinstance(lhs, BlockArgument) or lhs.block is not cond:
        return None
    k = lhs.index
    bound = constant_int(rhs)
    init = constant_int(op.operands[k]) if k < len(op.operands) else None
    if bound is None or init is None:
        return None
    body_ret = body.terminator
    if body_ret is None or k >= len(body_ret.operands):
        return None
    step = getattr(body_ret.operands[k], "owner", None)
    if step is None or step.name != "stablehlo.add" or len(step.operands) != 2:
        return None
    a, b = step.operands
    if isinstance(b, BlockArgument):
        a, b = b, a
    if not (isinstance(a, BlockArgument) and a.block is body and a.index == k):
        return None
    if constant_int(b) != 1:
        return None
    return max(bound - init, 0)
