// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: shardc propagate --keep-open --split-input-file %s | filecheck %s --check-prefix=OPEN

// A sharding on a mesh without axes (`<[]>`) takes part in no mesh choice; when axes reach it,
// it is rewritten on the mesh they come from, its closed dims kept closed (as Shardy does). It
// never names an axis its own mesh lacks.

// CHECK-LABEL: func.func @open_result_on_empty_mesh(
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-NEXT: stablehlo.multiply %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CHECK-NEXT: stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// OPEN-LABEL: func.func @open_result_on_empty_mesh(
// OPEN: stablehlo.multiply %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", ?}]>]>}
sdy.mesh @empty = <[]>
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @open_result_on_empty_mesh(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.multiply %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@empty, [{?}, {?}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

// The closed dim 1 of %arg1 stays replicated; its open dim 0 takes "x" on @mesh.
// CHECK-LABEL: func.func @closed_dim_on_empty_mesh(
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// OPEN-LABEL: func.func @closed_dim_on_empty_mesh(
// OPEN-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}]>}
sdy.mesh @empty = <[]>
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @closed_dim_on_empty_mesh(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty, [{?}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Fully closed on the empty mesh: nothing reaches it.
// CHECK-LABEL: func.func @closed_on_empty_mesh(
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty, [{}, {}]>}
// CHECK-NEXT: stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@empty, [{}, {}]>]>}
sdy.mesh @empty = <[]>
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @closed_on_empty_mesh(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty, [{}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@empty, [{}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Only the empty mesh: nothing to propagate, the annotation is closed on export.
// CHECK-LABEL: func.func @only_empty_mesh(
// CHECK-SAME: %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty, [{}, {}]>}) -> tensor<8x8xf32>
// CHECK-NEXT: stablehlo.abs %arg0 : tensor<8x8xf32>
sdy.mesh @empty = <[]>
func.func @only_empty_mesh(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty, [{?}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
