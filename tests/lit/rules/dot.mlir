// RUN: shardc rules --split-input-file %s | filecheck %s
// Contractions and reductions (docs/op_rules.md §3.3, §3.4).

func.func @dot_general(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>, %m: tensor<8x16xf32>, %v: tensor<16xf32>) -> tensor<4x8x32xf32> {
  // Factor order: batch, lhs free, rhs free, contracting.
  // CHECK-LABEL: stablehlo.dot_general: #sdy.op_sharding_rule<([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=32, l=16} reduction={l}>
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
  // CHECK-NEXT: stablehlo.dot_general: #sdy.op_sharding_rule<([i, j], [j])->([i]) {i=8, j=16} reduction={j}>
  %1 = stablehlo.dot_general %m, %v, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

func.func @dot(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %v: tensor<8xf32>) -> tensor<16x16xf32> {
  // CHECK-LABEL: stablehlo.dot: #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=16, k=8} reduction={k}>
  %0 = "stablehlo.dot"(%a, %b) : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  // CHECK-NEXT: stablehlo.dot: #sdy.op_sharding_rule<([j], [j, i])->([i]) {i=16, j=8} reduction={j}>
  %1 = "stablehlo.dot"(%v, %b) : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  // CHECK-NEXT: stablehlo.dot: #sdy.op_sharding_rule<([i], [i])->([]) {i=8} reduction={i}>
  %2 = "stablehlo.dot"(%v, %v) : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @reduce(%a: tensor<8x16x4xf32>, %b: tensor<8x4xf32>, %c: tensor<8x4xi32>, %z: tensor<f32>, %zi: tensor<i32>) -> tensor<8x4xf32> {
  // CHECK-LABEL: stablehlo.reduce: #sdy.op_sharding_rule<([i, j, k], [])->([i, k]) {i=8, j=16, k=4} reduction={j}>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  // Variadic: every input shares the mapping; the inits are scalars.
  // CHECK: stablehlo.reduce: #sdy.op_sharding_rule<([i, j], [i, j], [], [])->([j], [j]) {i=8, j=4} reduction={i}>
  %1:2 = stablehlo.reduce(%b init: %z), (%c init: %zi) across dimensions = [0] : (tensor<8x4xf32>, tensor<8x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
    reducer(%x: tensor<f32>, %y: tensor<f32>) (%xi: tensor<i32>, %yi: tensor<i32>) {
      %s = stablehlo.add %x, %y : tensor<f32>
      %si = stablehlo.add %xi, %yi : tensor<i32>
      stablehlo.return %s, %si : tensor<f32>, tensor<i32>
    }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @convolution(%x: tensor<8x3x32x32xf32>, %k: tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32> {
  // Spatial dims: the windows factor (result size, permutation) is larger than the window-size
  // factor, which is then clipped to 1 and skipped; the kernel spatial dims get size-1 factors.
  // CHECK-LABEL: stablehlo.convolution: #sdy.op_sharding_rule<([i, l, j, k], [m, l, n, o])->([i, m, j, k]) {i=8, j=32, k=32, l=3, m=16, n=1, o=1} reduction={l} permutation={j, k}>
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
  return %0 : tensor<8x16x32x32xf32>
}

// -----

func.func @grouped_convolution(%x: tensor<8x8x32xf32>, %k: tensor<16x2x3xf32>, %y: tensor<8x4x32xf32>, %k2: tensor<6x4x3xf32>) -> tensor<8x16x30xf32> {
  // CHECK-LABEL: stablehlo.convolution: #sdy.op_sharding_rule<([i, kl, j], [km, l, n])->([i, km, j]) {i=8, j=30, k=4, l=2, m=4, n=1} reduction={l} permutation={j}>
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<8x8x32xf32>, tensor<16x2x3xf32>) -> tensor<8x16x30xf32>
  // CHECK-NEXT: stablehlo.convolution: #sdy.op_sharding_rule<([ij, l, k], [im, l, n])->([j, im, k]) {i=2, j=4, k=30, l=4, m=3, n=1} reduction={l} permutation={k}>
  %1 = stablehlo.convolution(%y, %k2) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<8x4x32xf32>, tensor<6x4x3xf32>) -> tensor<4x6x30xf32>
  return %0 : tensor<8x16x30xf32>
}
