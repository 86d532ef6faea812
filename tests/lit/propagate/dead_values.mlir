// RUN: shardc propagate %s | filecheck %s
// Dead values decide nothing: Shardy's pipeline erases side-effect-free ops whose results only dead
// ops use (to a fixed point) before it propagates, so the dead maximum and dot_general pull no
// axes of %arg1/%arg2 into %0 (checked against sdy-propagation-pipeline). shardc keeps the dead
// ops in its output.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// CHECK-NEXT: %1 = stablehlo.maximum %0, %arg1
// CHECK-NEXT: %2 = stablehlo.dot_general %1, %arg2
// CHECK-NEXT: %3 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.maximum %0, %arg1 : tensor<8x16xf32>
  %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %3 = stablehlo.abs %0 : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
