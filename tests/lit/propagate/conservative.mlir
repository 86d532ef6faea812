// RUN: shardc propagate --split-input-file %s | filecheck %s --check-prefix=DEFAULT
// RUN: shardc propagate --conservative --split-input-file %s | filecheck %s --check-prefix=CONS
// `--conservative` (Shardy's conservative-propagation): the rules of `shardc rules
// --conservative` (a slice's sliced dim is blocked; the other dim is pass-through and still
// propagates), and no axis is split into sub-axes on the way through an op.

// DEFAULT-LABEL: func.func @slice(
// DEFAULT-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
// DEFAULT: stablehlo.slice %arg0 [0:4, 0:16] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CONS-LABEL: func.func @slice(
// CONS-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CONS: stablehlo.slice %arg0 [0:4, 0:16] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @slice(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<4x16xf32> {
  %0 = stablehlo.slice %arg0 [0:4, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Splitting 8 into 2x4 on "x"=4 needs the sub-axes "x":(1)2 and "x":(2)2: not conservative.
// DEFAULT-LABEL: func.func @reshape_split(
// DEFAULT: stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"x":(2)2}]>]>}
// CONS-LABEL: func.func @reshape_split(
// CONS: stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reshape_split(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// The major factor (4) takes "a" whole; the rest of it would be a sub-axis of "b": the
// conservative propagation stops after "a".
// DEFAULT-LABEL: func.func @reshape_split_two_axes(
// DEFAULT: stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "b":(1)2}, {"b":(2)4}]>]>}
// CONS-LABEL: func.func @reshape_split_two_axes(
// CONS: stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>}
sdy.mesh @mesh = <["a"=2, "b"=8]>
func.func @reshape_split_two_axes(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}]>}) -> tensor<4x8xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A merge moves whole axes: the same either way.
// DEFAULT-LABEL: func.func @reshape_merge(
// DEFAULT: stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}]>]>}
// CONS-LABEL: func.func @reshape_merge(
// CONS: stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reshape_merge(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<32xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
