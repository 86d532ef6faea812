// RUN: shardc opt --split-input-file --pass-pipeline=split-constants %s | filecheck %s
// RUN: shardc propagate --split-input-file %s | filecheck %s --check-prefix=MERGED
// `split-constants` (Shardy's sdy-constant-or-scalar-splitter, checked against jaxlib 0.10.2's):
// every user of a constant expression but the first gets its own copy of the whole expression
// (scalars stay shared), marked `shardc.split_copy` right after what it copies; after propagation
// `merge-constants` folds a copy back where it got the layout of what it copies (as Shardy's
// constant merger); one whose use was given another layout stays, unmarked.

// A constant chain used twice: the second use gets a copy of the broadcast and of the constant.
// CHECK-LABEL: module
// CHECK: %cst = stablehlo.constant dense<1.000000e+00> : tensor<16xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant {shardc.split_copy} dense<1.000000e+00> : tensor<16xf32>
// CHECK-NEXT: %0 = stablehlo.broadcast_in_dim %cst, dims = [1] :
// CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %cst_0, dims = [1] {shardc.split_copy} :
// CHECK-NEXT: %2 = stablehlo.add %arg0, %0 :
// CHECK-NEXT: %3 = stablehlo.multiply %arg1, %1 :
// MERGED-LABEL: func.func @chain(
// MERGED-NEXT: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} dense<1.000000e+00> : tensor<16xf32>
// MERGED-NEXT: %cst_0 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} dense<1.000000e+00> : tensor<16xf32>
// MERGED-NEXT: %0 = stablehlo.broadcast_in_dim %cst, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// MERGED-NEXT: %1 = stablehlo.broadcast_in_dim %cst_0, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// MERGED-NEXT: %2 = stablehlo.add %arg0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// MERGED-NEXT: %3 = stablehlo.multiply %arg1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// MERGED-NEXT: return %2, %3
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @chain(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<16xf32>
  %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %b : tensor<8x16xf32>
  %1 = stablehlo.multiply %arg1, %b : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A broadcast of a scalar is copied per use; the scalar itself is shared.
// CHECK-LABEL: module
// CHECK: %0 = stablehlo.broadcast_in_dim %arg2, dims = [] :
// CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %arg2, dims = [] {shardc.split_copy} :
// CHECK-NEXT: %2 = stablehlo.add %arg0, %0 :
// CHECK-NEXT: %3 = stablehlo.add %arg1, %1 :
// MERGED-LABEL: func.func @scalar(
// MERGED-NEXT: %0 = stablehlo.broadcast_in_dim %arg2, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// MERGED-NEXT: %1 = stablehlo.broadcast_in_dim %arg2, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// MERGED-NEXT: %2 = stablehlo.add %arg0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// MERGED-NEXT: %3 = stablehlo.add %arg1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @scalar(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %s: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %b : tensor<8x16xf32>
  %1 = stablehlo.add %arg1, %b : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A return is a user like any other: the returned iota is a copy, so the add's layout does not
// reach the func result.
// CHECK-LABEL: module
// CHECK: %0 = stablehlo.iota dim = 0 :
// CHECK-NEXT: %1 = stablehlo.iota dim = 0 {shardc.split_copy} :
// CHECK-NEXT: %2 = stablehlo.add %arg0, %0 :
// CHECK-NEXT: return %2, %1 :
// MERGED-LABEL: func.func @returned(
// MERGED-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// MERGED-NEXT: %0 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// MERGED-NEXT: %1 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
// MERGED-NEXT: %2 = stablehlo.add %arg0, %0
// MERGED-NEXT: return %2, %1 :
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @returned(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.iota dim = 0 : tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8x16xf32>
  return %0, %c : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A value that is not a constant expression is not copied, nor is a constraint's result (a
// constraint is not constant-preserving: Shardy splits only its operand's users).
// CHECK-LABEL: module
// CHECK: %0 = stablehlo.negate %arg0 :
// CHECK-NEXT: %1 = stablehlo.add %0, %0 :
// CHECK-NOT: split_copy
// CHECK-LABEL: func.func @constrained(
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> :
// CHECK-NEXT: %0 = sdy.sharding_constraint %cst
// CHECK-NEXT: %1 = stablehlo.add %arg0, %0 :
// CHECK-NEXT: %2 = stablehlo.add %arg1, %0 :
// CHECK-NOT: split_copy
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @not_constant(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.add %0, %0 : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func @constrained(%arg0: tensor<8x16xf32>, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<8x16xf32>
  %k = sdy.sharding_constraint %c <@mesh, [{"x", ?}, {?}]> : tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %k : tensor<8x16xf32>
  %1 = stablehlo.add %arg1, %k : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A copy joins the sharding groups of what it copies (Shardy clones the group ops along); the
// merge drops the copied group op.
// CHECK-LABEL: module
// CHECK: %0 = stablehlo.exponential %cst :
// CHECK-NEXT: %1 = stablehlo.exponential %cst_0 {shardc.split_copy} :
// CHECK-NEXT: sdy.sharding_group %1 group_id=0 {shardc.split_copy} :
// CHECK-NEXT: sdy.sharding_group %0 group_id=0 :
// CHECK-NEXT: %2 = stablehlo.add %arg0, %0 :
// CHECK-NEXT: return %2, %1 :
// MERGED-LABEL: func.func @grouped(
// MERGED-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// MERGED-NEXT: %cst = stablehlo.constant
// MERGED-NEXT: %0 = stablehlo.exponential %cst
// MERGED-NEXT: sdy.sharding_group %0 group_id=0 :
// MERGED-NEXT: %1 = stablehlo.add %arg0, %0
// MERGED-NEXT: return %1, %0 :
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @grouped(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<8x16xf32>
  %e = stablehlo.exponential %c : tensor<8x16xf32>
  sdy.sharding_group %e group_id=0 : tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %e : tensor<8x16xf32>
  return %0, %e : tensor<8x16xf32>, tensor<8x16xf32>
}
