// RUN: shardc rules --split-input-file %s | filecheck %s
// sort, fft, cholesky, triangular_solve, rng_bit_generator (docs/op_rules.md §3.6).

func.func @sort(%x: tensor<8x16xf32>, %v: tensor<16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.sort: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j}>
  %0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  // Rank 1: the sort dim is also blocked.
  // CHECK: stablehlo.sort: #sdy.op_sharding_rule<([i])->([i]) {i=16} need_replication={i} blocked_propagation={i}>
  %1 = "stablehlo.sort"(%v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @fft(%c: tensor<4x16xcomplex<f32>>, %r: tensor<4x16xf32>, %h: tensor<8x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>> {
  // CHECK-LABEL: stablehlo.fft: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=16} need_replication={j}>
  %0 = stablehlo.fft %c, type = FFT, length = [16] : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
  // CHECK-NEXT: stablehlo.fft: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=16} need_replication={j} blocked_propagation={j}>
  %1 = stablehlo.fft %r, type = RFFT, length = [16] : (tensor<4x16xf32>) -> tensor<4x9xcomplex<f32>>
  // CHECK-NEXT: stablehlo.fft: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j} blocked_propagation={j}>
  %2 = stablehlo.fft %h, type = IRFFT, length = [30] : (tensor<8x16xcomplex<f32>>) -> tensor<8x30xf32>
  return %0 : tensor<4x16xcomplex<f32>>
}

// -----

func.func @linalg(%a: tensor<4x8x8xf32>, %b: tensor<4x8x5xf32>, %br: tensor<4x5x8xf32>) -> tensor<4x8x8xf32> {
  // CHECK-LABEL: stablehlo.cholesky: #sdy.op_sharding_rule<([i, j, k])->([i, j, k]) {i=4, j=8, k=8} need_replication={j, k}>
  %0 = stablehlo.cholesky %a, lower = true : tensor<4x8x8xf32>
  // CHECK-NEXT: stablehlo.triangular_solve: #sdy.op_sharding_rule<([i, j, l], [i, j, k])->([i, l, k]) {i=4, j=8, k=5, l=8} need_replication={j, k, l}>
  %1 = "stablehlo.triangular_solve"(%a, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x8x8xf32>, tensor<4x8x5xf32>) -> tensor<4x8x5xf32>
  // CHECK-NEXT: stablehlo.triangular_solve: #sdy.op_sharding_rule<([i, l, j], [i, j, k])->([i, l, k]) {i=4, j=8, k=5, l=8} need_replication={j, k, l}>
  %2 = "stablehlo.triangular_solve"(%a, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose TRANSPOSE>, unit_diagonal = false}> : (tensor<4x8x8xf32>, tensor<4x8x5xf32>) -> tensor<4x8x5xf32>
  // CHECK-NEXT: stablehlo.triangular_solve: #sdy.op_sharding_rule<([i, l, k], [i, j, k])->([i, j, l]) {i=4, j=5, k=8, l=8} need_replication={j, k, l}>
  %3 = "stablehlo.triangular_solve"(%a, %br) <{left_side = false, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x8x8xf32>, tensor<4x5x8xf32>) -> tensor<4x5x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// -----

func.func @rng(%s: tensor<2xui64>) -> tensor<8x16xui32> {
  // CHECK-LABEL: stablehlo.rng_bit_generator: #sdy.op_sharding_rule<([i])->([i], [j, k]) {i=2, j=8, k=16} need_replication={i} blocked_propagation={i}>
  %0:2 = "stablehlo.rng_bit_generator"(%s) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<8x16xui32>)
  return %0#1 : tensor<8x16xui32>
}
