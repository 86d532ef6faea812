// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: shardc propagate --split-input-file --pin %s | filecheck %s --check-prefix=PIN

// Each call site propagates through its own copy of the callee (reference G32). Shardy then keeps
// the copies as @f and @f_0; shardc writes on the input's own ops, so the callee keeps the
// shardings of its first call site and every call result keeps its own.

// CHECK-LABEL: func.func @g32_call_sites(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK: call @g32_call_sites_f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// The second call site does not receive "x" from the first one.
// CHECK: call @g32_call_sites_f(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// In pin mode (what XLA compiles) every call site keeps its own copy and its own layout.
// PIN-LABEL: func.func @g32_call_sites(
// PIN: call @g32_call_sites_f(%arg0)
// PIN: call @g32_call_sites_f_0(%arg1)
// PIN-LABEL: func.func private @g32_call_sites_f(
// PIN-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// PIN-LABEL: func.func private @g32_call_sites_f_0(
// PIN-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// PIN-NOT: shardc.call_site_copy_of

// No clone is left in the output.
// CHECK-NOT: func.func private @g32_call_sites_f_0
// CHECK-LABEL: func.func private @g32_call_sites_f(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK: stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g32_call_sites(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @g32_call_sites_f(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = func.call @g32_call_sites_f(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @g32_call_sites_f(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @nested_call_sites(
// A callee that calls another function: both levels are copied per site.
// CHECK: call @nested_outer(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK: call @nested_outer(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @nested_call_sites(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @nested_outer(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = func.call @nested_outer(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @nested_outer(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = func.call @nested_inner(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func private @nested_inner(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
