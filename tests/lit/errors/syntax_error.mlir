// RUN: not shardc opt %s -o %t.out 2>&1 | filecheck %s
// RUN: not test -e %t.out
// A syntax error names file:line:col, is one line, and no output file is written.

// CHECK: error: {{.*}}syntax_error.mlir:9:{{[0-9]+}}:
// CHECK-NOT: Traceback
sdy.mesh @mesh = <["x"=4]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, : tensor<8xf32>
  return %0 : tensor<8xf32>
}
