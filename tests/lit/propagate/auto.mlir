// RUN: shardc propagate --auto --memory-budget 12KiB %s | filecheck %s
// RUN: shardc propagate --auto --memory-budget 12KiB --explain %s -o /dev/null 2>&1 | filecheck --check-prefix=EXPLAIN %s
// RUN: not shardc propagate --auto --memory-budget 1KiB %s 2>&1 | filecheck --check-prefix=ERR %s
// `--auto`: only the batch of %arg0 is annotated. Replicated, the two 8 KiB weights do not fit a
// 12 KiB budget per device (arguments + results + temporaries, by the plan); auto shards both on
// "y" (megatron: column then row, so the first dot needs no collective and the second one
// all-reduce of its 512 B result) and keeps the annotation as written. The smallest layout
// found is named when no layout fits.

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @mlp_batch_only(
// CHECK-SAME: %arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg2: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-NEXT: %0 = stablehlo.dot_general %arg0, %arg1{{.*}}<@mesh, [{"x"}, {"y"}]>
// CHECK-NEXT: %1 = stablehlo.tanh %0 {{.*}}<@mesh, [{"x"}, {"y"}]>
// CHECK-NEXT: %2 = stablehlo.dot_general %1, %arg2{{.*}}<@mesh, [{"x"}, {}]>

// EXPLAIN: explain: auto @mlp_batch_only: highs optimal
// EXPLAIN-SAME: planned collectives 512 B
// EXPLAIN-SAME: (budget 12.00 KiB)
// EXPLAIN: explain: auto: by the plan, the layout chosen moves 512 B and needs 10.00 KiB per device
// EXPLAIN: explain: auto: %arg1: %arg1 dim 1 <- {"y"}; chose [{}, {"y"}]: 0 B moved here, 4.00 KiB held; weighed [{}, {}]: 0 B moved here (+0 B), 8.00 KiB held, peak {{.*}} over budget

// ERR: error: memory budget 1.00 KiB (1024 bytes) cannot be met: the smallest layout found needs 7.00 KiB (7168 bytes) per device by the plan (arguments + results + temporaries); give --memory-budget 7168 or more
func.func @mlp_batch_only(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<32x64xf32>, %arg2: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = stablehlo.tanh %0 : tensor<16x64xf32>
  %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}
