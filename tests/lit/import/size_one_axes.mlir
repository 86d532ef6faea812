// RUN: shardc opt --split-input-file --pass-pipeline=remove-size-one-axes %s | filecheck %s
// `remove-size-one-axes`: an axis of size 1 leaves every sharding that names it (func arguments
// and results, op results, constraints, manual computations); a dim left without axes keeps its
// open/closed state.

// CHECK-LABEL: module
// CHECK: func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}]>})
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {}]>]>}
// CHECK: sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]>
sdy.mesh @mesh = <["u"=1, "x"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"u", "x"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"u", ?}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"u"}]>]>} : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"u"}, {"x"}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// No size-1 axis: nothing changes.
// CHECK-LABEL: module
// CHECK: %arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
