// RUN: shardc propagate --split-input-file %s | filecheck %s

// sdy.reshard has no rule: nothing propagates through it, its result has its own sharding, and
// the export writes it as a closed sdy.sharding_constraint (XLA, through jaxlib, rejects
// sdy.reshard). Checked value by value against sdy-propagation-pipeline.

// CHECK-LABEL: func.func @reshard_is_a_wall(
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CHECK-NEXT: %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// CHECK-NOT: sdy.reshard
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reshard_is_a_wall(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
  %1 = sdy.reshard %0 <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
  %2 = stablehlo.negate %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @backward_stops_at_reshard(
// The result's "y" does not cross the reshard back to %arg0.
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @backward_stops_at_reshard(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// sdy.data_flow_edge (an internal identity of Shardy's pipeline) passes shardings through and
// is dropped on export: XLA rejects it.
// CHECK-LABEL: func.func @data_flow_edge_is_dropped(
// CHECK-NEXT: %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK-NOT: sdy.data_flow_edge
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @data_flow_edge_is_dropped(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = sdy.data_flow_edge %arg0 : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
