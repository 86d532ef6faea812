// RUN: shardc opt --split-input-file --pass-pipeline='basic-propagate{keep_open=true}' %s | filecheck %s

// A propagation pass run alone (`--pass-pipeline`), as Shardy's `-sdy-basic-propagate` runs in
// its own tests: no import step before it, open dims kept. shardc's passes read a call's and a
// manual computation's boundaries directly (its IR has no data-flow-edge ops to import), so they
// propagate through both even alone, where Shardy's pass alone needs its import steps first
// (docs/shardy_differences.md).

// The call's operand gives the callee's argument "a" (Shardy's pass alone leaves it open).
// CHECK-LABEL: func.func @callee_through_a_call(
// CHECK: call @callee(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}]>]>}
// CHECK-LABEL: func.func private @callee(
// CHECK-SAME: %arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}]>}
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @callee_through_a_call(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<4xf32> {
  %0 = call @callee(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @callee(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A manual computation's in_sharding reaches the value it reads.
// CHECK-LABEL: func.func @through_a_manual_boundary(
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", ?}, {?}]>]>}
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @through_a_manual_boundary(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"b"}, {}]>] out_shardings=[<@mesh, [{"b"}, {}]>] manual_axes={} (%arg1: tensor<8x8xf32>) {
    sdy.return %arg1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
