"""`shardc propagate --explicit`: the plan written as explicit sdy collectives parses with
jaxlib, and the same module with each collective written as a sharding constraint to its
out_sharding compiles with XLA to the numbers of the unsharded program (docs/xla_boundary.md
§2: XLA 0.10.2 rejects the collectives themselves). A few representative
programs (dots with reduce-scatters, conflicts, a loop, a sort, a gradient); all 50 of the
differential suite pass the same check in `bench/plan_check.py`."""

from __future__ import annotations

import numpy as np
import pytest

from shardc.api.plan import explicit

from . import harness as H
from . import runs
from .programs import PROGRAMS, reference_outputs

NAMES = ["ffn_2d_finalized", "priority_p0_rhs", "fori_loop", "argsort_cumsum", "grad_mlp"]


@pytest.mark.parametrize("name", NAMES)
def test_explicit_collectives_compile_to_the_same_numbers(name: str) -> None:
    text = runs.tagged(name)
    shown = explicit(text)
    assert H.read_shardings(shown).values  # jaxlib parses the explicit module
    assert "sdy.all_" in shown or "sdy.collective_permute" in shown, shown
    exe = H.compile_mlir(explicit(text, constraints=True))
    prog = PROGRAMS[name]
    outs = H.run_executable(exe, prog.args())
    for got, want in zip(outs, reference_outputs(name), strict=True):
        np.testing.assert_allclose(got, want, rtol=prog.rtol, atol=prog.atol)


# fori_loop as newer jax lowers it (the loop's body inlined, no func.call): the reshard of a
# loop-carried value is written on a block argument inside the while
INLINED_LOOP = """
module @jit_fori attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x16xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %c, %iterArg_1 = %arg0) : tensor<16x16xf32>, tensor<i32>, tensor<8x16xf32>
    cond {
      %c_2 = stablehlo.constant dense<3> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg_0, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.dot_general %iterArg_1, %iterArg, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
      %2 = stablehlo.tanh %1 : tensor<8x16xf32>
      %3 = stablehlo.add %2, %iterArg_1 : tensor<8x16xf32>
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %4 = stablehlo.add %iterArg_0, %c_2 : tensor<i32>
      stablehlo.return %iterArg, %4, %3 : tensor<16x16xf32>, tensor<i32>, tensor<8x16xf32>
    }
    return %0#2 : tensor<8x16xf32>
  }
}
"""


def test_a_reshard_in_an_inlined_loop_becomes_a_constraint_to_its_sharding() -> None:
    # `sdy.reshard` states its result's sharding as `sharding`, not `out_sharding`: the
    # constraint it becomes asks for that sharding (it was written empty, which jaxlib rejects)
    shown = explicit(INLINED_LOOP)
    assert "sdy.reshard %iterArg_1 <@mesh, [{\"x\"}, {}]>" in shown, shown
    constrained = explicit(INLINED_LOOP, constraints=True)
    assert "sdy.sharding_constraint %iterArg_1 <@mesh, [{\"x\"}, {}]>" in constrained, constrained
    exe = H.compile_mlir(constrained)
    prog = PROGRAMS["fori_loop"]
    outs = H.run_executable(exe, prog.args())
    for got, want in zip(outs, reference_outputs("fori_loop"), strict=True):
        np.testing.assert_allclose(got, want, rtol=prog.rtol, atol=prog.atol)
