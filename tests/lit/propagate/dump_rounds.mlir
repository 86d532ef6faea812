// RUN: shardc propagate --dump-rounds %s -o /dev/null 2>&1 | filecheck %s
// RUN: shardc propagate --dump-rounds %s | filecheck --check-prefix=OUT %s
// `--dump-rounds`: every value's sharding after import and after every round; open dims (`?`)
// are still open here, the export closes them.
// CHECK: dump: after import:
// CHECK: dump: after p0 op-priority 0:
// CHECK-NEXT: dump:   %arg0: <@mesh, [{"x"}, {}]>
// CHECK-NEXT: dump:   %arg1: <@mesh, [{}, {"y"}]>
// CHECK-NEXT: dump:   %0 = stablehlo.negate ({{.*}}dump_rounds.mlir:{{[0-9]+}}:8): <@mesh, [{"x", ?}, {?}]>
// CHECK-NEXT: dump: after p0 op-priority 1:
// CHECK: dump: after p0 op-priority 2:
// CHECK: dump:   %1 = stablehlo.dot_general ({{.*}}dump_rounds.mlir:{{[0-9]+}}:8): <@mesh, [{"x", ?}, {"y", ?}]>
// CHECK: dump: after p0 op-priority 4:
// CHECK: dump:   @dot_chain result 0: <@mesh, [{"x", ?}, {"y", ?}]>
// CHECK-NOT: after

sdy.mesh @mesh = <["x"=4, "y"=2]>

// OUT-LABEL: func.func @dot_chain(
// OUT: -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
func.func @dot_chain(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                     %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
