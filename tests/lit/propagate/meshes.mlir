// RUN: shardc propagate --split-input-file %s | filecheck %s

// Golden cases (docs/propagation.md §10): Shardy's sdy-propagation-pipeline, jaxlib 0.10.2;
// the CHECK lines are the exported form of the shardings Shardy chooses.

// G47: operands on different meshes: nothing propagates
// CHECK-LABEL: func.func @g47_different_meshes(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@other, [{}, {"a"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %1 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["a"=8]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
sdy.mesh @mesh_u = <["x"=4, "u"=1, "y"=2]>
sdy.mesh @perm = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @mesh3 = <["x"=4, "y"=3]>
func.func @g47_different_meshes(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@other, [{}, {"a"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// G48: identical meshes are merged; @mesh2 disappears
// CHECK-LABEL: func.func @g48_identical_meshes(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["a"=8]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
sdy.mesh @mesh_u = <["x"=4, "u"=1, "y"=2]>
sdy.mesh @perm = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @mesh3 = <["x"=4, "y"=3]>
func.func @g48_identical_meshes(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// G49: size-1 axes are removed from every sharding
// CHECK-LABEL: func.func @g49_size_one_axis(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_u, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_u, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_u, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["a"=8]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
sdy.mesh @mesh_u = <["x"=4, "u"=1, "y"=2]>
sdy.mesh @perm = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @mesh3 = <["x"=4, "y"=3]>
func.func @g49_size_one_axis(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_u, [{"u", "x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// G50: meshes differing only in device_ids are different: no propagation
// CHECK-LABEL: func.func @g50_device_order(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@perm, [{}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["a"=8]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
sdy.mesh @mesh_u = <["x"=4, "u"=1, "y"=2]>
sdy.mesh @perm = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @mesh3 = <["x"=4, "y"=3]>
func.func @g50_device_order(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@perm, [{}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// G53: mesh x=4,y=3: 12 [{"y","x"}] -> 4x3 overflows entirely
// CHECK-LABEL: func.func @g53_overflow_coprime(
// CHECK-SAME: %arg0: tensor<12xf32> {sdy.sharding = #sdy.sharding<@mesh3, [{"y", "x"}]>}
// CHECK-SAME: -> (tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<12xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return %0 : tensor<4x3xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["a"=8]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
sdy.mesh @mesh_u = <["x"=4, "u"=1, "y"=2]>
sdy.mesh @perm = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @mesh3 = <["x"=4, "y"=3]>
func.func @g53_overflow_coprime(%arg0: tensor<12xf32> {sdy.sharding = #sdy.sharding<@mesh3, [{"y", "x"}]>}) -> tensor<4x3xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<12xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
