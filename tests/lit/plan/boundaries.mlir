// RUN: shardc plan --split-input-file %s | filecheck %s
// RUN: shardc plan --as-propagated --split-input-file %s | filecheck --check-prefix=PROPAGATED %s
// RUN: awk '!/^sdy.mesh/ || !seen[$0]++' %s | shardc plan - | filecheck --check-prefix=TOTAL %s
// The plan at boundaries, where a value must take another holder's sharding: constraints, call
// arguments and results, loop carries (times the loop's trip count), case branch results,
// shard_map in_specs, func results; and collectives a shard_map body writes itself.
// Each case is planned on its own (its what-if totals are its own); the TOTAL run plans all
// cases as one module (the repeated mesh declarations dropped) for the program's totals.

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A closed constraint moving x from dim 0 to dim 1: one all-to-all of the 4x16 f32 block.
// CHECK-LABEL: all-to-all {x} 256 B: %arg0 of sdy.sharding_constraint in @constraint
// CHECK-NEXT: cause: constraint: %arg0 is [{"x"}, {}] (annotated), %0 at boundaries.mlir:{{[0-9]+}} is [{}, {"x"}]
func.func @constraint(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"x"}]> : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A callee whose argument is replicated, called with an x-sharded value: XLA inlines the call,
// so nothing moves there; the callee's negate, replicated as its result is, gathers the value.
// CHECK-LABEL: all-gather {x} 1.0 KiB: %arg0 of stablehlo.negate in @callee
// CHECK-NEXT: cause: %arg0 is [{"x"}, {}], stablehlo.negate needs it as [{}, {}]
func.func @caller(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = func.call @callee(%arg0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
func.func private @callee(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.negate %arg0 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A callee whose result is declared on dim 1 while the call's own sharding (and the caller's
// result) has x on dim 0: XLA inlines the call, so the value keeps the callee's layout up to
// the reshard to the call's sharding that the compiled form writes after the call (a
// constraint at the call's location: `shardc propagate --pin`), where it is resharded once
// (one all-to-all of the 4x16 f32 block); the caller's return then needs nothing.
// The cause names that boundary (the callee's result against the call's own sharding), not
// the constraint shardc adds (no annotation of the user's: no fix on it) nor the func result
// (which agrees with the call's sharding: declaring it otherwise would not remove the
// reshard). `--as-propagated` plans shardc's propagated IR, which has no such constraint:
// the reshard is at the return there.
// CHECK-LABEL: all-to-all {x} 256 B: %0 at boundaries.mlir:{{[0-9]+}} of sdy.sharding_constraint in @caller_result
// CHECK-NEXT: cause: call result of @callee_result: %0 at boundaries.mlir:{{[0-9]+}} is [{}, {"x"}], the call's own sharding is [{"x"}, {}]
// CHECK-NOT: fix:
// CHECK: -----
// PROPAGATED-LABEL: all-to-all {x} 256 B: %0 at boundaries.mlir:{{[0-9]+}} of func.return in @caller_result
// PROPAGATED-NEXT: cause: func result: %0 at boundaries.mlir:{{[0-9]+}} is [{}, {"x"}], @caller_result result 0 is [{"x"}, {}] (annotated)
func.func @caller_result(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = func.call @callee_result(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
func.func private @callee_result(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A counted loop (0 to 5) whose body moves the carry (one layout for the loop, [{"x"}, {}])
// to another dim and back: both reshards run 5 times (5 x 256 B each). The loop's init and
// result have the carry's layout and need nothing.
// The fix, re-planned: with the first constraint asking for the carry's own layout, both
// reshards in the loop go (2 x 1.2 KiB less).
// CHECK-LABEL: all-to-all {x} 1.2 KiB (x5): %iterArg_0 of sdy.sharding_constraint in @loop
// CHECK-NEXT: cause: constraint: %iterArg_0 is [{"x"}, {}], %2 at boundaries.mlir:{{[0-9]+}} is [{}, {"x"}]
// CHECK-NEXT: fix: annotate constraint %2 at boundaries.mlir:{{[0-9]+}} as [{"x"}, {}]: the program then moves 0 B instead of 2.5 KiB (2.5 KiB less)
// TOTAL: fix: annotate constraint %2 at <stdin>:{{[0-9]+}} as [{"x"}, {}]: the program then moves 3.2 KiB instead of 5.8 KiB (2.5 KiB less)
// CHECK: all-to-all {x} 1.2 KiB (x5): %2 at boundaries.mlir:{{[0-9]+}} of stablehlo.negate in @loop
// CHECK-NOT: in @loop
func.func @loop(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %arg0) : tensor<i32>, tensor<16x16xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x"}, {}]>]>}
  cond {
    %c5 = stablehlo.constant dense<5> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %c5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.add %i, %c1 : tensor<i32>
    %2 = sdy.sharding_constraint %v <@mesh, [{}, {"x"}]> : tensor<16x16xf32>
    %3 = stablehlo.negate %2 : tensor<16x16xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"x"}, {}]> : tensor<16x16xf32>
    stablehlo.return %1, %4 : tensor<i32>, tensor<16x16xf32>
  }
  return %0#1 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A shard_map whose in_specs shard rows on x while the value flows in sharded on y: each x
// block (4 rows) lies in one y block (8 rows), so the cost of the in_specs is a local slice
// and one collective-permute of the 4x16 f32 block. The body's psum over y is the program's
// own collective (4x16 f32 local, 256 B); the result leaves as out_shardings says, as the
// func result wants: nothing more.
// CHECK-LABEL: all-slice {"x":(1)2} 0 B: %arg0 of sdy.manual_computation in @shard_map
// CHECK-NEXT: cause: shard_map in_specs: %arg0 is [{"y"}, {}] (annotated), in_shardings[0] of sdy.manual_computation is [{"x"}, {}]
// CHECK: collective-permute {x} 256 B: %arg0 of sdy.manual_computation in @shard_map
// CHECK: all-reduce {y} 256 B: %1 of stablehlo.all_reduce in @shard_map
// CHECK-NEXT: cause: written in the program
// CHECK-NOT: in @shard_map
func.func @shard_map(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<4x16xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %2 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    sdy.return %1 : tensor<4x16xf32>
  } : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A case whose result is sharded on x while one branch returns its operand on y: that
// branch's result is resharded (x blocks inside y blocks: slice and one permute).
// CHECK-LABEL: all-slice {"x":(1)2} 0 B: %arg1 of stablehlo.case in @branches
// CHECK-NEXT: cause: branch result: %arg1 is [{"y"}, {}] (annotated), %0 at boundaries.mlir:{{[0-9]+}} is [{"x"}, {}]
// CHECK: collective-permute {x} 256 B: %arg1 of stablehlo.case in @branches
// CHECK-NOT: in @branches
func.func @branches(%arg0: tensor<i32>, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg2: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1 : tensor<16x16xf32>
  }, {
    stablehlo.return %arg2 : tensor<16x16xf32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<i32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The func's own result declared replicated while the returned value is sharded on x.
// CHECK-LABEL: all-gather {x} 1.0 KiB: %0 at boundaries.mlir:{{[0-9]+}} of func.return in @func_result
// CHECK-NEXT: cause: func result: %0 at boundaries.mlir:{{[0-9]+}} is [{"x"}, {}], @func_result result 0 is [{}, {}] (annotated)
// CHECK-NEXT: fix: declare @func_result result 0 as [{"x"}, {}]: the program then moves 0 B instead of 1.0 KiB (1.0 KiB less)
// TOTAL: fix: declare @func_result result 0 as [{"x"}, {}]: the program then moves 4.8 KiB instead of 5.8 KiB (1.0 KiB less)

// CHECK: total: 1.0 KiB per device in 1 collectives
// TOTAL: total: 5.8 KiB per device in 11 collectives
func.func @func_result(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
