// RUN: shardc propagate --split-input-file %s | filecheck %s
// Golden cases (docs/propagation.md §10): Shardy's sdy-propagation-pipeline, jaxlib 0.10.2;
// the CHECK lines are the exported form of the shardings Shardy chooses.
// Constraints stay sdy.sharding_constraint (Shardy's own output has sdy.reshard, which XLA rejects).

sdy.mesh @mesh = <["x"=4, "y"=2]>

// G17: a closed constraint is copied onto its input and flows back to the argument
// CHECK-LABEL: func.func @g17_closed(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %2 : tensor<8x16xf32>
func.func @g17_closed(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  %2 = stablehlo.tanh %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// G18: an open constraint is an element-wise op that both directions extend
// CHECK-LABEL: func.func @g18_open(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %2 : tensor<8x16xf32>
func.func @g18_open(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x", ?}, {?}]> : tensor<8x16xf32>
  %2 = stablehlo.tanh %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// G19: two disagreeing constraints are not applied but both reach %0
// CHECK-LABEL: func.func @g19_two_different(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: %3 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %4 = stablehlo.exponential %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %3, %4 : tensor<8x16xf32>, tensor<8x16xf32>
func.func @g19_two_different(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  %2 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
  %3 = stablehlo.tanh %1 : tensor<8x16xf32>
  %4 = stablehlo.exponential %2 : tensor<8x16xf32>
  return %3, %4 : tensor<8x16xf32>, tensor<8x16xf32>
}

// G42: a 6-row "x" reaches the I/O open and is cut away on export
// CHECK-LABEL: func.func @g42_non_divisible(
// CHECK-SAME: %arg0: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<6x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<6x16xf32>
// CHECK-NEXT: %2 = stablehlo.exponential %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<6x16xf32>
// CHECK-NEXT: return %2 : tensor<6x16xf32>
func.func @g42_non_divisible(%arg0: tensor<6x16xf32>) -> tensor<6x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<6x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<6x16xf32>
  %2 = stablehlo.exponential %1 : tensor<6x16xf32>
  return %2 : tensor<6x16xf32>
}

// -----

// shardc's own constraint/barrier/group/priority cases (regression goldens).

sdy.mesh @mesh = <["x"=4, "y"=2]>

// a closed constraint's sharding flows forward
// CHECK-LABEL: func.func @constraint_forward(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
func.func @constraint_forward(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// an open constraint dim grows from the argument
// CHECK-LABEL: func.func @constraint_open_grows(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
func.func @constraint_open_grows(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}, {?}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// a NONE barrier blocks both ways
// CHECK-LABEL: func.func @barrier_none(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = sdy.propagation_barrier %arg0 allowed_direction=NONE {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
func.func @barrier_none(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = sdy.propagation_barrier %arg0 allowed_direction=NONE : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// a FORWARD barrier lets the argument through
// CHECK-LABEL: func.func @barrier_forward_passes(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = sdy.propagation_barrier %arg0 allowed_direction=FORWARD {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
func.func @barrier_forward_passes(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = sdy.propagation_barrier %arg0 allowed_direction=FORWARD : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// a sharding group gives an unannotated argument its partner's sharding
// CHECK-LABEL: func.func @group_two_args(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
// CHECK-NEXT: sdy.sharding_group %arg0 group_id=7 : tensor<8x16xf32>
// CHECK-NEXT: sdy.sharding_group %arg1 group_id=7 : tensor<8x16xf32>
// CHECK-NEXT: %0 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
func.func @group_two_args(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
  sdy.sharding_group %arg0 group_id=7 : tensor<8x16xf32>
  sdy.sharding_group %arg1 group_id=7 : tensor<8x16xf32>
  %0 = stablehlo.negate %arg1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// a p1 result loses against a p0 argument
// CHECK-LABEL: func.func @priority_result_p1(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
func.func @priority_result_p1(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x"}p1]>}) {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A closed constraint on a while result (a data-flow edge target) is not applied to the result:
// Shardy moves it right after the loop and sends the result's other uses through it, so the
// loop keeps the layout it carries in ({"x","y"} on dim 0, the tanh inside) and the negate
// reads the constraint's [{}, {"y"}] (checked against sdy-propagation-pipeline; shardc keeps
// the IR's uses and reads them through the constraint during propagation).
// CHECK-LABEL: func.func @constraint_on_while_result(
// CHECK-SAME: -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CHECK: stablehlo.tanh %iterArg_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>]>}
// CHECK: sdy.sharding_constraint %0#1 <@mesh, [{}, {"y"}]>
// CHECK-NEXT: stablehlo.negate %0#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
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
