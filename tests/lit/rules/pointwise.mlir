// RUN: shardc rules --split-input-file %s | filecheck %s
// Element-wise ops and their relatives (docs/op_rules.md §3.1).

func.func @add(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // CHECK-LABEL: stablehlo.add: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4}>
  %0 = stablehlo.add %a, %b : tensor<8x4xf32>
  // CHECK-NEXT: stablehlo.tanh: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  // CHECK-NEXT: stablehlo.compare: #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4}>
  %2 = stablehlo.compare GT, %0, %1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>
  // CHECK-NEXT: stablehlo.select: #sdy.op_sharding_rule<([i, j], [i, j], [i, j])->([i, j]) {i=8, j=4}>
  %3 = stablehlo.select %2, %0, %1 : tensor<8x4xi1>, tensor<8x4xf32>
  // CHECK-NEXT: stablehlo.convert: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>
  %4 = stablehlo.convert %3 : (tensor<8x4xf32>) -> tensor<8x4xbf16>
  return %3 : tensor<8x4xf32>
}

// -----

// Scalar operands get `[]`.
func.func @scalar_operands(%p: tensor<i1>, %x: tensor<8x16xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: stablehlo.select: #sdy.op_sharding_rule<([], [i, j], [i, j])->([i, j]) {i=8, j=16}>
  %0 = stablehlo.select %p, %x, %x : tensor<i1>, tensor<8x16xf32>
  // CHECK-NEXT: stablehlo.clamp: #sdy.op_sharding_rule<([], [i, j], [])->([i, j]) {i=8, j=16}>
  %1 = stablehlo.clamp %lo, %0, %hi : (tensor<f32>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  // An all-scalar op has no factors.
  // CHECK-NEXT: stablehlo.add: #sdy.op_sharding_rule<([], [])->([])>
  %2 = stablehlo.add %lo, %hi : tensor<f32>
  return %1 : tensor<8x16xf32>
}

// -----

// bitcast_convert to a narrower type adds a minor dim that needs replication.
func.func @bitcast(%x: tensor<8x4xf32>, %y: tensor<8x4x4xui8>) -> tensor<8x4x4xui8> {
  // CHECK-LABEL: stablehlo.bitcast_convert: #sdy.op_sharding_rule<([i, j])->([i, j, k]) {i=8, j=4, k=4} need_replication={k}>
  %0 = stablehlo.bitcast_convert %x : (tensor<8x4xf32>) -> tensor<8x4x4xui8>
  // CHECK-NEXT: stablehlo.bitcast_convert: #sdy.op_sharding_rule<([i, j, k])->([i, j]) {i=8, j=4, k=4} need_replication={k}>
  %1 = stablehlo.bitcast_convert %y : (tensor<8x4x4xui8>) -> tensor<8x4xf32>
  // CHECK-NEXT: stablehlo.bitcast_convert: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>
  %2 = stablehlo.bitcast_convert %x : (tensor<8x4xf32>) -> tensor<8x4xi32>
  return %0 : tensor<8x4x4xui8>
}

// -----

// Scale, offset, mean and variance map to the feature dim.
func.func @batch_norm(%x: tensor<8x16x4xf32>, %s: tensor<4xf32>) -> tensor<8x16x4xf32> {
  // CHECK-LABEL: stablehlo.batch_norm_inference: #sdy.op_sharding_rule<([i, j, k], [k], [k], [k], [k])->([i, j, k]) {i=8, j=16, k=4}>
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 2 : i64} : (tensor<8x16x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x16x4xf32>
  return %0 : tensor<8x16x4xf32>
}

// -----

func.func @constraint(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-LABEL: sdy.sharding_constraint: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>
  %0 = sdy.sharding_constraint %x <mesh<["x"=4]>, [{"x"}, {}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
