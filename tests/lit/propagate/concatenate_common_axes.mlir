// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: shardc propagate --split-input-file --keep-open %s | filecheck %s --check-prefix=OPEN

// Shardy's pipeline ends with explicit reshards: a concatenate whose operands do not all have
// its result's sharding is computed at the common axes of operands and result, and its result
// takes them (a reshard after it restores the old layout for the users). Every CHECK below is
// the concatenate's sharding in jaxlib 0.10.2's `sdy-propagation-pipeline` output.

// Operands on X and Y, result replicated by propagation: Shardy computes the concat on X.
// CHECK-LABEL: func.func @operands_differ(
// CHECK: stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"X"}, {}]>]>}
// CHECK: stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// OPEN-LABEL: func.func @operands_differ(
// OPEN: stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @operands_differ(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.negate %0 : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}

// -----

// Operands and result all on X along the concat dim: kept as is (Shardy skips this case).
// CHECK-LABEL: func.func @all_match_concat_dim(
// CHECK: stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"X"}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @all_match_concat_dim(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"X"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"X"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Operands on X along the concat dim, result on Y: the concat dim's X moves to dim 0 after Y.
// CHECK-LABEL: func.func @concat_dim_axis_moves(
// CHECK: stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y", "X"}, {}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @concat_dim_axis_moves(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {"X"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"X"}]>}) -> (tensor<8x24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {}]>}) {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
  return %0 : tensor<8x24xf32>
}

// -----

// The result's own sharding is already the common choice: kept.
// CHECK-LABEL: func.func @result_is_common(
// CHECK: stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"Y"}, {}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @result_is_common(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {}]>}, %arg1: tensor<8x16xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x32xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"Y"}, {}]> : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}

// -----

// Three operands (one unsharded) along dim 0: the common axes are the non-concat dim's X, Y.
// CHECK-LABEL: func.func @three_operands(
// CHECK: stablehlo.concatenate %arg0, %arg1, %arg2, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"X", "Y"}]>]>}
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func @three_operands(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {"X"}]>}, %arg2: tensor<16x8xf32>) -> tensor<48x8xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 0 : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<48x8xf32>
  return %0 : tensor<48x8xf32>
}

// -----

// The barrier's result has a closed constraint: Shardy sends its other uses, the concat's
// operand too, through that constraint, so the concat reads [{"X", "Y"}, {}], not the
// barrier's [{"Y", "X"}, {}]; with the other operand on Y the common axes put X on dim 1.
// CHECK-LABEL: func.func @redirected_operand(
// CHECK: stablehlo.concatenate %arg1, %0, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"X"}]>]>}
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @redirected_operand(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y", "X"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {}]>}) -> (tensor<16x4xf32>, tensor<8x4xf32>) {
  %0 = stablehlo.optimization_barrier %arg0 : tensor<8x4xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"X", "Y"}, {}]> : tensor<8x4xf32>
  %2 = stablehlo.concatenate %arg1, %0, dim = 0 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %2, %1 : tensor<16x4xf32>, tensor<8x4xf32>
}

// -----

// One operand is a constraint's result, the other that constraint's redirected input: both
// read the constraint's [{"X"}, {"Y"}] (a constraint's result holds the constraint's
// sharding), so every operand matches the result and the concat keeps it.
// CHECK-LABEL: func.func @constraint_and_its_redirected_input(
// CHECK: stablehlo.concatenate %1, %0, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"X"}, {"Y"}]>]>}
sdy.mesh @mesh = <["X"=2, "Y"=4]>
func.func @constraint_and_its_redirected_input(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X", "Y"}, {}]>}) -> tensor<32x16xf32> {
  %0 = stablehlo.optimization_barrier %arg0 : tensor<16x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"X"}, {"Y"}]> : tensor<16x16xf32>
  %2 = stablehlo.concatenate %1, %0, dim = 0 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
  return %2 : tensor<32x16xf32>
}
