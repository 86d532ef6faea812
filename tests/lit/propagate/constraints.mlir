// RUN: shardc propagate %s | filecheck %s
// Golden cases from reference/propagation.md (Shardy's sdy-propagation-pipeline, jaxlib 0.10.2);
// the CHECK lines are the exported form of the shardings Shardy chooses.
// Constraints stay sdy.sharding_constraint (Shardy's own output has sdy.reshard, which XLA rejects).

sdy.mesh @mesh = <["x"=4, "y"=2]>

// G17: a closed constraint is copied onto its input and flows back to the argument
// CHECK-LABEL: func.func @g17_closed(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %2 : tensor<8x16xf32>
func.func @g17_closed(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  %2 = stablehlo.tanh %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// G18: an open constraint is an element-wise op that both directions extend
// CHECK-LABEL: func.func @g18_open(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %2 : tensor<8x16xf32>
func.func @g18_open(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x", ?}, {?}]> : tensor<8x16xf32>
  %2 = stablehlo.tanh %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// G19: two disagreeing constraints are not applied but both reach %0
// CHECK-LABEL: func.func @g19_two_different(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: %3 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: %4 = stablehlo.exponential %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
// CHECK-NEXT: return %3, %4 : tensor<8x16xf32>, tensor<8x16xf32>
func.func @g19_two_different(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
  %2 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
  %3 = stablehlo.tanh %1 : tensor<8x16xf32>
  %4 = stablehlo.exponential %2 : tensor<8x16xf32>
  return %3, %4 : tensor<8x16xf32>, tensor<8x16xf32>
}

// G42: a 6-row "x" reaches the I/O open and is cut away on export
// CHECK-LABEL: func.func @g42_non_divisible(
// CHECK-SAME: %arg0: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
// CHECK-SAME: -> (tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<6x16xf32>
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<6x16xf32>
// CHECK-NEXT: %2 = stablehlo.exponential %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<6x16xf32>
// CHECK-NEXT: return %2 : tensor<6x16xf32>
func.func @g42_non_divisible(%arg0: tensor<6x16xf32>) -> tensor<6x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<6x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<6x16xf32>
  %2 = stablehlo.exponential %1 : tensor<6x16xf32>
  return %2 : tensor<6x16xf32>
}
