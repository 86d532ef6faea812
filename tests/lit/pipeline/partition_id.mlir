// RUN: not shardc check %s 2>&1 | filecheck %s
// RUN: not shardc propagate %s 2>&1 | filecheck %s
// RUN: not shardc propagate --no-check-replication %s 2>&1 | filecheck %s
// RUN: not shardc opt %s 2>&1 | filecheck %s
// RUN: shardc opt --no-verify %s | filecheck %s --check-prefix=NOVERIFY
// Every entry point runs the one pipeline, so each rejects a partition_id straight in a
// partially manual body (which partition a device is there depends on XLA's partitioning of
// the free axis "y"), not only `shardc check`.
// CHECK: error: {{.*}}partition_id.mlir:[[# @LINE + 6]]:{{[0-9]+}}: stablehlo.partition_id inside sdy.manual_computation (manual_axes={"x"}) where the mesh axes {"y"} are free (automatic)
// CHECK-NOT: sdy.mesh
// NOVERIFY: stablehlo.partition_id
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @partition_id_with_free_axes(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}]>] out_shardings=[<@mesh, [{"x", ?}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
    %1 = stablehlo.partition_id : tensor<ui32>
    %2 = stablehlo.convert %1 : (tensor<ui32>) -> tensor<f32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %4 = stablehlo.add %arg1, %3 : tensor<2xf32>
    sdy.return %4 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
