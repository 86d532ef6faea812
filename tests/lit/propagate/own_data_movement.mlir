// RUN: shardc propagate --split-input-file %s | filecheck %s

// shardc's own cases for reductions, shape and data-movement ops (each compared value by value
// with Shardy's sdy-propagation-pipeline from jaxlib 0.10.2 before the goldens were written).

// the reduced dim's "y" is dropped (a reduction factor is not propagated to the result); "x" stays on the batch dim
// CHECK-LABEL: func.func @reduce_keeps_batch(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT: return %0 : tensor<8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reduce_keeps_batch(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// "x" on the non-concatenated dim reaches the result and the other operand
// CHECK-LABEL: func.func @concatenate_non_concat_dim(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
// CHECK-NEXT: return %0 : tensor<8x24xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @concatenate_non_concat_dim(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x24xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
  return %0 : tensor<8x24xf32>
}

// -----

// both dims keep their axes: the sliced dim is a permutation factor, which non-conservative propagation still follows
// CHECK-LABEL: func.func @slice_keeps_unsliced_dim(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.slice %arg0 [0:8, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: return %0 : tensor<8x4xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @slice_keeps_unsliced_dim(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.slice %arg0 [0:8, 0:4] : (tensor<8x16xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// the operand's "y" follows dim 1; the new dim 0 stays replicated
// CHECK-LABEL: func.func @broadcast_adds_dim(
// CHECK-SAME: %arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @broadcast_adds_dim(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// batch dim from %arg0, non-contracting dim from %arg1: result [{"x"}, {}, {"y"}]
// CHECK-LABEL: func.func @batched_dot(
// CHECK-SAME: %arg0: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}
// CHECK-SAME: %arg1: tensor<4x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"y"}]>}
// CHECK-SAME: -> (tensor<4x8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {"y"}]>]>} : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
// CHECK-NEXT: return %0 : tensor<4x8x32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @batched_dot(%arg0: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}, %arg1: tensor<4x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"y"}]>}) -> tensor<4x8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// the two branches contribute one dim each; the predicate and result take both
// CHECK-LABEL: func.func @select_three_way(
// CHECK-SAME: %arg0: tensor<8x16xi1> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.select %arg0, %arg1, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xi1>, tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @select_three_way(%arg0: tensor<8x16xi1>, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<8x16xi1>, tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// reverse is a pass-through on every dim (the reversed dim too)
// CHECK-LABEL: func.func @reverse_keeps_axes(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.reverse %arg0, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reverse_keeps_axes(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.reverse %arg0, dims = [1] : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// a two-axis dim goes through compare to the i1 result and to the other operand
// CHECK-LABEL: func.func @compare_to_bool(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xi1> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.compare GT, %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
// CHECK-NEXT: return %0 : tensor<8x16xi1>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @compare_to_bool(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<8x16xf32>) -> tensor<8x16xi1> {
  %0 = stablehlo.compare GT, %arg0, %arg1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
  return %0 : tensor<8x16xi1>
}

// -----

// every dim's axes follow the permutation
// CHECK-LABEL: func.func @transpose_3d(
// CHECK-SAME: %arg0: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}
// CHECK-SAME: -> (tensor<16x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}, {}]>]>} : (tensor<4x8x16xf32>) -> tensor<16x4x8xf32>
// CHECK-NEXT: return %0 : tensor<16x4x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @transpose_3d(%arg0: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}) -> tensor<16x4x8xf32> {
  %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<4x8x16xf32>) -> tensor<16x4x8xf32>
  return %0 : tensor<16x4x8xf32>
}

// -----

// both dims keep their axes: the padded dim is a permutation factor, followed as for slice
// CHECK-LABEL: func.func @pad_keeps_unpadded_dim(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x20xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %0 = stablehlo.pad %arg0, %cst, low = [0, 2], high = [0, 2], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x20xf32>
// CHECK-NEXT: return %0 : tensor<8x20xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pad_keeps_unpadded_dim(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x20xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.pad %arg0, %cst, low = [0, 2], high = [0, 2], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x20xf32>
  return %0 : tensor<8x20xf32>
}

// -----

// a func-result sharding flows backward through two element-wise ops to both arguments
// CHECK-LABEL: func.func @chain_backward_from_result(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
// CHECK-NEXT: %0 = stablehlo.multiply %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.exponential %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @chain_backward_from_result(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<8x16xf32>
  %1 = stablehlo.exponential %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// convert is element-wise across element types
// CHECK-LABEL: func.func @convert_keeps_axes(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>}
// CHECK-SAME: -> (tensor<8x16xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.convert %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x", "y"}]>]>} : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// CHECK-NEXT: return %0 : tensor<8x16xbf16>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @convert_keeps_axes(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>}) -> tensor<8x16xbf16> {
  %0 = stablehlo.convert %arg0 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  return %0 : tensor<8x16xbf16>
}

// -----

// A pad that shifts dim 1 (low -1, high 1) keeps its size, so that dim is a pass-through factor
// and the closed constraint's "X" reaches the pad's result at op priority 2 before the reduce
// brings "Y" back from the func result (fuzzer seed 8484 #21, shrunk; checked against
// sdy-propagation-pipeline: as a permutation factor, "Y" won and the pinned layout moved
// 1,088 B vs Shardy's 908 B).
// CHECK-LABEL: func.func @shifted_pad(
// CHECK: stablehlo.pad %arg0, %cst, low = [0, -1], high = [0, 1], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"X"}]>]>}
// CHECK: stablehlo.reduce{{.*}}sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y"}]>]>
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @shifted_pad(%arg0: tensor<16x4xf32>) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}]>}) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"X"}]> : tensor<16x4xf32>
  %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %1 = stablehlo.pad %arg0, %cst, low = [0, -1], high = [0, 1], interior = [0, 0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16x4xf32>
  %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
