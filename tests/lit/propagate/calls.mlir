// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: shardc propagate --split-input-file --pin %s | filecheck %s --check-prefix=PIN

// Each call site propagates through its own copy of the callee (reference G32). Shardy then keeps
// one callee per distinct layout (@f, @f_0); so does shardc's export: the input's funcs keep their
// ops and the first call site's layout, a copy stays only where its layout differs.

// CHECK-LABEL: func.func @g32_call_sites(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK: call @g32_call_sites_f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// The second call site does not receive "x" from the first one, and calls its own copy.
// CHECK: call @g32_call_sites_f_0(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// In pin mode (what XLA compiles) every call site keeps its own copy and its own layout.
// PIN-LABEL: func.func @g32_call_sites(
// PIN: call @g32_call_sites_f(%arg0)
// PIN: call @g32_call_sites_f_0(%arg1)
// PIN-LABEL: func.func private @g32_call_sites_f(
// PIN-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// PIN-LABEL: func.func private @g32_call_sites_f_0(
// PIN-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// PIN-NOT: shardc.call_site_copy_of
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g32_call_sites(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @g32_call_sites_f(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = func.call @g32_call_sites_f(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
// The input's callee keeps its ops and its first call site's layout; the copy has the other.
// CHECK-LABEL: func.func private @g32_call_sites_f(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK: stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-LABEL: func.func private @g32_call_sites_f_0(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-NOT: shardc.call_site_copy_of
// CHECK: stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
func.func private @g32_call_sites_f(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @nested_call_sites(
// A callee that calls another function: both levels are copied per site.
// CHECK: call @nested_outer(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK: call @nested_outer_0(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-LABEL: func.func private @nested_outer(
// CHECK: call @nested_inner(%arg0)
// CHECK-LABEL: func.func private @nested_outer_0(
// CHECK: call @nested_inner_0(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
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

// -----

// Call sites with one layout share one callee: the copies of both levels are dropped again.
// A third call site with the first one's layout calls the first callee, not a copy of its own.
// CHECK-LABEL: func.func @same_layouts(
// CHECK: call @same_outer(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK: call @same_outer(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK: call @same_outer_1(%arg2) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK: call @same_outer(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-NOT: func.func private @same_outer_0(
// CHECK-NOT: func.func private @same_inner_0(
// CHECK-LABEL: func.func private @same_outer(
// CHECK: call @same_inner(%arg0)
// CHECK-LABEL: func.func private @same_outer_1(
// CHECK: call @same_inner_1(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK-NOT: func.func private @same_outer_2(
// CHECK-LABEL: func.func private @same_inner(
// CHECK-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-LABEL: func.func private @same_inner_1(
// CHECK-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-NOT: func.func private @same_inner_2(
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @same_layouts(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @same_outer(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = func.call @same_outer(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = func.call @same_outer(%arg2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = func.call @same_outer(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @same_outer(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = func.call @same_inner(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func private @same_inner(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.sine %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
