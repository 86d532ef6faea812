// RUN: shardc propagate --split-input-file %s 2>&1 | filecheck %s
// Sharding groups whose members start from shardings that do not match: as in Shardy, each
// member gets a fully open sdy.sharding_constraint right after it, which takes its place in the
// group and in every use, so the group converges on one sharding every member can be
// resharded to (checked against jaxlib 0.10.2's sdy-propagation-pipeline). A member left open
// and replicated takes the group's sharding, its constraint included.

// CHECK: note: sharding group 7: its members' shardings do not match (<@mesh, [{"x"}, {?}]>, <@mesh, [{}, {"y", ?}]>): each member is followed by an open sharding constraint
// CHECK-LABEL: func.func @constraints_disagree(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {"y"}]>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]>
// CHECK-NEXT: sdy.sharding_group %1 group_id=7
// CHECK-NEXT: %2 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}]>
// CHECK-NEXT: %3 = sdy.sharding_constraint %2 <@mesh, [{"x"}, {"y"}]>
// CHECK-NEXT: sdy.sharding_group %3 group_id=7
// CHECK-NEXT: return %1, %3
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @constraints_disagree(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {?}]> : tensor<8x16xf32>
  sdy.sharding_group %0 group_id=7 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y", ?}]> : tensor<8x16xf32>
  sdy.sharding_group %1 group_id=7 : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @open_member_takes_group_sharding(
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]>
// CHECK-NEXT: sdy.sharding_group %0 group_id=1
// CHECK-NEXT: %1 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @open_member_takes_group_sharding(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}, {?}]> : tensor<8x16xf32>
  sdy.sharding_group %0 group_id=1 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {?}]> : tensor<8x16xf32>
  sdy.sharding_group %1 group_id=1 : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A closed replicated dim is a decided sharding: it disagrees with "x".
// CHECK-LABEL: func.func @closed_replicated_dim_disagrees(
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {}]>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]>
// CHECK-NEXT: sdy.sharding_group %1 group_id=2
// CHECK-NEXT: %2 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]>
// CHECK-NEXT: %3 = sdy.sharding_constraint %2 <@mesh, [{"x"}, {}]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @closed_replicated_dim_disagrees(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {?}]> : tensor<8x16xf32>
  sdy.sharding_group %0 group_id=2 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {?}]> : tensor<8x16xf32>
  sdy.sharding_group %1 group_id=2 : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// The constraint's sharding reaches the loop through the group: the loop carries "x".
// CHECK-LABEL: func.func @group_on_loop_result(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK: stablehlo.tanh %iterArg {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @group_on_loop_result(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %i = %c0) : tensor<8x16xf32>, tensor<i32>
    cond {
    %p = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %c1 : tensor<i32>
    %y = stablehlo.tanh %iterArg : tensor<8x16xf32>
    stablehlo.return %y, %n : tensor<8x16xf32>, tensor<i32>
  }
  sdy.sharding_group %0#0 group_id=4 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %arg1 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  sdy.sharding_group %1 group_id=4 : tensor<8x16xf32>
  return %0#0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Body arguments of a manual computation: their constraints come in argument order (after
// Shardy's data-flow edges), so the first argument's "x" reaches the group first.
// CHECK-LABEL: func.func @manual_body_args_disagree(
// CHECK: %1 = sdy.sharding_constraint %arg2 <@mesh, [{"x"}, {}]>
// CHECK-NEXT: %2 = sdy.sharding_constraint %arg3 <@mesh, [{"x"}, {}]>
// CHECK-NEXT: sdy.sharding_group %1 group_id=0
// CHECK-NEXT: sdy.sharding_group %2 group_id=0
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @manual_body_args_disagree(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"y"}, {}]>] manual_axes={} (%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
    sdy.sharding_group %a group_id=0 : tensor<8x16xf32>
    sdy.sharding_group %b group_id=0 : tensor<8x16xf32>
    %s = stablehlo.add %a, %b : tensor<8x16xf32>
    sdy.return %s : tensor<8x16xf32>
  } : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
