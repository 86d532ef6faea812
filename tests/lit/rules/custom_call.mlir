// RUN: shardc rules --split-input-file %s | filecheck %s
// custom_call (docs/op_rules.md §3.8): a rule on the op wins; then the known targets; else no rule.

func.func @known_targets(%x: tensor<16x8xf32>, %m: tensor<4x8x8xf32>, %t: tensor<4x8xf32>, %a: tensor<8x128xf32>, %z: tensor<f32>, %zi: tensor<i32>) -> tensor<16x8xf32> {
  // CHECK-LABEL: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=8}>
  %0 = stablehlo.custom_call @MoveToHost(%x) : (tensor<16x8xf32>) -> tensor<16x8xf32>
  // CHECK-NEXT: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j, k])->([i, j, k], [i, k]) {i=4, j=8, k=8}>
  %1:2 = stablehlo.custom_call @Eigh(%m) : (tensor<4x8x8xf32>) -> (tensor<4x8x8xf32>, tensor<4x8xf32>)
  // CHECK-NEXT: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j, k])->([i, j, k], [i, l]) {i=4, j=8, k=8, l=8} need_replication={j, k, l}>
  %2:2 = stablehlo.custom_call @Qr(%m) : (tensor<4x8x8xf32>) -> (tensor<4x8x8xf32>, tensor<4x8xf32>)
  // CHECK-NEXT: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j, k], [i, l])->([i, j, k]) {i=4, j=8, k=8, l=8} need_replication={j, k, l}>
  %3 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%m, %t) : (tensor<4x8x8xf32>, tensor<4x8xf32>) -> tensor<4x8x8xf32>
  // CHECK-NEXT: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=16, j=8} need_replication={j} blocked_propagation={j}>
  %4:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.attributes = {k = 3 : i64}} : (tensor<16x8xf32>) -> (tensor<16x3xf32>, tensor<16x3xi32>)
  // CHECK-NEXT: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j], [i, j], [], [])->([i, k], [i, k]) {i=8, j=128, k=4} need_replication={k} blocked_propagation={k}>
  %5:2 = stablehlo.custom_call @ApproxTopK(%a, %a, %z, %zi) : (tensor<8x128xf32>, tensor<8x128xf32>, tensor<f32>, tensor<i32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
  return %0 : tensor<16x8xf32>
}

// -----

func.func @attached_and_unknown(%x: tensor<2x8x16xf32>, %y: tensor<2x16x4xf32>) -> tensor<2x8x4xf32> {
  // A rule attached to the op wins (as jax.experimental.custom_partitioning lowers it).
  // CHECK-LABEL: stablehlo.custom_call: #sdy.op_sharding_rule<([i, j, k], [i, k, l])->([i, j, l]) {i=2, j=8, k=16, l=4}, custom>
  %0 = stablehlo.custom_call @CustomSPMDPartitioning(%x, %y) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, k, l])->([i, j, l]) {i=2, j=8, k=16, l=4}, custom>} : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
  // Unknown targets and the explicitly rule-less callbacks get no rule.
  // CHECK-NEXT: stablehlo.custom_call: no rule
  %1 = stablehlo.custom_call @my_kernel(%x) : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  // CHECK-NEXT: stablehlo.custom_call: no rule
  %2 = stablehlo.custom_call @xla_python_cpu_callback(%x) : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// chlo.top_k, which JAX emits for lax.top_k, gets mhlo.topk's rule: XLA converts it to
// mhlo.topk before its own Shardy run (the standalone pipeline has no rule for it).
func.func @chlo_top_k(%x: tensor<16x8xf32>) -> tensor<16x3xf32> {
  // CHECK-LABEL: chlo.top_k: #sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=16, j=8} need_replication={j} blocked_propagation={j}>
  %v, %i = chlo.top_k(%x, k = 3) : tensor<16x8xf32> -> (tensor<16x3xf32>, tensor<16x3xi32>)
  return %v : tensor<16x3xf32>
}
