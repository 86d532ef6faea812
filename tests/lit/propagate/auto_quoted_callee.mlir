// RUN: shardc propagate --auto --memory-budget 2100 %s | filecheck %s
// A callee with a quoted name (JAX names a lambda @"<lambda>") is a callee, not an entry of its
// own: auto chooses the weight's layout once, and the callee's argument takes the caller's. (The
// budget keeps the weight from staying replicated, which moves nothing and would fit otherwise;
// of the split layouts equal in auto's bytes, the LP relaxation's optimum takes [{"x"}, {}], which
// the plan finds moves less than [{}, {"x", "y"}]: 768 B against 1.00 KiB, both at 1.75 KiB.)

sdy.mesh @mesh = <["x"=2, "y"=2]>

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-LABEL: func.func @"<lambda>"(
// CHECK-SAME: %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = func.call @"<lambda>"(%arg0, %w) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func @"<lambda>"(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}
