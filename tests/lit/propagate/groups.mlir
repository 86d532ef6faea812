// RUN: shardc propagate %s | filecheck %s
// Golden cases (docs/propagation.md §10): Shardy's sdy-propagation-pipeline, jaxlib 0.10.2;
// the CHECK lines are the exported form of the shardings Shardy chooses.

sdy.mesh @mesh = <["x"=4, "y"=2]>

// G20: a group links %arg0 with a constant chain, which gets its sharding
// CHECK-LABEL: func.func @g20_sharding_group(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: sdy.sharding_group %arg0 group_id=0 : tensor<8x16xf32>
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} dense<0.000000e+00> : tensor<8x16xf32>
// CHECK-NEXT: %0 = stablehlo.exponential %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: sdy.sharding_group %0 group_id=0 : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
func.func @g20_sharding_group(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  sdy.sharding_group %arg0 group_id=0 : tensor<8x16xf32>
  %0 = stablehlo.constant dense<0.0> : tensor<8x16xf32>
  %1 = stablehlo.exponential %0 : tensor<8x16xf32>
  sdy.sharding_group %1 group_id=0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
