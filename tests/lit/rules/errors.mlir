// RUN: not shardc rules --split-input-file %s 2>&1 | filecheck %s
// A rule attached to an op is checked (here by jaxlib's verifier, with its source location).

// CHECK: error: {{.*}}errors.mlir:6:8: 'stablehlo.custom_call' op has factor j=2 that isn't used in operand and result mappings
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @foo(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8, j=2}>} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
