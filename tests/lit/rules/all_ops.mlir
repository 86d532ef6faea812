// RUN: shardc rules --split-input-file %s | filecheck %s
// The rule of every op kind, alphabetical, one line each (the rules Shardy prints
// for the same ops, docs/op_rules.md §3; the family files check each case in detail).

func.func @abs(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.abs: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.abs"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @add(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.add: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.add"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @all_gather(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // CHECK-LABEL: stablehlo.all_gather: #sdy.op_sharding_rule<([j, i])->([k, i]) {i=4, j=4, k=8} need_replication={j, k}>
  %0 = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @all_reduce(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-LABEL: stablehlo.all_reduce: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=4}>
  %0 = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @all_to_all(%x: tensor<4x4xf32>) -> tensor<16x1xf32> {
  // CHECK-LABEL: stablehlo.all_to_all: #sdy.op_sharding_rule<([k, i])->([l, j]) {i=4, j=1, k=4, l=16} need_replication={i, j, k, l}>
  %0 = "stablehlo.all_to_all"(%x) <{concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<4x4xf32>) -> tensor<16x1xf32>
  return %0 : tensor<16x1xf32>
}

// -----

func.func @and(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.and: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.and"(%x, %x) : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @atan2(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.atan2: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.atan2"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @batch_norm_inference(%x: tensor<8x16x4xf32>, %s: tensor<4xf32>) -> tensor<8x16x4xf32> {
  // CHECK-LABEL: stablehlo.batch_norm_inference: #sdy.op_sharding_rule<([i, j, k], [k], [k], [k], [k])->([i, j, k]) {i=8, j=16, k=4}>
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 2 : i64} : (tensor<8x16x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x16x4xf32>
  return %0 : tensor<8x16x4xf32>
}

// -----

func.func @bitcast_convert(%x: tensor<8x4xf32>) -> tensor<8x4x4xui8> {
  // CHECK-LABEL: stablehlo.bitcast_convert: #sdy.op_sharding_rule<([i, j])->([i, j, k]) {i=8, j=4, k=4} need_replication={k}>
  %0 = stablehlo.bitcast_convert %x : (tensor<8x4xf32>) -> tensor<8x4x4xui8>
  return %0 : tensor<8x4x4xui8>
}

// -----

func.func @broadcast_in_dim(%x: tensor<8x1xf32>) -> tensor<2x8x4xf32> {
  // CHECK-LABEL: stablehlo.broadcast_in_dim: #sdy.op_sharding_rule<([j, k])->([i, j, l]) {i=2, j=8, k=1, l=4}>
  %0 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<8x1xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @cbrt(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.cbrt: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.cbrt"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @ceil(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.ceil: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.ceil"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @cholesky(%a: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  // CHECK-LABEL: stablehlo.cholesky: #sdy.op_sharding_rule<([i, j, k])->([i, j, k]) {i=4, j=8, k=8} need_replication={j, k}>
  %0 = stablehlo.cholesky %a, lower = true : tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// -----

func.func @clamp(%x: tensor<8x16xf32>, %s: tensor<f32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.clamp: #sdy.op_sharding_rule<([], [i, j], [])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.clamp %s, %x, %s : (tensor<f32>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @collective_broadcast(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-LABEL: stablehlo.collective_broadcast: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=4}>
  %0 = "stablehlo.collective_broadcast"(%x) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @collective_permute(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-LABEL: stablehlo.collective_permute: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=4}>
  %0 = "stablehlo.collective_permute"(%x) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @compare(%x: tensor<8x16xf32>) -> tensor<8x16xi1> {
  // CHECK-LABEL: stablehlo.compare: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.compare LT, %x, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
  return %0 : tensor<8x16xi1>
}

// -----

func.func @complex(%x: tensor<8x16xf32>) -> tensor<8x16xcomplex<f32>> {
  // CHECK-LABEL: stablehlo.complex: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.complex %x, %x : tensor<8x16xcomplex<f32>>
  return %0 : tensor<8x16xcomplex<f32>>
}

// -----

func.func @concatenate(%a: tensor<8x4xf32>, %b: tensor<8x12xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.concatenate: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16} need_replication={j}>
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<8x4xf32>, tensor<8x12xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @constant() -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.constant: no rule
  %0 = stablehlo.constant dense<1.0> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @convert(%x: tensor<8x16xf32>) -> tensor<8x16xbf16> {
  // CHECK-LABEL: stablehlo.convert: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.convert %x : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  return %0 : tensor<8x16xbf16>
}

// -----

func.func @convolution(%x: tensor<8x3x32x32xf32>, %k: tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32> {
  // CHECK-LABEL: stablehlo.convolution: #sdy.op_sharding_rule<([i, l, j, k], [m, l, n, o])->([i, m, j, k]) {i=8, j=32, k=32, l=3, m=16, n=1, o=1} reduction={l} permutation={j, k}>
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
  return %0 : tensor<8x16x32x32xf32>
}

// -----

func.func @cosine(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.cosine: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.cosine"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @count_leading_zeros(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.count_leading_zeros: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.count_leading_zeros"(%x) : (tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @custom_call(%x: tensor<16x8xf32>) {
  // CHECK-LABEL: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=16, j=8} need_replication={j} blocked_propagation={j}>
  %0:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 3 : i64}} : (tensor<16x8xf32>) -> (tensor<16x3xf32>, tensor<16x3xi32>)
  return
}

// -----

func.func @divide(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.divide: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.divide"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @dot(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x16xf32> {
  // CHECK-LABEL: stablehlo.dot: #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=16, k=8} reduction={k}>
  %0 = "stablehlo.dot"(%a, %b) : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @dot_general(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<4x8x32xf32> {
  // CHECK-LABEL: stablehlo.dot_general: #sdy.op_sharding_rule<([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=32, l=16} reduction={l}>
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

func.func @dynamic_slice(%x: tensor<8x16xf32>, %i: tensor<i32>) -> tensor<4x16xf32> {
  // CHECK-LABEL: stablehlo.dynamic_slice: #sdy.op_sharding_rule<([i, j], [], [])->([i, j]) {i=8, j=16} need_replication={i} blocked_propagation={i}>
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [4, 16] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @dynamic_update_slice(%x: tensor<8x16xf32>, %u: tensor<4x16xf32>, %i: tensor<i32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.dynamic_update_slice: #sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=8, j=4, k=16} need_replication={j}>
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @exponential(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.exponential: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.exponential"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @exponential_minus_one(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.exponential_minus_one: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.exponential_minus_one"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @fft(%x: tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>> {
  // CHECK-LABEL: stablehlo.fft: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=16} need_replication={j}>
  %0 = stablehlo.fft %x, type = FFT, length = [16] : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
  return %0 : tensor<4x16xcomplex<f32>>
}

// -----

func.func @floor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.floor: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.floor"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @gather(%x: tensor<8x16xf32>, %idx: tensor<4x1xi32>) -> tensor<4x16xf32> {
  // CHECK-LABEL: stablehlo.gather: #sdy.op_sharding_rule<([k, j], [i, l])->([i, j]) {i=4, j=16, k=8, l=1} reduction={k} need_replication={l}>
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<8x16xf32>, tensor<4x1xi32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @imag(%x: tensor<8x16xcomplex<f32>>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.imag: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.imag %x : (tensor<8x16xcomplex<f32>>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @iota() -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.iota: no rule
  %0 = stablehlo.iota dim = 0 : tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @is_finite(%x: tensor<8x16xf32>) -> tensor<8x16xi1> {
  // CHECK-LABEL: stablehlo.is_finite: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.is_finite"(%x) : (tensor<8x16xf32>) -> tensor<8x16xi1>
  return %0 : tensor<8x16xi1>
}

// -----

func.func @log(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.log: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.log"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @log_plus_one(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.log_plus_one: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.log_plus_one"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @logistic(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.logistic: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.logistic"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @maximum(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.maximum: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.maximum"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @minimum(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.minimum: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.minimum"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @multiply(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.multiply: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.multiply"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @negate(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.negate: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.negate"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @not(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.not: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.not"(%x) : (tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @optimization_barrier(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.optimization_barrier: no rule
  %0 = stablehlo.optimization_barrier %x : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @or(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.or: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.or"(%x, %x) : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @pad(%x: tensor<8x16xf32>, %z: tensor<f32>) -> tensor<11x16xf32> {
  // CHECK-LABEL: stablehlo.pad: #sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i}>
  %0 = stablehlo.pad %x, %z, low = [1, 0], high = [2, 0], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<11x16xf32>
  return %0 : tensor<11x16xf32>
}

// -----

func.func @popcnt(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.popcnt: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.popcnt"(%x) : (tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @power(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.power: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.power"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @real(%x: tensor<8x16xcomplex<f32>>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.real: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.real %x : (tensor<8x16xcomplex<f32>>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @reduce(%x: tensor<8x16x4xf32>, %z: tensor<f32>) -> tensor<8x4xf32> {
  // CHECK-LABEL: stablehlo.reduce: #sdy.op_sharding_rule<([i, j, k], [])->([i, k]) {i=8, j=16, k=4} reduction={j}>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @reduce_precision(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.reduce_precision: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.reduce_precision %x, format = e5m10 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @reduce_scatter(%x: tensor<4x4xf32>) -> tensor<4x1xf32> {
  // CHECK-LABEL: stablehlo.reduce_scatter: #sdy.op_sharding_rule<([i, j])->([i, k]) {i=4, j=4, k=1} need_replication={j, k}>
  %0 = "stablehlo.reduce_scatter"(%x) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 1 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_window(%x: tensor<8x16x16x4xf32>, %z: tensor<f32>) -> tensor<8x8x8x4xf32> {
  // CHECK-LABEL: stablehlo.reduce_window: #sdy.op_sharding_rule<([i, j, k, l], [])->([i, j, k, l]) {i=8, j=8, k=8, l=4} permutation={j, k}>
  %0 = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x16x16x4xf32>, tensor<f32>) -> tensor<8x8x8x4xf32>
  return %0 : tensor<8x8x8x4xf32>
}

// -----

func.func @remainder(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.remainder: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.remainder"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @reshape(%x: tensor<6x4xf32>) -> tensor<4x6xf32> {
  // CHECK-LABEL: stablehlo.reshape: #sdy.op_sharding_rule<([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}>
  %0 = stablehlo.reshape %x : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @reverse(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.reverse: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i}>
  %0 = stablehlo.reverse %x, dims = [0] : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @rng_bit_generator(%s: tensor<2xui64>) {
  // CHECK-LABEL: stablehlo.rng_bit_generator: #sdy.op_sharding_rule<([i])->([i], [j, k]) {i=2, j=8, k=16} need_replication={i} blocked_propagation={i}>
  %0:2 = "stablehlo.rng_bit_generator"(%s) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<8x16xui32>)
  return
}

// -----

func.func @round_nearest_afz(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.round_nearest_afz: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.round_nearest_afz"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @round_nearest_even(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.round_nearest_even: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.round_nearest_even"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @rsqrt(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.rsqrt: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.rsqrt"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @scatter(%x: tensor<8x16xf32>, %idx: tensor<4x1xi32>, %u: tensor<4x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=4, j=16, k=8, l=1} reduction={i} need_replication={l}>
  %0 = "stablehlo.scatter"(%x, %idx, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x16xf32>, tensor<4x1xi32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @select(%x: tensor<8x16xf32>, %p: tensor<i1>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.select: #sdy.op_sharding_rule<([], [i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.select %p, %x, %x : tensor<i1>, tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @select_and_scatter(%x: tensor<8x16x16x4xf32>, %s0: tensor<8x8x8x4xf32>, %z: tensor<f32>) -> tensor<8x16x16x4xf32> {
  // CHECK-LABEL: stablehlo.select_and_scatter: #sdy.op_sharding_rule<([i, k, m, n], [i, j, l, n], [])->([i, k, m, n]) {i=8, j=8, k=16, l=8, m=16, n=4} need_replication={j, l} permutation={k, m}>
  %0 = "stablehlo.select_and_scatter"(%x, %s0, %z) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
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

// -----

func.func @shift_left(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.shift_left: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.shift_left"(%x, %x) : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @shift_right_arithmetic(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.shift_right_arithmetic: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.shift_right_arithmetic"(%x, %x) : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @shift_right_logical(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.shift_right_logical: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.shift_right_logical"(%x, %x) : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}

// -----

func.func @sign(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.sign: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.sign"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sine(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.sine: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.sine"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @slice(%x: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK-LABEL: stablehlo.slice: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i}>
  %0 = stablehlo.slice %x [2:6, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @sort(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.sort: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j}>
  %0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sqrt(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.sqrt: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.sqrt"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @subtract(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.subtract: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.subtract"(%x, %x) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @tan(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.tan: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.tan"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @tanh(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.tanh: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.tanh"(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @transpose(%x: tensor<2x4x8xf32>) -> tensor<8x2x4xf32> {
  // CHECK-LABEL: stablehlo.transpose: #sdy.op_sharding_rule<([j, k, i])->([i, j, k]) {i=8, j=2, k=4}>
  %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x4x8xf32>) -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

func.func @triangular_solve(%a: tensor<4x8x8xf32>, %b: tensor<4x8x5xf32>) -> tensor<4x8x5xf32> {
  // CHECK-LABEL: stablehlo.triangular_solve: #sdy.op_sharding_rule<([i, j, l], [i, j, k])->([i, l, k]) {i=4, j=8, k=5, l=8} need_replication={j, k, l}>
  %0 = "stablehlo.triangular_solve"(%a, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x8x8xf32>, tensor<4x8x5xf32>) -> tensor<4x8x5xf32>
  return %0 : tensor<4x8x5xf32>
}

// -----

func.func @xor(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK-LABEL: stablehlo.xor: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = "stablehlo.xor"(%x, %x) : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
  return %0 : tensor<8x16xi32>
}