// RUN: shardc propagate --keep-open --split-input-file %s | filecheck %s
// Input already in Shardy's imported form (checked against jaxlib 0.10.2's
// sdy-user-priority-propagate followed by its sink passes): the sharding written on an
// `sdy.data_flow_edge` is where its owner's propagation starts (the edge goes: shardc builds
// its own edges), and `sdy.func_data_flow_edge`s make a callee shared by its call sites,
// propagated through all of them; their shardings end on the func arguments and call results.

// The edge's "x", "y" reaches both branches' values.
// CHECK-LABEL: func.func @edge_sharding_on_case_result(
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", ?}, {?}]>}
// CHECK-SAME: %arg2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", ?}, {?}]>}
// CHECK-NOT: sdy.data_flow_edge
// CHECK: }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y", ?}, {?}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @edge_sharding_on_case_result(%arg0: tensor<i32>, %arg1: tensor<8x16xf32>, %arg2: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> tensor<8x16xf32> {
  %0 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1 : tensor<8x16xf32>
  }, {
    stablehlo.return %arg2 : tensor<8x16xf32>
  }) : (tensor<i32>) -> tensor<8x16xf32>
  %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{"x", "y", ?}, {?}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// A manual computation's result edge (global) and body-argument edge (local, free axes only):
// "y" from the result edge reaches the body and the operand; "x" stays the region's.
// CHECK-LABEL: func.func @edge_sharding_on_manual_result(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y", ?}]>}
// CHECK-NEXT: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {"y", ?}]>] out_shardings=[<@mesh, [{"x", ?}, {"y", ?}]>] manual_axes={"x"}
// CHECK-NEXT: stablehlo.tanh %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @edge_sharding_on_manual_result(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{"x", ?}, {?}]>] manual_axes={"x"} (%a: tensor<2x16xf32>) {
    %e = sdy.data_flow_edge %a sharding=<@mesh, [{?}, {?}]> : tensor<2x16xf32>
    %t = stablehlo.tanh %e : tensor<2x16xf32>
    sdy.return %t : tensor<2x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{"x", ?}, {"y", ?}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// One callee for both call sites: %arg0's "x" reaches it and, through it, the second call.
// CHECK-LABEL: func.func private @shared(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}
// CHECK-NEXT: stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}
// CHECK-NEXT: call @shared(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>}
// CHECK-NEXT: call @shared(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>}
// CHECK-NOT: func_data_flow_edge
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func private @shared(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.func_data_flow_edge %arg0 : tensor<8x16xf32>
  %1 = stablehlo.abs %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = call @shared(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = sdy.func_data_flow_edge %0 : tensor<8x16xf32>
  %2 = call @shared(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = sdy.func_data_flow_edge %2 : tensor<8x16xf32>
  return %1, %3 : tensor<8x16xf32>, tensor<8x16xf32>
}
