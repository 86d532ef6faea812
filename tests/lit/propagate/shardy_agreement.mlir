// RUN: shardc propagate --split-input-file %s | filecheck %s
// Propagation differences from Shardy found by the differential fuzzer (issue 13, class 7), each
// reduced to its smallest case; the CHECK lines are what jaxlib 0.10.2's sdy-propagation-pipeline
// outputs for the same input.

// A closed manual_computation in_sharding is a constraint on its operand (Shardy's
// apply-sharding-constraints applies it): the negate takes [{"X"}, {}] as is instead of
// merging "Y" from its own operand.
// CHECK-LABEL: func.func @manual_closed_in_sharding(
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"X"}, {}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @manual_closed_in_sharding(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"X"}, {}]>] out_shardings=[<@mesh, [{"X"}, {}]>] manual_axes={"X", "Y"} (%a: tensor<2x8xf32>) {
    %2 = stablehlo.abs %a : tensor<2x8xf32>
    sdy.return %2 : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
