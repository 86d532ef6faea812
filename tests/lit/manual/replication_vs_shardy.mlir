// RUN: not shardc propagate %s 2>&1 | filecheck %s --check-prefix=CHECKED
// RUN: shardc propagate --no-check-replication %s | filecheck %s
// shardc refuses a shard_map region whose output varies along a manual axis its out_sharding
// promises replicated (JAX's check_vma); Shardy has no such check and propagates. With
// --no-check-replication (check_vma=False) shardc propagates exactly as Shardy does (checked
// against jaxlib 0.10.2): a deliberate difference, docs/shardy_differences.md.

// CHECKED: error: {{.*}}result 0 of sdy.manual_computation (manual_axes={"x"}) {{.*}}may differ across devices along manual axis "x"
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CHECK-NEXT: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"x"}
// CHECK-NEXT: stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK-NEXT: stablehlo.concatenate %1, %1, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{}, {?}], replicated={"x"}>] manual_axes={"x"} (%a: tensor<4x16xf32>) {
    %1 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y", ?}]>]>} : tensor<4x16xf32>
    %2 = stablehlo.concatenate %1, %1, dim = 0 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    sdy.return %2 : tensor<8x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
