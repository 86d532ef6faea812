// RUN: shardc check --split-input-file %s | filecheck %s
// Collectives in a fori_loop and a scan body (stablehlo.while, whose body JAX outlines into
// called funcs) are listed under the region that runs them: a ring ppermute and a psum.
// CHECK-LABEL: sdy.manual_computation (manual_axes={"X", "Y"}) in @main
// CHECK: collective: stablehlo.collective_permute over {"X"}, 32 bytes/device at {{.*}}loops_and_calls.mlir:{{[0-9]+}}
// CHECK-NEXT: collective: stablehlo.all_reduce [add] over {"Y"}, 32 bytes/device at {{.*}}loops_and_calls.mlir:{{[0-9]+}}
// CHECK-NEXT: result 0 variance: varies over {"X", "Y"}
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["X"=4, "Y"=2]> {stablehlo.mesh = {axes = [{name = "X", size = 4 : i64}, {name = "Y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"X"}, {"Y"}]>] out_shardings=[<@mesh, [{"X"}, {"Y"}]>] manual_axes={"X", "Y"} (%arg1: tensor<2x4xf32>) {
      %c = stablehlo.constant dense<0> : tensor<i32>
      %1:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %arg1) : tensor<i32>, tensor<2x4xf32>
      cond {
        %c_2 = stablehlo.constant dense<3> : tensor<i32>
        %3 = stablehlo.compare LT, %iterArg, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %3 : tensor<i1>
      } do {
        %3 = func.call @closed_call(%iterArg_1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
        %c_2 = stablehlo.constant dense<1> : tensor<i32>
        %4 = stablehlo.add %iterArg, %c_2 : tensor<i32>
        stablehlo.return %4, %3 : tensor<i32>, tensor<2x4xf32>
      }
      %c_0 = stablehlo.constant dense<0> : tensor<i32>
      %2:2 = stablehlo.while(%iterArg = %c_0, %iterArg_1 = %1#1) : tensor<i32>, tensor<2x4xf32>
      cond {
        %c_2 = stablehlo.constant dense<2> : tensor<i32>
        %3 = stablehlo.compare LT, %iterArg, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %3 : tensor<i1>
      } do {
        %3 = func.call @closed_call_0(%iterArg_1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
        %c_2 = stablehlo.constant dense<1> : tensor<i32>
        %4 = stablehlo.add %iterArg, %c_2 : tensor<i32>
        stablehlo.return %4, %3 : tensor<i32>, tensor<2x4xf32>
      }
      sdy.return %2#1 : tensor<2x4xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
  func.func private @closed_call(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %0 = "stablehlo.collective_permute"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], [5, 7], [7, 1]]> : tensor<8x2xi64>}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
  func.func private @closed_call_0(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
}
