// RUN: shardc propagate --explicit --split-input-file %s | filecheck %s
// `--explicit` writes the plan as Shardy's explicit pipeline would (sdy-insert-explicit-
// reshards{enable-full-version=true} + sdy-reshard-to-collectives): sdy collectives with their
// out_sharding, the op computed at the layout its rule needs.

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Partial sums over x, the result kept on x: an all-reduce, then an all-slice (Shardy has no
// reduce-scatter op; XLA fuses the pair into one).
// CHECK-LABEL: func.func @dot_reduce_scatter(
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, {{.*}} {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// CHECK-NEXT: %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]>
// CHECK-NEXT: %2 = sdy.all_slice [{"x"}, {}] %1 out_sharding=<@mesh, [{"x"}, {}]>
// CHECK-NEXT: return %2
func.func @dot_reduce_scatter(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The smaller rhs is gathered before the dot.
// CHECK-LABEL: func.func @dot_conflict(
// CHECK: %0 = sdy.all_gather [{"x"}, {}] %arg1 out_sharding=<@mesh, [{}, {}]>
// CHECK-NEXT: %1 = stablehlo.dot_general %arg0, %0
func.func @dot_conflict(%arg0: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The sort dim's x moves to the other dim around the sort, and back.
// CHECK-LABEL: func.func @sort(
// CHECK: %0 = sdy.all_to_all [{"x"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"y", "x"}]>
// CHECK: %1 = "stablehlo.sort"(%0)
// CHECK: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y", "x"}]>]>
// CHECK-NEXT: %2 = sdy.all_to_all [{"x"}: 1->0] %1 out_sharding=<@mesh, [{"x"}, {"y"}]>
// CHECK-NEXT: return %2
func.func @sort(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// x blocks inside y blocks: slice the major half of x, then permute (Shardy's own form).
// CHECK-LABEL: func.func @aligned(
// CHECK: %0 = sdy.all_slice [{"x":(1)2}, {}] %arg1 out_sharding=<@mesh, [{"y", "x":(1)2}, {}]>
// CHECK-NEXT: %1 = sdy.collective_permute %0 out_sharding=<@mesh, [{"x"}, {}]>
// CHECK-NEXT: %2 = stablehlo.add %arg0, %1
func.func @aligned(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
