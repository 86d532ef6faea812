// RUN: shardc rules --conservative --split-input-file %s | filecheck %s
// RUN: shardc rules --split-input-file %s | filecheck %s --check-prefix=DEFAULT
// Conservative propagation's rules (Shardy's conservative-propagation=true), next to the
// ordinary ones: no factor along a concatenate's dim or a convolution's spatial dims (each such
// dim gets a size-1 factor of its own), and the permutation factors of the dims pad, slice,
// reduce_window and select_and_scatter change are blocked.

func.func @concatenate(%a: tensor<8x4xf32>, %b: tensor<8x12xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, k])->([i, l]) {i=8, j=1, k=1, l=1}>
  // DEFAULT-LABEL: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16} need_replication={j}>
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<8x4xf32>, tensor<8x12xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @convolution(%x: tensor<4x16x16x8xf32>, %k: tensor<3x3x8x32xf32>) -> tensor<4x8x8x32xf32> {
  // CHECK-LABEL: stablehlo.convolution: #sdy.op_sharding_rule<([i, l, m, j], [n, o, j, k])->([i, p, q, k]) {i=4, j=8, k=32, l=1, m=1, n=1, o=1, p=1, q=1} reduction={j}>
  // DEFAULT-LABEL: stablehlo.convolution: #sdy.op_sharding_rule<([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) {i=4, j=8, k=2, l=8, m=2, n=8, o=32} reduction={k, m, n} permutation={j, l}>
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x16x16x8xf32>, tensor<3x3x8x32xf32>) -> tensor<4x8x8x32xf32>
  return %0 : tensor<4x8x8x32xf32>
}

// -----

func.func @pad_and_slice(%x: tensor<8x16xf32>, %v: tensor<f32>) -> (tensor<10x16xf32>, tensor<4x16xf32>) {
  // CHECK-LABEL: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i} blocked_propagation={i}>
  // DEFAULT-LABEL: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i}>
  %0 = stablehlo.pad %x, %v, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<10x16xf32>
  // CHECK: stablehlo.slice: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i} blocked_propagation={i}>
  // DEFAULT: stablehlo.slice: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i}>
  %1 = stablehlo.slice %x [2:6, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<10x16xf32>, tensor<4x16xf32>
}

// -----

func.func @windows(%x: tensor<8x16xf32>, %s: tensor<8x8xf32>, %v: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x16xf32>) {
  // CHECK-LABEL: stablehlo.reduce_window: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=8} permutation={j} blocked_propagation={j}>
  // DEFAULT-LABEL: stablehlo.reduce_window: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=8} permutation={j}>
  %0 = "stablehlo.reduce_window"(%x, %v) <{window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x8xf32>
  // CHECK: stablehlo.select_and_scatter: #sdy.op_sharding_rule<([i, k], [i, j], [])->([i, k]) {i=8, j=8, k=16} need_replication={j} permutation={k} blocked_propagation={j, k}>
  // DEFAULT: stablehlo.select_and_scatter: #sdy.op_sharding_rule<([i, k], [i, j], [])->([i, k]) {i=8, j=8, k=16} need_replication={j} permutation={k}>
  %1 = "stablehlo.select_and_scatter"(%x, %s, %v) <{window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x16xf32>
}

// -----

func.func @unchanged(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  // Ops with no conservative variant keep their rule.
  // CHECK-LABEL: stablehlo.dot_general: #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=4, k=16} reduction={k}>
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
