// RUN: not shardc opt %s 2>&1 | filecheck %s
// CHECK: error: {{.*}}unknown_axis.mlir:5:{{[0-9]+}}: {{.*}}unknown axis name: "q"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"q"}, {}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
