// RUN: shardc opt --split-input-file --pass-pipeline=split-call-sites %s | filecheck %s
// `split-call-sites`: every call site but the first of a callee calls its own private, marked copy,
// so the two call sites propagate independently (docs/propagation.md §7.6); a call result without a
// sharding starts from its callee's result sharding.

// CHECK-LABEL: module
// CHECK: func.func @main(
// CHECK: %0 = call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-NEXT: %1 = call @f_0(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK: func.func private @f(
// CHECK: func.func private @f_0({{.*}} attributes {shardc.call_site_copy_of = "f"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @f(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = func.call @f(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @f(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// One call site: nothing is cloned.
// CHECK-LABEL: module
// CHECK: %0 = call @g(%arg0)
// CHECK-NOT: @g_0
// CHECK: func.func private @g(
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = func.call @g(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func private @g(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %arg0 : tensor<8x16xf32>
}
