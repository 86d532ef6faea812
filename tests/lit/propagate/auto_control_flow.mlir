// RUN: shardc propagate --auto --memory-budget 40KiB %s | filecheck %s
// `--auto` on a function with a while loop: auto's live ranges place the ops nested in the loop's
// regions at the loop itself, and the loop-carried value keeps one layout through the edge (the
// argument, the body's result and the function's result alike). Replicated, the two 16 KiB
// arguments alone miss the 40 KiB budget per device, so auto must shard something.

// CHECK-LABEL: func.func @loop(
// CHECK-SAME: %arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [[CARRIED:[^>]*]]>}, %arg1: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh,
// CHECK-SAME: -> (tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [[CARRIED]]>})
// CHECK: stablehlo.while
// CHECK: } do {
// CHECK: stablehlo.tanh {{.*}} {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [[CARRIED]]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @loop(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %arg0) : tensor<i32>, tensor<64x64xf32>
   cond {
    %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = stablehlo.add %i, %c1 : tensor<i32>
    %d = stablehlo.dot_general %v, %arg1, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %t = stablehlo.tanh %d : tensor<64x64xf32>
    stablehlo.return %n, %t : tensor<i32>, tensor<64x64xf32>
  }
  return %0#1 : tensor<64x64xf32>
}
