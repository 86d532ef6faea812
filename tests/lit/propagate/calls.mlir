// RUN: shardc propagate %s | filecheck %s
// XFAIL: *
// Expected to fail: shardc does not clone callees per call site yet, so both call sites share @f and
// the second call site receives "x" too. Shardy's answer is in reference/propagation.md G32.

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @g32_call_sites(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK: call @g32_call_sites_f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK: call @g32_call_sites_f_0(%arg1)
// G32: Shardy clones the callee per call site (@f, @f_0); shardc shares the callee
func.func @g32_call_sites(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @g32_call_sites_f(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = func.call @g32_call_sites_f(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @g32_call_sites_f(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
