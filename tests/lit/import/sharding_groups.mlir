// RUN: shardc opt --split-input-file --pass-pipeline=import-sharding-groups %s | filecheck %s
// RUN: shardc opt --split-input-file --pass-pipeline=import-sharding-groups %s 2>&1 >/dev/null | filecheck %s --check-prefix=NOTE
// `import-sharding-groups`: the members of a sharding group (all groups with one id, merged
// where they share a value) start from the one sharding a member has; members that disagree are
// reported and each gets an open constraint after it.

// CHECK-LABEL: module
// CHECK: %0 = stablehlo.exponential %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @group(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  sdy.sharding_group %arg0 group_id=0 : tensor<8x16xf32>
  %0 = stablehlo.constant dense<0.0> : tensor<8x16xf32>
  %1 = stablehlo.exponential %0 : tensor<8x16xf32>
  sdy.sharding_group %1 group_id=0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Members that disagree: each is followed by a fully open constraint that takes its place.
// CHECK-LABEL: module
// CHECK: func.func @disagree(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK-NEXT: %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}, {?}]>
// CHECK-NEXT: sdy.sharding_group %0 group_id=3
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK-NEXT: %2 = sdy.sharding_constraint %1 <@mesh, [{?}, {?}]>
// CHECK-NEXT: sdy.sharding_group %2 group_id=3
// CHECK-NEXT: return %2
// NOTE: note: sharding group 3: its members' shardings do not match (<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>): each member is followed by an open sharding constraint
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @disagree(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  sdy.sharding_group %arg0 group_id=3 : tensor<8x16xf32>
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
  sdy.sharding_group %0 group_id=3 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
