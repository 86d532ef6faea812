// RUN: shardc rules --split-input-file %s | filecheck %s
// Collectives (docs/op_rules.md §3.7): other dims pass through first, then an operand-only and a
// result-only need-replication factor per gathered/scattered/split/concat dim.

func.func @collectives(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-LABEL: stablehlo.all_reduce: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=4}>
  %0 = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: stablehlo.collective_permute: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=4}>
  %1 = "stablehlo.collective_permute"(%x) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: stablehlo.all_gather: #sdy.op_sharding_rule<([j, i])->([k, i]) {i=4, j=4, k=8} need_replication={j, k}>
  %2 = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<8x4xf32>
  // CHECK-NEXT: stablehlo.all_gather: #sdy.op_sharding_rule<([i, j])->([i, k]) {i=4, j=4, k=8} need_replication={j, k}>
  %3 = "stablehlo.all_gather"(%x) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: stablehlo.reduce_scatter: #sdy.op_sharding_rule<([i, j])->([i, k]) {i=4, j=4, k=1} need_replication={j, k}>
  %4 = "stablehlo.reduce_scatter"(%x) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x4xf32>) -> tensor<4x1xf32>
  // CHECK: stablehlo.all_to_all: #sdy.op_sharding_rule<([k, i])->([l, j]) {i=4, j=1, k=4, l=16} need_replication={i, j, k, l}>
  %5 = "stablehlo.all_to_all"(%x) <{concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<4x4xf32>) -> tensor<16x1xf32>
  // CHECK-NEXT: stablehlo.all_to_all: #sdy.op_sharding_rule<([i, j])->([i, k]) {i=4, j=4, k=4} need_replication={j, k}>
  %6 = "stablehlo.all_to_all"(%x) <{concat_dimension = 1 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
