// RUN: shardc propagate --split-input-file %s --pin | filecheck %s

// Export mode pin: XLA keeps exactly shardc's layout.

// pin: a closed constraint after every op result XLA could lay out otherwise. The negate, the
// tanh and the transpose each agree with their neighbours on every factor (the transpose moves
// "x" with its dim), so XLA derives each from the argument: nothing pinned
// CHECK-LABEL: func.func @pin_chain(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.tanh %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.transpose %1, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: return %2 : tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_chain(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> tensor<16x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.tanh %0 : tensor<8x16xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}

// -----

// pin: a dot whose operands both ask for "x" (rows from %arg0, columns from %arg1): shardc's
// propagation settled the conflict (columns win), XLA could settle it otherwise, so the dot's
// result and the negate (the dot's operand, which its reader reshards) are pinned; the tanh
// agrees with the dot's pinned layout and @main's result
// CHECK-LABEL: func.func @pin_dot(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}
// CHECK-SAME: -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"x"}]> : tensor<8x32xf32>
// CHECK-NEXT: %4 = stablehlo.tanh %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<8x32xf32>
// CHECK-NEXT: return %4 : tensor<8x32xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_dot(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %2 = stablehlo.tanh %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// -----

// pin: a value whose producer reshards it is pinned: the transpose of the replicated argument
// takes "y" from @main's result
// CHECK-LABEL: func.func @pin_replicated(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {}]> : tensor<16x8xf32>
// CHECK-NEXT: return %1 : tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_replicated(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// pin: a user constraint is not pinned again
// CHECK-LABEL: func.func @pin_user_constraint(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pin_user_constraint(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// pin: neither the body ops of a manual computation nor its result are pinned (its closed
// out_sharding is the result's layout, and XLA keeps it)
// CHECK-LABEL: func.func @pin_manual(
// CHECK-SAME: %arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
// CHECK-NEXT: %1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<4x8xf32>
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

// pin: ops in a while body that read the loop's arguments (whose layouts XLA derives through
// the loop) and the while results are pinned; no op-level sharding on while; the constant
// (each device makes it in any layout) is not
// CHECK-LABEL: func.func @pin_while(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %c = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0> : tensor<i32>
// CHECK-NEXT: %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<8x16xf32>
// CHECK-NEXT: cond {
// CHECK-NEXT: %2 = stablehlo.compare LT, %iterArg, %c {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT: %3 = sdy.sharding_constraint %2 <@mesh, []> : tensor<i1>
// CHECK-NEXT: stablehlo.return %3 : tensor<i1>
// CHECK-NEXT: } do {
// CHECK-NEXT: %2 = stablehlo.negate %iterArg_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %3 = sdy.sharding_constraint %2 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: stablehlo.return %iterArg, %3 : tensor<i32>, tensor<8x16xf32>
// CHECK-NEXT: }
// The while result is pinned to its propagated layout (it carries no op-level sharding).
// CHECK-NEXT: %1 = sdy.sharding_constraint %0#1 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
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

// The while result's other readers go through the closed constraint, right after the loop (as
// in Shardy's output, where they read the constraint): the result is pinned to the loop's
// layout, the user's constraint follows the pin and the negate reads it (one value for XLA to
// reshard, not a copy of the constraint per reader).
// CHECK-LABEL: func.func @constraint_on_while_result(
// CHECK: %1 = sdy.sharding_constraint %0#1 <@mesh, [{"x", "y"}, {}]>
// CHECK-NEXT: %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"y"}]>
// CHECK-NEXT: %3 = stablehlo.negate %2
// CHECK-NOT: sdy.sharding_constraint %1
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

// A concatenate of a closed constraint and that constraint's input, a barrier result (a
// data-flow edge target): as in Shardy's output, the constraint follows the barrier's pin and
// both operands read it (XLA reshards each HLO value apart: two values of one layout cost two
// identical all-to-alls, fuzzer seed 3535 #57).
// CHECK-LABEL: func.func @concat_of_constraint_and_its_input(
// CHECK: %1 = sdy.sharding_constraint %0 <@mesh, [{"X", "Y"}, {}]>
// CHECK-NEXT: %2 = sdy.sharding_constraint %1 <@mesh, [{"X"}, {"Y"}]>
// CHECK-NEXT: %3 = stablehlo.concatenate %2, %2, dim = 0
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @concat_of_constraint_and_its_input(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X", "Y"}, {}]>}) -> tensor<32x16xf32> {
  %0 = stablehlo.optimization_barrier %arg0 : tensor<16x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"X"}, {"Y"}]> : tensor<16x16xf32>
  %2 = stablehlo.concatenate %1, %0, dim = 0 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
  return %2 : tensor<32x16xf32>
}
