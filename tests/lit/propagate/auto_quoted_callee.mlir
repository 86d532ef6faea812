// RUN: shardc propagate --auto --memory-budget 2100 %s | filecheck %s
// A callee with a quoted name (JAX names a lambda @"<lambda>") is a callee, not an entry of its
// own: auto chooses the weight's layout once, and the callee's argument takes the caller's. (By
// the plan's memory the replicated weight, which moves nothing, is also the smallest layout,
// 1.50 KiB against 1.75 KiB for a split one with its reshards, so it is the answer at any budget
// that a layout meets.)

sdy.mesh @mesh = <["x"=2, "y"=2]>

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-LABEL: func.func @"<lambda>"(
// CHECK-SAME: %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = func.call @"<lambda>"(%arg0, %w) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func @"<lambda>"(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}
