// RUN: shardc propagate %s | filecheck %s --check-prefix=DEFAULT
// RUN: shardc propagate --conservative %s | filecheck %s --check-prefix=CONS
// `--conservative` (Shardy's conservative-propagation): nothing moves along a permutation
// factor. The sliced dim of a slice is one; the other dim is pass-through and still propagates.

// DEFAULT-LABEL: func.func @slice(
// DEFAULT-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
// DEFAULT: stablehlo.slice %arg0 [0:4, 0:16] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CONS-LABEL: func.func @slice(
// CONS-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CONS: stablehlo.slice %arg0 [0:4, 0:16] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @slice(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<4x16xf32> {
  %0 = stablehlo.slice %arg0 [0:4, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
