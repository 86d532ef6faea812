// RUN: shardc propagate --split-input-file %s --pin | filecheck %s

// Layouts XLA's CPU partitioner gets wrong (passes/pin_hazards.py), pinned made safe.

// A pad with interior padding after a shard_map whose out_specs replicate the padded dim (the
// manual computation's out_sharding holds %0 whole), read by a value sharded along it. XLA's
// own propagation shards the pad along "y" from the subtract, as shardc's layout does, and its
// HLO verifier rejects the partitioned pad (an f32[1,3] shard where the subtract reads
// f32[1,4]; jax.jit's program the same). The pad is pinned with the dim whole, and the
// subtract reshards it.
// CHECK-LABEL: func.func @pad_interior_after_shard_map(
// CHECK: %[[M:.*]] = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>]
// CHECK: %[[P:.*]] = stablehlo.pad %[[M]], %{{.*}}, low = [0, -2], high = [0, 3], interior = [0, 1]
// CHECK-NEXT: %[[C:.*]] = sdy.sharding_constraint %[[P]] <@mesh, [{}, {}]> : tensor<1x16xf32>
// CHECK-NEXT: %{{.*}} = stablehlo.subtract %[[C]], %arg1
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @pad_interior_after_shard_map(%arg0: tensor<2x8xf32>, %arg1: tensor<1x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<1x16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x", "y"} (%arg2: tensor<1x8xf32>) {
    %4 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %5 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %5 : tensor<f32>
    }) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    sdy.return %4 : tensor<1x8xf32>
  } : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %1 = stablehlo.pad %0, %cst, low = [0, -2], high = [0, 3], interior = [0, 1] : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x16xf32>
  %2 = stablehlo.subtract %1, %arg1 : tensor<1x16xf32>
  return %2 : tensor<1x16xf32>
}

// -----

// The same pad carried into a while loop whose carry the loop's readers shard along "y": the
// verifier's complaint was the while's operand tuple (the pad's f32[1,3] shard where the loop's
// parameter holds f32[1,4]); pinned whole, the loop's own layout is left to XLA.
// CHECK-LABEL: func.func @pad_interior_into_a_loop(
// CHECK: %[[P:.*]] = stablehlo.pad
// CHECK-NEXT: %[[C:.*]] = sdy.sharding_constraint %[[P]] <@mesh, [{}, {}]> : tensor<1x16xf32>
// CHECK: stablehlo.while(%{{.*}} = %[[C]],
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @pad_interior_into_a_loop(%arg0: tensor<2x8xf32>, %arg1: tensor<1x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<1x16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x", "y"} (%arg2: tensor<1x8xf32>) {
    %4 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %5 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %5 : tensor<f32>
    }) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    sdy.return %4 : tensor<1x8xf32>
  } : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %1 = stablehlo.pad %0, %cst, low = [0, -2], high = [0, 3], interior = [0, 1] : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x16xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %2:2 = stablehlo.while(%it = %1, %i = %c) : tensor<1x16xf32>, tensor<i32>
  cond {
    %c1 = stablehlo.constant dense<2> : tensor<i32>
    %6 = stablehlo.compare LT, %i, %c1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %6 : tensor<i1>
  } do {
    %6 = stablehlo.tanh %it : tensor<1x16xf32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %7 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %6, %7 : tensor<1x16xf32>, tensor<i32>
  }
  %3 = stablehlo.subtract %2#0, %arg1 : tensor<1x16xf32>
  return %3 : tensor<1x16xf32>
}
