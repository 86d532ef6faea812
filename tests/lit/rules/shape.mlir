// RUN: shardc rules --split-input-file %s | filecheck %s
// broadcast_in_dim, transpose, concatenate, slice, pad, reverse, dynamic_slice,
// dynamic_update_slice (docs/op_rules.md §3.2).

func.func @broadcast(%a: tensor<8x1xf32>, %s: tensor<f32>) -> tensor<2x8x4xf32> {
  // New dims get result-only factors; the expanded size-1 dim gets its own size-1 factor.
  // CHECK-LABEL: stablehlo.broadcast_in_dim: #sdy.op_sharding_rule<([j, k])->([i, j, l]) {i=2, j=8, k=1, l=4}>
  %0 = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<8x1xf32>) -> tensor<2x8x4xf32>
  // CHECK-NEXT: stablehlo.broadcast_in_dim: #sdy.op_sharding_rule<([])->([i, j]) {i=8, j=16}>
  %1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @transpose(%a: tensor<2x4x8xf32>) -> tensor<8x2x4xf32> {
  // Factors are created in result-dim order.
  // CHECK-LABEL: stablehlo.transpose: #sdy.op_sharding_rule<([j, k, i])->([i, j, k]) {i=8, j=2, k=4}>
  %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

func.func @concatenate(%a: tensor<8x4xf32>, %b: tensor<8x12xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // The concat factor has the result size and needs replication.
  // CHECK-LABEL: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16} need_replication={j}>
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<8x4xf32>, tensor<8x12xf32>) -> tensor<8x16xf32>
  // Of slices: the concat factor is a permutation factor.
  // CHECK: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16} permutation={j}>
  %1 = stablehlo.slice %c [0:8, 0:4] : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %2 = stablehlo.slice %c [0:8, 4:16] : (tensor<8x16xf32>) -> tensor<8x12xf32>
  %3 = stablehlo.concatenate %2, %1, dim = 1 : (tensor<8x12xf32>, tensor<8x4xf32>) -> tensor<8x16xf32>
  // A tensor with slices of itself around it (a rotation): permutation too.
  // CHECK: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j], [i, j])->([i, j]) {i=8, j=32} permutation={j}>
  %4 = stablehlo.concatenate %2, %c, %1, dim = 1 : (tensor<8x12xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x32xf32>
  // The same tensor repeated, no slice among them: need replication.
  // CHECK: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=32} need_replication={j}>
  %5 = stablehlo.concatenate %c, %c, dim = 1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  // A slice of another tensor among them: need replication.
  // CHECK: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=20} need_replication={j}>
  %6 = stablehlo.slice %a [0:8, 0:4] : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %7 = stablehlo.concatenate %c, %6, dim = 1 : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x20xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @slice_pad_reverse(%a: tensor<8x16xf32>, %z: tensor<f32>) -> tensor<4x16xf32> {
  // Sliced, padded and reversed dims: one permutation factor of the operand size.
  // CHECK-LABEL: stablehlo.slice: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i}>
  %0 = stablehlo.slice %a [2:6, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i}>
  %1 = stablehlo.pad %a, %z, low = [1, 0], high = [2, 0], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<11x16xf32>
  // CHECK-NEXT: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={j}>
  %2 = stablehlo.pad %a, %z, low = [0, 0], high = [0, 0], interior = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x31xf32>
  // CHECK-NEXT: stablehlo.reverse: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i}>
  %3 = stablehlo.reverse %a, dims = [0] : tensor<8x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @shifted_pad(%a: tensor<16x4xf32>, %z: tensor<f32>) -> tensor<16x4xf32> {
  // A pad that keeps the dim's size (low -1, high 1: a shift) passes through; only a dim whose
  // size changes is a permutation factor (checked with sdy-populate-op-sharding-rules).
  // CHECK-LABEL: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=16, j=4}>
  %0 = stablehlo.pad %a, %z, low = [0, -1], high = [0, 1], interior = [0, 0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16x4xf32>
  // CHECK-NEXT: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=16, j=4} permutation={j}>
  %1 = stablehlo.pad %a, %z, low = [0, 1], high = [0, -2], interior = [0, 0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16x3xf32>
  return %0 : tensor<16x4xf32>
}

// -----

func.func @dynamic(%a: tensor<8x16xf32>, %u: tensor<4x16xf32>, %i: tensor<i32>) -> tensor<8x16xf32> {
  // The sliced dim needs replication and is blocked.
  // CHECK-LABEL: stablehlo.dynamic_slice: #sdy.op_sharding_rule<([i, j], [], [])->([i, j]) {i=8, j=16} need_replication={i} blocked_propagation={i}>
  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [4, 16] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<4x16xf32>
  // Non-constant indices: the update dim gets its own need-replication factor.
  // CHECK-NEXT: stablehlo.dynamic_update_slice: #sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=8, j=4, k=16} need_replication={j}>
  %1 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
  // Constant indices: the update factor passes through.
  // CHECK: stablehlo.dynamic_update_slice: #sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=8, j=4, k=16}>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %2 = stablehlo.dynamic_update_slice %a, %u, %c, %c : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
