// RUN: shardc propagate --split-input-file %s 2>&1 >/dev/null | filecheck --check-prefix=NOTE %s
// RUN: shardc propagate --split-input-file %s 2>/dev/null | filecheck %s
// An op with no sharding rule propagates nothing and is reported by name, one note per op
// kind with its count, never a crash. Shardy has no rule for an unregistered custom_call target
// nor for stablehlo.rng; its pipeline leaves their results replicated as shardc does.
// The notes are per module, so here per case: both custom_calls are in @blocked.

// NOTE: note: no sharding rule for stablehlo.custom_call (2 ops): nothing propagates through it
// NOTE-NEXT: note: no sharding rule for stablehlo.rng (1 op): nothing propagates through it
// NOTE-NOT: note: no sharding rule

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The "x" of %arg0 stops at the custom_calls: their results and what follows stay replicated.
// CHECK-LABEL: func.func @blocked(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.custom_call @unknown_a(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// CHECK-NEXT: %1 = stablehlo.custom_call @unknown_b(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// CHECK-NEXT: %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
func.func @blocked(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.custom_call @unknown_a(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.custom_call @unknown_b(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = stablehlo.negate %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @rng(
// CHECK: stablehlo.rng {{.*}}{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
func.func @rng(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<8x16xf32> {
  %shape = stablehlo.constant dense<[8, 16]> : tensor<2xi64>
  %0 = stablehlo.rng %arg0, %arg1, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
