// RUN: shardc rules --split-input-file %s | filecheck %s
// reduce_window and select_and_scatter: a dim passes through iff its window is trivial
// (docs/op_rules.md §3.4).

func.func @reduce_window(%x: tensor<8x16x16x4xf32>, %y: tensor<8x16x4xf32>, %z: tensor<f32>) -> tensor<8x8x8x4xf32> {
  // CHECK-LABEL: stablehlo.reduce_window: #sdy.op_sharding_rule<([i, j, k, l], [])->([i, j, k, l]) {i=8, j=8, k=8, l=4} permutation={j, k}>
  %0 = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x16x16x4xf32>, tensor<f32>) -> tensor<8x8x8x4xf32>
  // CHECK: stablehlo.reduce_window: #sdy.op_sharding_rule<([i, j, k], [])->([i, j, k]) {i=8, j=16, k=4} permutation={j}>
  %1 = "stablehlo.reduce_window"(%y, %z) <{window_dimensions = array<i64: 1, 3, 1>, padding = dense<[[0, 0], [1, 1], [0, 0]]> : tensor<3x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<8x16x4xf32>
  return %0 : tensor<8x8x8x4xf32>
}

// -----

func.func @select_and_scatter(%x: tensor<8x16x16x4xf32>, %s: tensor<8x8x8x4xf32>, %z: tensor<f32>) -> tensor<8x16x16x4xf32> {
  // The source dim gets its own need-replication factor, operand/result a permutation factor.
  // CHECK-LABEL: stablehlo.select_and_scatter: #sdy.op_sharding_rule<([i, k, m, n], [i, j, l, n], [])->([i, k, m, n]) {i=8, j=8, k=16, l=8, m=16, n=4} need_replication={j, l} permutation={k, m}>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %z) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<8x16x16x4xf32>, tensor<8x8x8x4xf32>, tensor<f32>) -> tensor<8x16x16x4xf32>
  return %0 : tensor<8x16x16x4xf32>
}
