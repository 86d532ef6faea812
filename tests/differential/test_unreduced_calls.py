"""A callee whose argument is unreduced, called once with a reduced value and once with its own
unreduced result: the export makes the first call site's change explicit (a constraint), the
form newer Shardy verifies (a call operand has its callee argument's unreduced axes unless an
explicit reshard made it), and both export modes compile with XLA to the unsharded numbers."""

from __future__ import annotations

import numpy as np
import pytest

import shardc
from shardc.backend.importer import import_text
from shardc.dialect.ir import callee_name, func_body
from shardc.dialect.op_views import RESHARD, SHARDING_CONSTRAINT

from . import harness as H

PROGRAM = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = call @partial(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = call @partial(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = stablehlo.negate %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
func.func private @partial(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""


def _implicit_changes(text: str) -> list[str]:
    """The call operands whose unreduced axes differ from their callee argument's without an
    explicit reshard making them so."""
    module = import_text(text)
    out = []
    for call in module.ops_named("func.call"):
        body = func_body(module.funcs[callee_name(call)])
        assert body is not None
        for i, (v, arg) in enumerate(zip(call.operands, body.args, strict=True)):
            owner = getattr(v, "owner", None)
            if owner is not None and owner.name in (SHARDING_CONSTRAINT, RESHARD):
                continue
            have = set(v.sharding.unreduced) if v.sharding else set()
            want = set(arg.sharding.unreduced) if arg.sharding else set()
            if have != want:
                out.append(f"operand {i} of the call of @{callee_name(call)}: {have} vs {want}")
    return out


def test_the_export_makes_each_unreduced_change_at_a_call_explicit() -> None:
    out = shardc.propagate(PROGRAM)
    assert "unreduced" in out, "the callee's argument is expected unreduced here"
    assert _implicit_changes(out) == []


@pytest.mark.parametrize("mode", ["annotate", "pin"])
def test_an_unreduced_callee_compiles_to_the_unsharded_numbers(mode: str) -> None:
    exe = H.compile_mlir(shardc.propagate(PROGRAM, mode=mode))
    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    (got,) = H.run_executable(exe, [a])
    np.testing.assert_array_equal(got, -a)
