// RUN: shardc opt --split-input-file --pass-pipeline=apply-sharding-constraints %s | filecheck %s
// `apply-sharding-constraints`: a fully closed constraint shards its unsharded input
// (docs/propagation.md §7.2), unless another use of the input asks for something else.

// CHECK-LABEL: module
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-NEXT: sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @closed(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// An open dim: the constraint is not applied to its input.
// CHECK-LABEL: module
// CHECK: %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @open(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x", ?}, {}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Two closed constraints that disagree on one input: neither is applied.
// CHECK-LABEL: module
// CHECK: %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @clash(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  %2 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
  return %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>
}
