// RUN: shardc opt --split-input-file --pass-pipeline=dedup-meshes %s | filecheck %s
// `dedup-meshes`: identical meshes are one mesh to propagation (docs/sharding_model.md §1):
// shardings on a duplicate name its first twin, and the duplicate is erased unless a non-sdy op
// names it; an inlined mesh becomes an `sdy.mesh` symbol (cases checked against jaxlib 0.10.2's
// `sdy-lift-inlined-meshes`, which differs only in the `stablehlo.mesh` attribute it adds).

// CHECK-LABEL: module
// CHECK: sdy.mesh @mesh = <["x"=4, "y"=2]>
// CHECK-NOT: sdy.mesh @mesh2
// CHECK: sdy.mesh @other = <["x"=2, "y"=4]>
// CHECK: func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@other, [{}, {"y"}]>})
// CHECK: sdy.sharding_constraint %arg0 <@mesh, [{}, {"y"}]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
sdy.mesh @other = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@other, [{}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh2, [{}, {"y"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A duplicate that a non-sdy op names stays in the module; no sharding names it any more.
// CHECK-LABEL: module
// CHECK: sdy.mesh @mesh = <["x"=4]>
// CHECK: sdy.mesh @copy = <["x"=4]>
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, test.mesh_ref = @copy}
sdy.mesh @mesh = <["x"=4]>
sdy.mesh @copy = <["x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@copy, [{"x"}]>]>, test.mesh_ref = @copy} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Inlined meshes are lifted: an equal existing mesh is named (after de-duplication), a new one
// is added after the last mesh as Shardy names it (`@mesh_N` past a taken name, a maximal mesh
// `@maximal_mesh_<device>`), in the order first met: args, results, ops, constraints, manual.
// CHECK-LABEL: module {
// CHECK-NEXT: sdy.mesh @mesh = <["x"=2, "y"=4]>
// CHECK-NEXT: sdy.mesh @mesh_0 = <["x"=2], device_ids=[1, 0]>
// CHECK-NEXT: sdy.mesh @mesh_1 = <["x"=8]>
// CHECK-NEXT: sdy.mesh @maximal_mesh_5 = <[], device_ids=[5]>
// CHECK-NEXT: sdy.mesh @mesh_2 = <["y"=4]>
// CHECK-NEXT: func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_0, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{?}, {?}]>}, tensor<8x8xf32>)
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-NEXT: %1 = stablehlo.add %0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_5, []>]>}
// CHECK-NEXT: %2 = sdy.sharding_constraint %1 <@mesh_1, [{}, {"x"}]>
// CHECK-NEXT: %3 = sdy.manual_computation(%2) in_shardings=[<@mesh_2, [{"y"}, {}]>] out_shardings=[<@mesh_2, [{"y"}, {}]>] manual_axes={"y"}
// CHECK-NOT: mesh<
sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @mesh_1 = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2, "y"=4]>, [{"x"}, {?}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=8]>, [{?}, {?}]>}, tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{"x"}, {}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.add %0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[5]>, []>]>} : tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <mesh<["x"=8]>, [{}, {"x"}]> : tensor<8x8xf32>
  %3 = sdy.manual_computation(%2) in_shardings=[<mesh<["y"=4]>, [{"y"}, {}]>] out_shardings=[<mesh<["y"=4]>, [{"y"}, {}]>] manual_axes={"y"} (%a: tensor<2x8xf32>) {
    %4 = stablehlo.negate %a : tensor<2x8xf32>
    sdy.return %4 : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2, %3 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A module without meshes: the lifted ones open it; an empty inlined mesh is `@empty_mesh`.
// CHECK-LABEL: module {
// CHECK-NEXT: sdy.mesh @empty_mesh = <[]>
// CHECK-NEXT: sdy.mesh @mesh = <["x"=4]>
// CHECK-NEXT: func.func @only_inlined(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@empty_mesh, [{}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
func.func @only_inlined(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<[]>, [{}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=4]>, [{"x"}]>}) {
  return %arg0 : tensor<8xf32>
}
