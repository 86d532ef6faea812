// RUN: shardc propagate --split-input-file %s | filecheck %s

// shardc's own shape-op cases (regression goldens).

// transpose swaps the dims' axes
// CHECK-LABEL: func.func @transpose_2d(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
// CHECK-NEXT: %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: return %0 : tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @transpose_2d(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16x8xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// 8x16 -> 8x4x4 keeps dim 0 and splits dim 1
// CHECK-LABEL: func.func @reshape_identity_like(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}, {}]>]>} : (tensor<8x16xf32>) -> tensor<8x4x4xf32>
// CHECK-NEXT: return %0 : tensor<8x4x4xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reshape_identity_like(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x4x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8x16xf32>) -> tensor<8x4x4xf32>
  return %0 : tensor<8x4x4xf32>
}

// -----

// a closed reshape result flows back to the operand
// CHECK-LABEL: func.func @reshape_backward(
// CHECK-SAME: %arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}]>]>} : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT: return %0 : tensor<32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reshape_backward(%arg0: tensor<4x8xf32>) -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) {
  %0 = stablehlo.reshape %arg0 : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// a sharded new broadcast dim does not reach the operand
// CHECK-LABEL: func.func @broadcast_new_dim_backward(
// CHECK-SAME: %arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.add %0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @broadcast_new_dim_backward(%arg0: tensor<16xf32>, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// slice propagates both dims
// CHECK-LABEL: func.func @slice_keeps(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.slice %arg0 [0:8, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: return %0 : tensor<8x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @slice_keeps(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.slice %arg0 [0:8, 0:8] : (tensor<8x16xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// reducing dim 0 keeps dim 1's axis
// CHECK-LABEL: func.func @reduce_both_dims(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
// CHECK-NEXT: return %0 : tensor<16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reduce_both_dims(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// concatenate along dim 0 propagates dim 1
// CHECK-LABEL: func.func @concat_dim0(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT: return %0 : tensor<16x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @concat_dim0(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<8x16xf32>) -> tensor<16x16xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

// iota has no rule: nothing propagates into it
// CHECK-LABEL: func.func @iota_no_rule(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.add %arg0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @iota_no_rule(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<8x16xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
