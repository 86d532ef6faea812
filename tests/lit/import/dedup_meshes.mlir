// RUN: shardc propagate --split-input-file --dump-after dedup-meshes %s -o /dev/null 2>&1 | filecheck %s
// `dedup-meshes`: identical meshes are one mesh to propagation (reference G48): shardings on a
// duplicate name its first twin, and the duplicate is erased unless a non-sdy op names it.

// CHECK-LABEL: IR Dump After dedup-meshes
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
// CHECK-LABEL: IR Dump After dedup-meshes
// CHECK: sdy.mesh @mesh = <["x"=4]>
// CHECK: sdy.mesh @copy = <["x"=4]>
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, test.mesh_ref = @copy}
sdy.mesh @mesh = <["x"=4]>
sdy.mesh @copy = <["x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@copy, [{"x"}]>]>, test.mesh_ref = @copy} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
