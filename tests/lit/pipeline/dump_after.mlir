// RUN: shardc propagate --dump-after verify --dump-after propagate %s -o /dev/null 2>&1 | filecheck %s
// RUN: shardc propagate --dump-after all %s -o /dev/null 2>&1 | filecheck %s --check-prefix=ALL
// RUN: not shardc propagate --dump-after nonesuch %s 2>&1 | filecheck %s --check-prefix=BAD
// `--dump-after PASS` prints the module after that pass of the pipeline, as MLIR's IR dumps do:
// after verify nothing has moved; after propagate the open dims are still open (the export
// closes them).
// CHECK: // -----// IR Dump After verify //----- //
// CHECK: %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
// CHECK: // -----// IR Dump After propagate //----- //
// CHECK: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>}
// CHECK-NOT: IR Dump After
// ALL: IR Dump After verify
// ALL-NEXT: module
// ALL: IR Dump After check-manual-shapes
// ALL: IR Dump After check-partition-id
// ALL: IR Dump After check-replication
// ALL: IR Dump After propagate
// ALL: IR Dump After export
// ALL: sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>
// BAD: error: --dump-after: no pass named 'nonesuch'; name one of: verify, {{.*}}, export, pin, all

sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @negate(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
