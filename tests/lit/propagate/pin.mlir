// RUN: shardc propagate --split-input-file %s --pin | filecheck %s

// Export mode pin: exactly what XLA compiles. The module as its author wrote it (boundary
// shardings, constraints, manual computations: what XLA keeps; open dims and priorities as
// written), plus a pin where XLA's own propagation (jaxlib's Shardy, run on it) would choose
// another layout than shardc: a closed constraint after an op result, shardc's closed layout on
// an argument or result of @main or on a manual computation. No op-level shardings (XLA does
// not propagate from them, and its HLO passes can misplace them): shardc's layout of each op is
// in the annotate export. Where shardc's layout is the one Shardy derives, nothing is pinned:
// XLA compiles what jax.jit would.

// The negate, the tanh and the transpose: XLA derives each from the argument as shardc did (its
// open dim stays open, as written).
// CHECK-LABEL: func.func @pin_chain(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> tensor<16x8xf32> {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.tanh %0 : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: return %2 : tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_chain(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> tensor<16x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.tanh %0 : tensor<8x16xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}

// -----

// A dot whose operands both ask for "x" (rows from %arg0, columns from %arg1): XLA settles the
// conflict as shardc did (columns): no pin.
// CHECK-LABEL: func.func @pin_dot(
// CHECK-NEXT: %0 = stablehlo.negate %arg0
// CHECK-NEXT: %1 = stablehlo.dot_general %0, %arg1
// CHECK-NEXT: %2 = stablehlo.tanh %1
// CHECK-NEXT: return %2
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_dot(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %2 = stablehlo.tanh %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// -----

// The same conflict decided by user priorities (rows at p0 win): the priorities stay as
// written, XLA honours them and settles it as shardc did: no pin.
// CHECK-LABEL: func.func @pin_priority(
// CHECK-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}]>}
// CHECK-SAME: {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", ?}p1]>}
// CHECK-NEXT: %0 = stablehlo.dot_general %arg0, %arg1
// CHECK-NOT: sdy.sharding_constraint
// CHECK: return
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_priority(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", ?}p1]>}) -> tensor<f32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.tanh %0 : tensor<8x32xf32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// An op-level sharding in the input is the user's to shardc (as to Shardy), but XLA's import
// drops it: the tanh is pinned to it, and the arguments and the result, which XLA would lay out
// from the argument's "x" otherwise, get shardc's closed layouts.
// CHECK-LABEL: func.func @pin_op_sharding(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK-NEXT: %0 = stablehlo.tanh %arg0
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.dot_general %1, %arg1
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_op_sharding(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// A transpose of a replicated argument that takes "y" from @main's result: XLA derives it too.
// CHECK-LABEL: func.func @pin_replicated(
// CHECK-NEXT: %0 = stablehlo.transpose %arg0, dims = [1, 0]
// CHECK-NEXT: return %0
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_replicated(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// A user constraint stays as written, and is not pinned again.
// CHECK-LABEL: func.func @pin_user_constraint(
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_user_constraint(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A manual computation keeps its open dims as written where XLA fills them as shardc did;
// nothing in its body is pinned.
// CHECK-LABEL: func.func @pin_manual(
// CHECK-NEXT: %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{"x"}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
// CHECK-NEXT: %1 = stablehlo.negate %arg1 : tensor<4x8xf32>
// CHECK-NEXT: sdy.return %1 : tensor<4x8xf32>
// CHECK-NEXT: } : (tensor<16x8xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: return %0 : tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_manual(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{"x"}, {?}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %1 = stablehlo.negate %a : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// A loop XLA derives through as shardc did: no pin, and no op-level sharding on the while
// (XLA rejects one).
// CHECK-LABEL: func.func @pin_while(
// CHECK: %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<8x16xf32>
// CHECK: %1 = stablehlo.negate %iterArg_0 : tensor<8x16xf32>
// CHECK-NOT: sdy.sharding_constraint
// CHECK: return %0#1 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_while(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %arg0) : tensor<i32>, tensor<8x16xf32>
   cond {
    %p = stablehlo.compare LT, %i, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %t = stablehlo.negate %v : tensor<8x16xf32>
    stablehlo.return %i, %t : tensor<i32>, tensor<8x16xf32>
  }
  return %0#1 : tensor<8x16xf32>
}

// -----

// An unused closed constraint on a while result: XLA's dead-code pass deletes it before its
// propagation, and the compiled form's propagation lets it decide nothing (no reader is sent
// through it), so the negate keeps the loop's layout and nothing is pinned.
// CHECK-LABEL: func.func @constraint_on_while_result(
// CHECK: %1 = sdy.sharding_constraint %0#1 <@mesh, [{}, {"y"}]>
// CHECK-NEXT: %2 = stablehlo.negate %0#1
// CHECK-NEXT: return %2
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @constraint_on_while_result(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<i32>) -> tensor<8x8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg0) : tensor<i32>, tensor<8x8xf32>
   cond {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %3 = stablehlo.compare LT, %iterArg, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %3 = stablehlo.tanh %iterArg_0 : tensor<8x8xf32>
    stablehlo.return %iterArg, %3 : tensor<i32>, tensor<8x8xf32>
  }
  %1 = sdy.sharding_constraint %0#1 <@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %0#1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

// A concatenate of a closed constraint and that constraint's input: XLA's import redirects the
// second operand through the constraint too; nothing to pin.
// CHECK-LABEL: func.func @concat_of_constraint_and_its_input(
// CHECK: %1 = sdy.sharding_constraint %0 <@mesh, [{"X"}, {"Y"}]>
// CHECK-NEXT: %2 = stablehlo.concatenate %1, %0, dim = 0
// CHECK-NEXT: return %2
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @concat_of_constraint_and_its_input(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X", "Y"}, {}]>}) -> tensor<32x16xf32> {
  %0 = stablehlo.optimization_barrier %arg0 : tensor<16x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"X"}, {"Y"}]> : tensor<16x16xf32>
  %2 = stablehlo.concatenate %1, %0, dim = 0 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
  return %2 : tensor<32x16xf32>
}
