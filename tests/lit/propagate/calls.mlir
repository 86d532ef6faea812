// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: shardc propagate --split-input-file --pin %s | filecheck %s --check-prefix=PIN

// Each call site propagates through its own copy of the callee (docs/propagation.md §7.6). Shardy
// then keeps one callee per distinct layout (@f, @f_0); so does shardc's export: the input's funcs
// keep their ops and the first call site's layout, a copy stays only where its layout differs.

// CHECK-LABEL: func.func @g32_call_sites(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK: call @g32_call_sites_f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// The second call site does not receive "x" from the first one, and calls its own copy.
// CHECK: call @g32_call_sites_f_0(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// In pin mode (what XLA compiles) the copies, which XLA reads alike once the op-level shardings
// are gone (no pin tells them apart), are one callee again, as JAX wrote it: XLA's Shardy gives
// each call site its own copy and derives each one's layout as shardc's propagation did.
// PIN-LABEL: func.func @g32_call_sites(
// PIN: call @g32_call_sites_f(%arg0)
// PIN: call @g32_call_sites_f(%arg1)
// PIN-LABEL: func.func private @g32_call_sites_f(
// PIN-SAME: %arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
// PIN-NOT: func.func private @g32_call_sites_f_0(
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

// -----

// A call result is a data-flow edge target (jaxlib 0.10.2 has inlined the call as a named
// computation when it applies constraints): a closed constraint on it is not applied to it;
// its other readers read the constraint, so the result keeps the callee's [{"x"}, {"y"}] and
// the negate takes [{}, {"y"}] (fuzzer seed 5151 #57, seed 202 #0; checked against
// sdy-propagation-pipeline with the func renamed @main, which Shardy needs).
// CHECK-LABEL: func.func @constraint_on_call_result(
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK: call @callee(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CHECK: stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// In pin mode the negate still reads the call result: XLA's import redirects it as well.
// PIN-LABEL: func.func @constraint_on_call_result(
// PIN: %0 = call @callee(%arg0, %arg1)
// PIN-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]>
// PIN-NEXT: stablehlo.negate %0
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @constraint_on_call_result(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @callee(%arg0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %0 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
func.func private @callee(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A manual computation's closed in_sharding on a call result: Shardy puts a constraint to it
// after the call and sends every use of the result through it, so the call keeps the callee's
// [{"x"}, {"y"}] and the add reads [{"x"}, {}] (checked as above; fuzzer seed 4242 #14, where
// not applying it without the redirect disagreed on 55 values).
// CHECK-LABEL: func.func @manual_operand_from_call(
// CHECK: call @callee(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CHECK: stablehlo.add %0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// In pin mode likewise: XLA's import puts that constraint in itself.
// PIN-LABEL: func.func @manual_operand_from_call(
// PIN: %0 = call @callee(%arg0)
// PIN-NEXT: sdy.manual_computation(%0)
// PIN: stablehlo.add %0, %1
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @manual_operand_from_call(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = call @callee(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
    %3 = stablehlo.abs %arg1 : tensor<4x8xf32>
    sdy.return %3 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
func.func private @callee(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Copies are made as Shardy's call-graph flattening meets the calls: a callee's calls before
// its callers', so @inner keeps its name for the call in @outer and @main's own call of @inner
// gets the copy @inner_0 (Shardy's names for these two layouts).
// CHECK-LABEL: func.func @main(
// CHECK: call @outer(%0)
// CHECK-NEXT: call @inner_0(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-LABEL: func.func private @inner(
// CHECK-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-LABEL: func.func private @inner_0(
// CHECK-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-LABEL: func.func private @outer(
// CHECK: call @inner(%2) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  %1 = call @outer(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = call @inner(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
func.func private @inner(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %arg0 : tensor<8x16xf32>
}
func.func private @outer(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  %2 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
  %3 = call @inner(%2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// A call result has its callee's result sharding, unreduced axes included (no edge carries
// those); where its readers were given another, a constraint after the call reshards it, as
// Shardy's pipeline does. A second call of the same callee reads the first one's result as it is.
// The callee's argument is unreduced (its one layout for both call sites); the first call site
// passes a reduced value, so a constraint makes that change explicit, as newer Shardy verifies
// (a call's operand has its callee argument's unreduced axes unless an explicit reshard made it).
// CHECK-LABEL: func.func @unreduced_call_results(
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x16xf32>
// CHECK-NEXT: %1 = call @partial(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}], unreduced={"x"}>]>}
// CHECK-NEXT: %2 = call @partial(%1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}], unreduced={"x"}>]>}
// CHECK-NEXT: %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"y"}]>
// CHECK-NEXT: %4 = stablehlo.negate %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// PIN-LABEL: func.func @unreduced_call_results(
// PIN-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x16xf32>
// PIN-NEXT: %1 = call @partial(%0)
// PIN-NEXT: %2 = call @partial(%1)
// CHECK-LABEL: func.func private @partial(
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>})
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @unreduced_call_results(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = call @partial(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = call @partial(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = stablehlo.negate %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
func.func private @partial(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
