// RUN: not shardc check --split-input-file %s 2>&1 | filecheck %s
// RUN: not shardc check --split-input-file --no-check-replication %s 2>&1 | filecheck %s --check-prefix=OFF

// An input split over "x" returned with an out_sharding that drops "x" (seed 000's f3 without
// its psum): the blocks differ along "x", so keeping one copy would be wrong.
// The one line names the result and the op computing it, the axis, the spec as the user wrote
// it, the reason it varies, and the fixes.
// CHECK: error: {{.*}}replication_errors.mlir:[[# @LINE + 5]]:8: result 0 of sdy.manual_computation (manual_axes={"x", "y"}) (computed by stablehlo.negate at {{.*}}replication_errors.mlir:[[# @LINE + 6]]:10) may differ across devices along manual axis "x", but out_specs[0] = P(None, 'y') (out_shardings[0] = <@mesh, [{}, {"y"}]>) does not mention it and so promises one replicated copy: it varies along "x" because of in_specs[0] = P('x', 'y') (in_shardings[0] = <@mesh, [{"x"}, {"y"}]>), which splits dim 0 of operand 0 of sdy.manual_computation at {{.*}}:[[# @LINE + 5]]:8 over "x"; reduce it with lax.psum (or pmax/pmin) over "x" before returning it, mention "x" in out_specs[0], e.g. P('x', 'y'), to keep every device's block, or, if every device computes the same value in a way shardc cannot prove, turn shardc's check off (--no-check-replication, check_replication=False; JAX's check_vma=False does not reach it)
// OFF-LABEL: in @missing_psum
// OFF: result 0 variance: varies over {"x", "y"}; promised replicated over {"x"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @missing_psum(%arg0: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<2x2xf32>) {
    %1 = stablehlo.negate %arg1 : tensor<2x2xf32>
    sdy.return %1 : tensor<2x2xf32>
  } : (tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// psum over "y" only: the result still varies along "x", which P() promised replicated.
// CHECK: error: {{.*}}: result 0 of sdy.manual_computation {{.*}} (computed by stablehlo.all_reduce at {{.*}}) may differ across devices along manual axis "x", but out_specs[0] = P() {{.*}} because of in_specs[0] = P('x') {{.*}} mention "x" in out_specs[0], e.g. P('x'), to keep
// OFF-LABEL: in @psum_wrong_axis
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @psum_wrong_axis(%arg0: tensor<8xf32>) -> tensor<2xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x", "y"} (%arg1: tensor<2xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<2xf32>
    sdy.return %1 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A collective_permute makes an invariant value vary: the error names the op that did it.
// CHECK: error: {{.*}}: result 0 {{.*}} along manual axis "x", {{.*}}: it varies along "x" because of stablehlo.collective_permute over {"x"} at {{.*}}replication_errors.mlir:[[# @LINE + 5]]
// OFF-LABEL: in @permute_unmapped
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @permute_unmapped(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x", "y"} (%arg1: tensor<2xf32>) {
    %1 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [1, 3], [3, 5], [5, 7]]> : tensor<6x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>
    sdy.return %1 : tensor<2xf32>
  } : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Replicated results that are provably invariant pass: psum over both axes, all_gather.
// CHECK-LABEL: in @provably_replicated
// CHECK: replication check: passed
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @provably_replicated(%arg0: tensor<8xf32>) -> (tensor<2xf32>, tensor<8xf32>) {
  %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{}]>, <@mesh, [{}]>] manual_axes={"x", "y"} (%arg1: tensor<2xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<2xf32>
    %2 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2xf32>) -> tensor<8xf32>
    sdy.return %1, %2 : tensor<2xf32>, tensor<8xf32>
  } : (tensor<8xf32>) -> (tensor<2xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<8xf32>
}

// -----

// partition_id straight in a partial-manual body (JAX wraps it in an all-manual region): rejected.
// CHECK: error: {{.*}}replication_errors.mlir:[[# @LINE + 5]]:{{[0-9]+}}: stablehlo.partition_id inside sdy.manual_computation (manual_axes={"x"}) where the mesh axes {"y"} are free (automatic){{.*}}; compute it inside a nested sdy.manual_computation over the free axes
// OFF: error: {{.*}}stablehlo.partition_id inside
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
