// RUN: shardc propagate --split-input-file --explain %s -o /dev/null 2>&1 | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Each func numbers its values from zero: a private callee's values name their func, so
// "%arg0" of @helper is not mistaken for @main's.
// CHECK-LABEL: explain: %0 = func.call ({{.*}}explain_callee.mlir:{{[0-9]+}}:8) dim 0 {"x"} <- %arg0 (annotation
// CHECK: explain: %arg0 in @helper dim 0 {"x"} <- %arg0 (annotation, p0, op-priority 0) via func.call
// CHECK-NEXT: explain: %0 = stablehlo.negate ({{.*}}explain_callee.mlir:{{[0-9]+}}:8) in @helper dim 0 {"x"} <- %arg0
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = call @helper(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func private @helper(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
