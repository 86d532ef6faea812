// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: not shardc propagate --pin --split-input-file %s 2>&1 | filecheck %s --check-prefix=PIN
// Dynamic dims (`?`): the static dims of a tensor propagate as usual; a dynamic dim is never
// sharded by propagation (every factor on it is blocked), though an annotation written on one
// stays where it is written. (Shardy refuses any op with a dynamic result: a deliberate
// difference, docs/shardy_differences.md.) The pin export, the plan and auto sharding need
// static shapes and say so.

// CHECK-LABEL: func.func @static_dim_propagates(
// CHECK-SAME: %arg0: tensor<?x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<?x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CHECK-NEXT: stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<?x16xf32>
// PIN: error: {{.*}}tensor<?x16xf32> has a dynamic dimension, not supported by the pin export, the communication plan and auto sharding (they need static shapes
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @static_dim_propagates(%arg0: tensor<?x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<?x16xf32> {
  %0 = stablehlo.abs %arg0 : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// A dynamic batch dim of a dot: the weight's "y" reaches the result's static dim; "x" of the
// batch stays off the dynamic dims.
// CHECK-LABEL: func.func @dot_with_dynamic_batch(
// CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK-NEXT: stablehlo.tanh %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<?x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dot_with_dynamic_batch(%arg0: tensor<?x16xf32>, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<?x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> tensor<?x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %1 = stablehlo.tanh %0 : tensor<?x8xf32>
  %2 = stablehlo.add %1, %arg2 : tensor<?x8xf32>
  return %2 : tensor<?x8xf32>
}

// -----

// A dynamic argument returned as it is (Shardy skips it): the rest propagates.
// CHECK-LABEL: func.func @dynamic_result_skipped(
// CHECK-SAME: %arg0: tensor<?x?xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<?x?xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
// CHECK-NEXT: stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dynamic_result_skipped(%arg0: tensor<?x?xf32>, %arg1: tensor<8x16xf32>) -> (tensor<?x?xf32>, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = stablehlo.add %arg1, %arg1 : tensor<8x16xf32>
  return %arg0, %0 : tensor<?x?xf32>, tensor<8x16xf32>
}

// -----

// A dynamic dim is never split: "x" on the static dim of the slice comes back to the
// operand's static dim only.
// CHECK-LABEL: func.func @slice_of_dynamic(
// CHECK-SAME: %arg0: tensor<16x?xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-NEXT: stablehlo.slice %arg0 [0:16, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @slice_of_dynamic(%arg0: tensor<16x?xf32>) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = stablehlo.slice %arg0 [0:16, 0:4] : (tensor<16x?xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
