// RUN: shardc plan %s | filecheck %s
// RUN: shardc plan --as-propagated %s | filecheck --check-prefix=PROPAGATED %s
// The plan is of the program that runs: where XLA's own Shardy, run on the compiled form as
// XLA's import makes it (through HLO), lays a value out otherwise than shardc's propagation
// (and the compiled form leaves it to XLA), the plan has XLA's layout there, and the cause
// says so: the layout shardc's propagation gives, and the constraint that would pin it.

sdy.mesh @mesh = <["X"=2, "Y"=2, "Z"=2]>

// %0 broadcasts %arg0 ([{"Z"}, {"Y"}]) to rank 3; %arg1 wants [{"Z"}, {}, {"X"}] of %1. shardc's
// propagation gives %0 [{}, {"Z"}, {"X"}] (from %arg1, through %1); XLA's Shardy, on the module
// through HLO, keeps %0 as %arg0 is, [{}, {"Z"}, {"Y"}]. XLA's partitioned HLO of `shardc
// propagate --pin` of this module has a collective-permute {X, Y} of 32 B and an all-gather {Z}
// of 64 B at %1 (96 B, what is planned here; `shardc plan --check` compares them).
// The fix, re-planned as the program that runs (and compiled: 0 B), gives %arg1 %0's layout.
// CHECK-LABEL: collective-permute {X, Y, Z} 32 B: %0 at xla_layout.mlir:{{[0-9]+}} of stablehlo.broadcast_in_dim in @main
// CHECK-NEXT: cause: %0 at xla_layout.mlir:{{[0-9]+}} is [{}, {"Z"}, {"Y"}] (as XLA's own propagation lays it out; shardc's propagation gives [{}, {"Z"}, {"X"}], which a sharding constraint on %0 at xla_layout.mlir:{{[0-9]+}} would pin), stablehlo.broadcast_in_dim needs it as [{}, {}, {"X"}] (following %1 at xla_layout.mlir:{{[0-9]+}} dim 0 {"Z"} <- %arg1)
// CHECK-NEXT: fix: annotate argument %arg1 as [{}, {"Z"}, {"Y"}]: the program then moves 0 B instead of 96 B (96 B less)
// CHECK: all-gather {Z} 64 B: %0 at xla_layout.mlir:{{[0-9]+}} of stablehlo.broadcast_in_dim in @main
// CHECK: total: 96 B per device in 2 collectives
// The propagated layout has %0 as shardc's propagation gives it: the reshard is of %0's
// result, and its cause traces each side to its annotation.
// PROPAGATED-LABEL: collective-permute {X, Y, Z} 32 B: %0 at xla_layout.mlir:{{[0-9]+}} of stablehlo.broadcast_in_dim in @main
// PROPAGATED-NEXT: cause: stablehlo.broadcast_in_dim computes %0 at xla_layout.mlir:{{[0-9]+}} as [{}, {"Z"}, {"Y"}] (following %arg0 dim 1 {"Y"} (annotated)), it is [{}, {"Z"}, {"X"}] <- %arg1
// PROPAGATED-NOT: XLA's own
func.func @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Z"}, {"Y"}]>}, %arg1: tensor<8x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Z"}, {}, {"X"}]>}) -> tensor<8x4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<1x4x8xf32>) -> tensor<8x4x8xf32>
  %2 = stablehlo.add %1, %arg1 : tensor<8x4x8xf32>
  return %2 : tensor<8x4x8xf32>
}
