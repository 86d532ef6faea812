"""Dynamic dims: shardc propagates around them where Shardy refuses the module.

Shardy's propagation (jaxlib 0.10.2) refuses any op with a dynamic result type ("only supports
ranked tensors with a static shape"). shardc's propagation accepts dynamic dims outside shard_map
regions: every factor on a dynamic dim is blocked, the static dims propagate as usual
(docs/shardy_differences.md). The pin export, the plan and auto sharding still need static
shapes. tests/lit/propagate/dynamic_shapes.mlir has the layouts; this pins the difference.
"""

from __future__ import annotations

import pytest

import shardc
from shardc.dialect.errors import VerificationError
from tests.differential import harness as H

MODULE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<?x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x8xf32>) -> tensor<?x8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<?x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
"""


def test_shardy_refuses_what_shardc_propagates() -> None:
    with pytest.raises(Exception, match="static shape"):  # noqa: B017 - jaxlib's error type
        H.run_shardy(MODULE)
    out = H.read_shardings(H.tag_module(shardc.propagate(H.tag_module(MODULE))))
    abs_result = next(v for infos in out.values.values() for v in infos if "stablehlo.abs" in v.where)
    dot = next(v for infos in out.values.values() for v in infos if "dot_general" in v.where)
    # the static dim of abs takes "y" from the argument; its dynamic dim takes nothing
    assert abs_result.sharding.dims == ((), ('"y"',))
    # the contraction is sharded on "y": arg1's dim 0 gets it; the dynamic dims stay empty
    assert dot.sharding.dims == ((), ())
    assert out.values["@main:arg1"][0].sharding.dims == (('"y"',), ())
    assert out.values["@main:arg0"][0].sharding.dims == (('"x"',), ('"y"',))  # (as written)


def test_what_compiles_or_plans_needs_static_shapes() -> None:
    for run in (
        lambda: shardc.propagate(MODULE, mode="pin"),
        lambda: shardc.plan(MODULE),
    ):
        with pytest.raises(VerificationError, match="dynamic dimension"):
            run()
