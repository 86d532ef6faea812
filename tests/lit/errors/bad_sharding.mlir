// RUN: not shardc opt %s 2>&1 | filecheck %s
// A sub-axis that does not divide its axis is reported on one line with its location.

// CHECK: error: {{.*}}bad_sharding.mlir:8:3: {{.*}}sub-axis next pre-size 6 doesn't divide the size of the full axis 8: "d":(3)2
// CHECK-NOT: Traceback
sdy.mesh @mesh = <["d"=8]>

  func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d":(3)2}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
