// RUN: shardc propagate --split-input-file %s | filecheck %s

// Golden cases (docs/propagation.md §10): Shardy's sdy-propagation-pipeline, jaxlib 0.10.2;
// the CHECK lines are the exported form of the shardings Shardy chooses.

// G34: the reduced dim's factor is not in the result
// CHECK-LABEL: func.func @g34_reduce(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT: return %0 : tensor<8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g34_reduce(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8xf32> {
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// G35: each result dim carries its input dim's factor
// CHECK-LABEL: func.func @g35_transpose(
// CHECK-SAME: %arg0: tensor<8x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}
// CHECK-SAME: -> (tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}, {"y"}]>]>} : (tensor<8x16x4xf32>) -> tensor<4x8x16xf32>
// CHECK-NEXT: return %0 : tensor<4x8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g35_transpose(%arg0: tensor<8x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}) -> tensor<4x8x16xf32> {
  %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<8x16x4xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

// G36: the concat dim is need-replication but still propagates
// CHECK-LABEL: func.func @g36_concatenate(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: return %0 : tensor<8x32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g36_concatenate(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x16xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// G37: the sliced dim is blocked
// CHECK-LABEL: func.func @g37_dynamic_slice(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}
// CHECK-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %c = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0> : tensor<i32>
// CHECK-NEXT: %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [4, 16] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %0 : tensor<4x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g37_dynamic_slice(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %i: tensor<i32>) -> tensor<4x16xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %arg0, %i, %c, sizes = [4, 16] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// G38: sliced/padded dims are permutation factors and propagate
// CHECK-LABEL: func.func @g38_slice_pad(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, tensor<12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %0 = stablehlo.slice %arg0 [2:6, 0:16] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %1 = stablehlo.pad %arg0, %cst, low = [2, 0], high = [2, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<12x16xf32>
// CHECK-NEXT: return %0, %1 : tensor<4x16xf32>, tensor<12x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g38_slice_pad(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x16xf32>, tensor<12x16xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.slice %arg0 [2:6, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = stablehlo.pad %arg0, %c, low = [2, 0], high = [2, 0], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<12x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<12x16xf32>
}

// -----

// G57: batch and spatial factors propagate; the kernel gets nothing
// CHECK-LABEL: func.func @g57_convolution(
// CHECK-SAME: %arg0: tensor<8x3x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}, {}]>}
// CHECK-SAME: %arg1: tensor<16x3x3x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}
// CHECK-SAME: -> (tensor<8x16x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = {{\[\[}}1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {"y"}, {}]>]>} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
// CHECK-NEXT: return %0 : tensor<8x16x32x32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g57_convolution(%arg0: tensor<8x3x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}, {}]>}, %arg1: tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
  return %0 : tensor<8x16x32x32xf32>
}

// -----

// G58: the collapsed dim is absent from the result; the offset dim passes
// CHECK-LABEL: func.func @g58_gather(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<4x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<4x1xi32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %0 : tensor<4x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g58_gather(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<4x1xi32>) -> tensor<4x16xf32> {
  %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<8x16xf32>, tensor<4x1xi32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// G60: a custom sdy.sharding_rule is used and kept; an unknown custom_call blocks
// CHECK-LABEL: func.func @g60_custom_rule(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.custom_call @my_transpose(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=8, j=16}, custom>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: %1 = stablehlo.custom_call @unknown_op(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: return %0, %1 : tensor<16x8xf32>, tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g60_custom_rule(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16x8xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.custom_call @my_transpose(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=8, j=16}, custom>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = stablehlo.custom_call @unknown_op(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<16x8xf32>, tensor<8x16xf32>
}

// -----

// G62: a rank-2 sort dim propagates; a rank-1 sort is blocked; the comparator's ops get no
// sharding (not data flow: Shardy writes none there)
// CHECK-LABEL: func.func @g62_sort(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
// CHECK-NEXT: %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
// CHECK-NEXT: %2 = stablehlo.compare LT, %arg2, %arg3, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT: stablehlo.return %2 : tensor<i1>
// CHECK-NEXT: }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %1 = "stablehlo.sort"(%arg1) <{dimension = 0 : i64, is_stable = true}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
// CHECK-NEXT: %2 = stablehlo.compare LT, %arg2, %arg3, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT: stablehlo.return %2 : tensor<i1>
// CHECK-NEXT: }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<16xf32>) -> tensor<16xf32>
// CHECK-NEXT: return %0, %1 : tensor<8x16xf32>, tensor<16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g62_sort(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8x16xf32>, tensor<16xf32>) {
  %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = "stablehlo.sort"(%arg1) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<16xf32>
}
