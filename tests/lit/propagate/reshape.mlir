// RUN: shardc propagate --split-input-file %s | filecheck %s

// Golden cases (docs/propagation.md §10): Shardy's sdy-propagation-pipeline, jaxlib 0.10.2;
// the CHECK lines are the exported form of the shardings Shardy chooses.

// G06: 8 -> 2x4 splits "x" into sub-axes; the open main result loses them on export
// CHECK-LABEL: func.func @g06_split_sub_axes(
// CHECK-SAME: %arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}
// CHECK-SAME: -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2}]>]>} : (tensor<8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2}]>]>} : tensor<2x4xf32>
// CHECK-NEXT: return %1 : tensor<2x4xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g06_split_sub_axes(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.negate %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// G07: both factors fully sharded: merged dim gets {"x", "y"}
// CHECK-LABEL: func.func @g07_merge_full(
// CHECK-SAME: %arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}]>]>} : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT: return %0 : tensor<32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g07_merge_full(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<32xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// G08: the major factor is only partly sharded: only {"y"} survives
// CHECK-LABEL: func.func @g08_merge_partial_major(
// CHECK-SAME: %arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}
// CHECK-SAME: -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : (tensor<8x4xf32>) -> tensor<32xf32>
// CHECK-NEXT: return %0 : tensor<32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g08_merge_partial_major(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<32xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8x4xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// G40: 6x4 -> 24: only gcd(6,4)=2 of "x" fits the non-minor factor
// CHECK-LABEL: func.func @g40_non_divisible_merge(
// CHECK-SAME: %arg0: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {}]>}
// CHECK-SAME: -> (tensor<24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}]>]>} : (tensor<6x4xf32>) -> tensor<24xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}]>]>} : tensor<24xf32>
// CHECK-NEXT: return %1 : tensor<24xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g40_non_divisible_merge(%arg0: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<24xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<6x4xf32>) -> tensor<24xf32>
  %1 = stablehlo.negate %0 : tensor<24xf32>
  return %1 : tensor<24xf32>
}

// -----

// G41: 24 -> 6x4 with {"x","y"}: only "x":(1)2 reaches the result
// CHECK-LABEL: func.func @g41_split_overflow(
// CHECK-SAME: %arg0: tensor<24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}
// CHECK-SAME: -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {}]>]>} : (tensor<24xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {}]>]>} : tensor<6x4xf32>
// CHECK-NEXT: return %1 : tensor<6x4xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g41_split_overflow(%arg0: tensor<24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) -> tensor<6x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<24xf32>) -> tensor<6x4xf32>
  %1 = stablehlo.negate %0 : tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// G43: sub-axes on an open main result are removed on export
// CHECK-LABEL: func.func @g43_sub_axes_on_result(
// CHECK-SAME: %arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}
// CHECK-SAME: -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2}]>]>} : (tensor<8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %0 : tensor<2x4xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g43_sub_axes_on_result(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// G51: 6 -> 2x3: the minor-most factor takes the rest of "x" (padding)
// CHECK-LABEL: func.func @g51_split_minor_padding(
// CHECK-SAME: %arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}
// CHECK-SAME: -> (tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2}]>]>} : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %0 : tensor<2x3xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g51_split_minor_padding(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x3xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// G52: 3x4 [{}, {"x"}] -> 12: nothing can be expressed
// CHECK-LABEL: func.func @g52_merge_minor_only(
// CHECK-SAME: %arg0: tensor<3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}
// CHECK-SAME: -> (tensor<12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<3x4xf32>) -> tensor<12xf32>
// CHECK-NEXT: return %0 : tensor<12xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g52_merge_minor_only(%arg0: tensor<3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<12xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<3x4xf32>) -> tensor<12xf32>
  return %0 : tensor<12xf32>
}

// -----

// G54: 16 -> 2x8: i takes "x":(1)2, j takes "x":(2)2 and "y"
// CHECK-LABEL: func.func @g54_split_two_axes(
// CHECK-SAME: %arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}
// CHECK-SAME: -> (tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>]>} : (tensor<16xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %0 : tensor<2x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g54_split_two_axes(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) -> tensor<2x8xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<16xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// G55: non-divisible "x" on size 2 flows as "x":(1)2
// CHECK-LABEL: func.func @g55_axis_larger_than_factor(
// CHECK-SAME: %arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {}]>}
// CHECK-SAME: -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}]>]>} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT: return %0 : tensor<8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g55_axis_larger_than_factor(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<2x4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// G56: both factors fully sharded: axes concatenate in factor order
// CHECK-LABEL: func.func @g56_merge_two_full(
// CHECK-SAME: %arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}
// CHECK-SAME: -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x"}]>]>} : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT: return %0 : tensor<8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g56_merge_two_full(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<2x4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
