// RUN: shardc plan --split-input-file %s | filecheck %s
// RUN: awk '!/^sdy.mesh/ || !seen[$0]++' %s | shardc plan - | filecheck --check-prefix=TOTAL %s
// The plan of each op family: what the op's sharding rule needs against what its operands and
// results carry. Shardings are closed so that propagation keeps the conflicts as written.
// Each case is planned on its own; the TOTAL run plans all cases as one module (the repeated
// mesh declarations dropped) for the totals per kind and axis summed over the program.

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Element-wise: %arg1 is on y where the result (and %arg0) are on x. XLA computes an
// element-wise op at its result's layout; every x block (4 rows) lies inside one y block (8
// rows), so %arg1 is sliced locally (by the major half of x, free) and one 4x16 f32 block
// (256 B) moves.
// CHECK-LABEL: all-slice {"x":(1)2} 0 B: %arg1 of stablehlo.add in @elementwise
// CHECK-NEXT: cause: %arg1 is [{"y"}, {}] (annotated), stablehlo.add needs it as [{"x"}, {}] (following %arg0 dim 0 {"x"} (annotated))
// CHECK: collective-permute {x} 256 B: %arg1 of stablehlo.add in @elementwise
// CHECK-NEXT: cause:
// CHECK-NEXT: fix: annotate argument %arg1 as [{"x"}, {}]: the program then moves 0 B instead of 256 B (256 B less)
func.func @elementwise(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Contraction sharded on x on both sides, result replicated: partial sums all-reduced over x
// (the whole 8x32 f32 result, 1 KiB).
// CHECK-LABEL: all-reduce {x} 1.0 KiB: %0 at ops.mlir:{{[0-9]+}} of stablehlo.dot_general in @dot_all_reduce
// CHECK-NEXT: cause: reduction factor 2 (size 16) sharded on {"x"}: %arg0 dim 1 {"x"} (annotated), %arg1 dim 0 {"x"} (annotated)
// CHECK-NEXT: fix: annotate argument %arg1 as [{}, {}]: the program then moves 512 B instead of 1.0 KiB (512 B less)
func.func @dot_all_reduce(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The same contraction with the result kept sharded on x along its rows: a reduce-scatter,
// measured on its larger side (the 8x32 partial sums, 1 KiB).
// XLA all-reduces the partial sums and slices the result (no reduce-scatter)
// CHECK-LABEL: all-reduce {x} 1.0 KiB: %0 at ops.mlir:{{[0-9]+}} of stablehlo.dot_general in @dot_reduce_scatter
// CHECK: all-slice {x} 0 B
func.func @dot_reduce_scatter(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A dot whose lhs rows and rhs contraction both want x: the bigger lhs keeps x on its rows,
// the rhs (16x32 f32) is all-gathered (2 KiB), nothing is reduced.
// CHECK-LABEL: all-gather {x} 2.0 KiB: %arg1 of stablehlo.dot_general in @dot_conflict
// CHECK-NEXT: cause: %arg1 is [{"x"}, {}] (annotated), stablehlo.dot_general needs it as [{}, {}] (following %arg0 dim 0 {"x"} (annotated))
// CHECK-NOT: all-reduce
func.func @dot_conflict(%arg0: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A reduction over a dim sharded on y: all-reduce of the 8-element local result (32 B).
// CHECK-LABEL: all-reduce {y} 32 B: %0 at ops.mlir:{{[0-9]+}} of stablehlo.reduce in @reduce
// CHECK-NEXT: cause: reduction factor 1 (size 16) sharded on {"y"}: %arg0 dim 1 {"y"} (annotated)
func.func @reduce(%arg0: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<32x16xf32>, tensor<f32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Sort along a dim sharded on x: the sort dim needs replication, so (as Shardy and XLA do) x
// moves to the other dim, which can take it: one all-to-all of the 2x4 f32 block (64 B) to
// [{}, {"y", "x"}] before the sort and one back after it.
// CHECK-LABEL: all-to-all {x} 64 B: %arg0 of stablehlo.sort in @sort
// CHECK-NEXT: cause: %arg0 is [{"x"}, {"y"}] (annotated), stablehlo.sort needs it as [{}, {"y", "x"}] (following stablehlo.sort cannot split dim 0)
// CHECK: all-to-all {x} 64 B: %0 at ops.mlir:{{[0-9]+}} of stablehlo.sort in @sort
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

// A transpose whose operand and result are both [{"x"}, {}]: the operand's dim 0 is the
// result's dim 1, so one of them moves x to the other dim with one all-to-all (4x16 f32 =
// 256 B). As Shardy does for an op with one operand and one result of the same size, the
// operand's layout is kept and the result is resharded.
// CHECK-LABEL: all-to-all {x} 256 B: %0 at ops.mlir:{{[0-9]+}} of stablehlo.transpose in @transpose
// CHECK-NEXT: cause: stablehlo.transpose computes %0 at ops.mlir:{{[0-9]+}} as [{}, {"x"}] (following %arg0 dim 0 {"x"} (annotated)), it is [{"x"}, {}]
func.func @transpose(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A cumsum: a reduce_window whose window spans its sharded dim. Shardy's rule makes that a
// permutation factor and moves nothing; XLA needs the whole dim (its halo is all of it) and
// gathers it: 16x32 f32 on [{"x"}, {"y"}] gathers y to 4x32 (512 B), the result sliced back.
// CHECK-LABEL: all-gather {y} 512 B: %arg0 of stablehlo.reduce_window in @cumsum
// CHECK-NEXT: cause: %arg0 dim 1 {"y"} (annotated), but the window of stablehlo.reduce_window spans all of dim 1: XLA needs it as [{"x"}, {}]
// CHECK-NEXT: fix: annotate argument %arg0 as [{"x"}, {}]: the program then moves 0 B instead of 512 B (512 B less)
// CHECK: all-slice {y} 0 B: %0 at ops.mlir:{{[0-9]+}} of stablehlo.reduce_window in @cumsum
func.func @cumsum(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%arg0, %cst) <{padding = dense<[[0, 0], [31, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 32>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// TOTAL: total: 5.2 KiB per device in 12 collectives
// TOTAL-NEXT: all-gather 2 x 2.5 KiB
// TOTAL-NEXT: all-slice 3 x 0 B
// TOTAL-NEXT: all-reduce 3 x 2.0 KiB
// TOTAL-NEXT: all-to-all 3 x 384 B
// TOTAL-NEXT: collective-permute 1 x 256 B
// TOTAL-NEXT: axis x 4.6 KiB
// TOTAL-NEXT: axis y 544 B
// TOTAL-NEXT: memory per device: arguments 4.3 KiB, results 4.1 KiB, peak intermediates 2.0 KiB
