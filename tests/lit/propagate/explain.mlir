// RUN: shardc propagate --split-input-file --explain %s -o /dev/null 2>&1 | filecheck %s
// RUN: shardc propagate --split-input-file --explain %s | filecheck --check-prefix=OUT %s

// `--explain` prints, on stderr, one line per dim that propagation decided: the value (named as
// in the output) with its op and location, the dim, its axes, the annotation they trace back to
// and the round (user priority pN, op-priority level); `via OP` when another op wrote them.
// Nothing but the explanation changes: the output is the same as without the flag.

// A dot of two annotated arguments: each result dim comes from one argument, in op-priority 2
// (dots wait for the pass-through ops); the add before it reads %arg0 twice, so it waits for
// level 1 (element-wise ops with a multi-use operand).
// CHECK: note: rounds: p0 op-priority 0, p0 op-priority 1, p0 op-priority 2, p0 op-priority 3, p0 op-priority 4
// CHECK: explain: %0 = stablehlo.add ({{.*}}explain.mlir:{{[0-9]+}}:8) dim 0 {"x"} <- %arg0 (annotation, p0, op-priority 1)
// CHECK-NEXT: explain: %1 = stablehlo.dot_general ({{.*}}explain.mlir:{{[0-9]+}}:8) dim 0 {"x"} <- %arg0 (annotation, p0, op-priority 2)
// CHECK-NEXT: explain: %1 = stablehlo.dot_general ({{.*}}explain.mlir:{{[0-9]+}}:8) dim 1 {"y"} <- %arg1 (annotation, p0, op-priority 2)
// CHECK-NEXT: explain: @dot_chain result 0 dim 0 {"x"} <- %arg0 (annotation, p0, op-priority 2) via func.return
// CHECK-NEXT: explain: @dot_chain result 0 dim 1 {"y"} <- %arg1 (annotation, p0, op-priority 2) via func.return
// OUT-LABEL: func.func @dot_chain(
// OUT: -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dot_chain(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                     %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Backward: the negate gets "y" from the (open, so not copied onto its input) constraint on its
// user, written by the constraint, and the argument gets it through the negate.
// CHECK: explain: %arg0 dim 1 {"y"} <- %1 (annotation, p0, op-priority 0) via stablehlo.negate ({{.*}}explain.mlir:{{[0-9]+}}:8)
// CHECK-NEXT: explain: %0 = stablehlo.negate ({{.*}}explain.mlir:{{[0-9]+}}:8) dim 1 {"y"} <- %1 (annotation, p0, op-priority 0) via sdy.sharding_constraint ({{.*}}explain.mlir:{{[0-9]+}}:8)
// CHECK-NEXT: explain: @backward result 0 dim 1 {"y"} <- %1 (annotation, p0, op-priority 0) via func.return
// OUT-LABEL: func.func @backward(
// OUT-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @backward(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"y", ?}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// User priorities: the p1 dim of %arg1 propagates in round p1, after p0 has decided dim 0.
// CHECK: explain: %0 = stablehlo.add ({{.*}}explain.mlir:{{[0-9]+}}:8) dim 0 {"x"} <- %arg0 (annotation, p0, op-priority 0)
// CHECK-NEXT: explain: %0 = stablehlo.add ({{.*}}explain.mlir:{{[0-9]+}}:8) dim 1 {"y"} <- %arg1 (annotation, p1, op-priority 0)
// OUT-LABEL: func.func @priorities(
// OUT: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @priorities(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p0, {}]>},
                      %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y"}p1]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
