// RUN: shardc propagate --split-input-file %s | filecheck %s

// Golden cases (docs/propagation.md §10): Shardy's sdy-propagation-pipeline, jaxlib 0.10.2;
// the CHECK lines are the exported form of the shardings Shardy chooses.

// G44: each use sees its own copy of the constant: the second add keeps "y"
// (Shardy clones the constant; shardc keeps one op, annotated with its first user's sharding)
// CHECK-LABEL: func.func @g44_constant_used_twice(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} dense<1.000000e+00> : tensor<8x16xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} dense<1.000000e+00> : tensor<8x16xf32>
// CHECK-NEXT: %0 = stablehlo.add %arg0, %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.add %arg1, %cst_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g44_constant_used_twice(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8x16xf32>
  %1 = stablehlo.add %arg1, %c : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// G45: a broadcast of a scalar is split per use like a constant
// CHECK-LABEL: func.func @g45_scalar_broadcast_used_twice(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg2: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.broadcast_in_dim %arg2, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<f32>) -> tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %arg2, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<f32>) -> tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.multiply %arg0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %3 = stablehlo.multiply %arg1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g45_scalar_broadcast_used_twice(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %s: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  %0 = stablehlo.multiply %arg0, %b : tensor<8x16xf32>
  %1 = stablehlo.multiply %arg1, %b : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
