// RUN: shardc rules --split-input-file %s | filecheck %s
// reshape: compound factors from Shardy's walk over both shapes (docs/op_rules.md §3.2).

func.func @reshape(%a: tensor<2x4x32xf32>, %b: tensor<8x32xf32>, %c: tensor<8x4xf32>, %d: tensor<6x4xf32>) -> tensor<8x32xf32> {
  // CHECK-LABEL: stablehlo.reshape: #sdy.op_sharding_rule<([i, j, k])->([ij, k]) {i=2, j=4, k=32}>
  %0 = stablehlo.reshape %a : (tensor<2x4x32xf32>) -> tensor<8x32xf32>
  // CHECK-NEXT: stablehlo.reshape: #sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=2, j=4, k=32}>
  %1 = stablehlo.reshape %b : (tensor<8x32xf32>) -> tensor<2x4x32xf32>
  // CHECK-NEXT: stablehlo.reshape: #sdy.op_sharding_rule<([ij, k])->([i, jk]) {i=2, j=4, k=4}>
  %2 = stablehlo.reshape %c : (tensor<8x4xf32>) -> tensor<2x16xf32>
  // CHECK-NEXT: stablehlo.reshape: #sdy.op_sharding_rule<([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}>
  %3 = stablehlo.reshape %d : (tensor<6x4xf32>) -> tensor<4x6xf32>
  // Unit dims get their own size-1 factors.
  // CHECK-NEXT: stablehlo.reshape: #sdy.op_sharding_rule<([j, l])->([i, j, k, l]) {i=1, j=8, k=1, l=4}>
  %4 = stablehlo.reshape %c : (tensor<8x4xf32>) -> tensor<1x8x1x4xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A reshape of a 0-element tensor has no rule.
func.func @empty(%a: tensor<0x4xf32>) -> tensor<4x0xf32> {
  // CHECK-LABEL: stablehlo.reshape: no rule
  %0 = stablehlo.reshape %a : (tensor<0x4xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
