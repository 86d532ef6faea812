// RUN: shardc propagate --split-input-file %s | filecheck %s
// Dead values decide nothing: Shardy's pipeline erases side-effect-free ops whose results only dead
// ops use (to a fixed point) before it propagates, so the dead maximum and dot_general pull no
// axes of %arg1/%arg2 into %0 (checked against sdy-propagation-pipeline). shardc keeps the dead
// ops in its output.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// CHECK-NEXT: %1 = stablehlo.maximum %0, %arg1
// CHECK-NEXT: %2 = stablehlo.dot_general %1, %arg2
// CHECK-NEXT: %3 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.maximum %0, %arg1 : tensor<8x16xf32>
  %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %3 = stablehlo.abs %0 : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// Dead ops with regions: a dead reduce, sort (its comparator with it) and the adds that only
// they read are erased before Shardy propagates, so %arg1/%arg2 get nothing; a dead case and a
// dead while are kept until after propagation, so %arg3/%arg4 take "x" through them (checked
// against sdy-propagation-pipeline; a dead scatter, map or if is erased like the reduce).
// CHECK-LABEL: func.func @dead_region_ops(
// CHECK-SAME: %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg4: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dead_region_ops(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<8x8xf32>, %arg5: tensor<i32>) -> tensor<8x8xf32> {
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = stablehlo.add %arg0, %arg2 : tensor<8x8xf32>
  %3 = "stablehlo.sort"(%2) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = stablehlo.add %arg0, %arg3 : tensor<8x8xf32>
  %5 = "stablehlo.case"(%arg5) ({
    stablehlo.return %4 : tensor<8x8xf32>
  }, {
    %m = stablehlo.multiply %4, %4 : tensor<8x8xf32>
    stablehlo.return %m : tensor<8x8xf32>
  }) : (tensor<i32>) -> tensor<8x8xf32>
  %6 = stablehlo.add %arg0, %arg4 : tensor<8x8xf32>
  %7:2 = stablehlo.while(%it = %arg5, %v = %6) : tensor<i32>, tensor<8x8xf32>
   cond {
    %c = stablehlo.compare LT, %it, %it : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %v, %v : tensor<8x8xf32>
    stablehlo.return %it, %n : tensor<i32>, tensor<8x8xf32>
  }
  return %arg0 : tensor<8x8xf32>
}
