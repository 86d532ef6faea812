// RUN: shardc propagate --split-input-file %s --no-op-priorities --keep-open | filecheck %s

// G64/G65 with sdy-aggressive-propagate{propagation-strategy=aggressive} (raw result).

// G64: aggressive moves "x" to rhs dim 1
// CHECK-LABEL: func.func @g64_dot(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", ?}]>}
// CHECK-SAME: -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", ?}]>}) {
// CHECK-NEXT: %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"x", ?}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: return %0 : tensor<8x32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g64_dot(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"x", ?}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// G65: aggressive gives "x","y" to the result though %arg1 cannot take "y"
// CHECK-LABEL: func.func @g65_elementwise(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}], replicated={"y"}>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", ?}, {?}]>}) {
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y", ?}, {?}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g65_elementwise(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}], replicated={"y"}>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
