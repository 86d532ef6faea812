// RUN: shardc propagate --split-input-file %s | filecheck %s
// Propagation differences from Shardy found by the differential fuzzer, each
// reduced to its smallest case; the CHECK lines are what jaxlib 0.10.2's sdy-propagation-pipeline
// outputs for the same input.

// A closed manual_computation in_sharding is a constraint on its operand (Shardy's
// apply-sharding-constraints applies it): the negate takes [{"X"}, {}] as is instead of
// merging "Y" from its own operand.
// CHECK-LABEL: func.func @manual_closed_in_sharding(
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"X"}, {}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @manual_closed_in_sharding(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"X"}, {}]>] out_shardings=[<@mesh, [{"X"}, {}]>] manual_axes={"X", "Y"} (%a: tensor<2x8xf32>) {
    %2 = stablehlo.abs %a : tensor<2x8xf32>
    sdy.return %2 : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

// A call's operand that gains an axis late (here "Y" at op-priority level 1, from the add after
// the call) does not wake the edge into the callee: Shardy's inlined named computation runs its
// argument edge only in each level's first sweep, so the callee stays replicated and the call
// operand is resharded.
// CHECK-LABEL: func.func @call_operand_late(
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"Y"}]>]>}
// CHECK: func.func private @f(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK-NEXT: stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @call_operand_late(%arg0: tensor<4x8xf32>, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}]>}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<4x8xf32>
  %1 = func.call @f(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func private @f(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A data-flow edge (here a call's argument edge) is never multi-use: Shardy's `sdy.data_flow_edge`
// is the one use of its owner, so it runs at op-priority level 0 even though %arg0 has two uses.
// The callee's add then pulls "Y","X" onto dim 0 of both arguments before the transpose (whose
// operand has two uses) can run, and the transpose result takes dim 0.
// CHECK-LABEL: func.func @edge_single_use_call(
// CHECK: %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y", "X"}, {}]>]>}
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @edge_single_use_call(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y", "X"}, {}]>}) -> tensor<16x16xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = func.call @f(%0, %arg0) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
func.func private @f(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

// The same for an optimization_barrier's edge.
// CHECK-LABEL: func.func @edge_single_use_barrier(
// CHECK: %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y", "X"}, {}]>]>}
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @edge_single_use_barrier(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y", "X"}, {}]>}) -> tensor<16x16xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = stablehlo.optimization_barrier %arg0 : tensor<16x16xf32>
  %2 = stablehlo.add %0, %1 : tensor<16x16xf32>
  return %2 : tensor<16x16xf32>
}

// -----

// Order of a sweep: a while's edge runs after its body (where Shardy's sdy.data_flow_edge is),
// the worklist is a stack (MLIR's greedy driver), and the edge into a call's callee is not woken
// by its operand. "Y" reaches the loop carry only at op-priority level 4 (broadcast forward),
// after the body's call has run: the callee stays replicated, as in Shardy.
// CHECK-LABEL: func.func @while_call_late(
// CHECK: stablehlo.while
// CHECK: func.func private @f(%arg0: tensor<4x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @while_call_late(%arg9: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {}]>}, %arg1: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %arg0 = stablehlo.broadcast_in_dim %arg9, dims = [1, 2] : (tensor<4x4xf32>) -> tensor<4x4x4xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%iterArg = %arg0, %i = %c, %acc = %arg1) : tensor<4x4x4xf32>, tensor<i32>, tensor<4x4xf32>
  cond {
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %c4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = func.call @f(%iterArg, %i) : (tensor<4x4x4xf32>, tensor<i32>) -> tensor<4x4xf32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %iterArg, %2, %1 : tensor<4x4x4xf32>, tensor<i32>, tensor<4x4xf32>
  }
  return %0#2 : tensor<4x4xf32>
}
func.func private @f(%arg0: tensor<4x4x4xf32>, %arg1: tensor<i32>) -> tensor<4x4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c, sizes = [1, 4, 4] : (tensor<4x4x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x4xf32>
  %1 = stablehlo.reshape %0 : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// A factor's source tensor is weighed by the product of the sizes of the factors its dims map,
// as Shardy's aggressive propagation weighs it, not by its element count: the concatenate's
// operands carry the result's concat-dim factor (8), so all three tensors weigh 16*8*4 and the
// tie goes to the lower tensor index, %arg1. %arg0 takes %arg1's layout (X on dim 2, which dim
// 0's X from the result then loses), not the result's (which, by element counts, was the
// heavier source). The concatenate is then computed at the common axes of operands and result.
// CHECK-LABEL: func.func @concat_open_operand(
// CHECK-SAME: %arg0: tensor<16x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"Y"}, {"X"}]>}
// CHECK: stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y"}, {}, {"X"}]>]>}
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @concat_open_operand(%arg0: tensor<16x4x4xf32>, %arg1: tensor<16x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"Y"}, {"X"}]>}) -> (tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}, {}]>}) {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<16x4x4xf32>, tensor<16x4x4xf32>) -> tensor<16x8x4xf32>
  return %0 : tensor<16x8x4xf32>
}

// -----

// The same with the open operand a loop's result: the loop takes %arg1's layout, and the
// concatenate's common axes read the loop result's layout (which Shardy's output keeps on the
// while, and shardc's export keeps aside: XLA takes no sharding on a while), not a replicated
// operand (which gave [{"X", "Y"}, {}, {}]).
// CHECK-LABEL: func.func @concat_of_loop_result(
// CHECK: stablehlo.negate %iterArg_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"Y"}, {"X"}]>]>}
// CHECK: stablehlo.concatenate %0#1, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y"}, {}, {"X"}]>]>}
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @concat_of_loop_result(%arg0: tensor<16x4x4xf32>, %arg1: tensor<16x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"Y"}, {"X"}]>}) -> (tensor<16x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}, {}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c0, %t = %arg0) : tensor<i32>, tensor<16x4x4xf32>
  cond {
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    %n = stablehlo.negate %t : tensor<16x4x4xf32>
    stablehlo.return %j, %n : tensor<i32>, tensor<16x4x4xf32>
  }
  %0 = stablehlo.concatenate %w#1, %arg1, dim = 1 : (tensor<16x4x4xf32>, tensor<16x4x4xf32>) -> tensor<16x8x4xf32>
  return %0 : tensor<16x8x4xf32>
}
