// RUN: shardc opt --split-input-file %s | filecheck %s

// Sharding syntax survives import and export unchanged: sub-axes, priorities, open dims,
// replicated and unreduced axes, inline meshes, per-value lists and manual computations.

// CHECK: sdy.mesh @mesh = <["x"=4, "y"=2]>
// CHECK: sdy.mesh @other = <["a"=2, "b"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>
// CHECK: sdy.mesh @maximal = <[], device_ids=[3]>

// CHECK-LABEL: func.func @sub_axes
// CHECK-SAME: %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>}
// CHECK-SAME: -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2, "y"}, {}]>})
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @other = <["a"=2, "b"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>
sdy.mesh @maximal = <[], device_ids=[3]>
func.func @sub_axes(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2, "y"}, {}]>}) {
  return %arg0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @priorities_and_open_dims
// CHECK-SAME: #sdy.sharding<@mesh, [{"x", ?}p1, {?}p2]>
// CHECK-SAME: #sdy.sharding<@mesh, [{?}, {"y"}p0]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @priorities_and_open_dims(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {?}p2]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y"}p0]>}) -> tensor<8x8xf32> {
  // CHECK: stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], replicated={"y"}>]>}
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], replicated={"y"}>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @replicated_unreduced
// CHECK-SAME: #sdy.sharding<@mesh, [{}, {}], replicated={"x"}, unreduced={"y"}>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @replicated_unreduced(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"y"}, replicated={"x"}>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @inline_mesh_and_constraint
// CHECK-SAME: #sdy.sharding<mesh<["z"=2]>, [{"z"}]>
// CHECK: sdy.sharding_constraint %arg0 <@mesh, [{"x", "y"}, {?}]> : tensor<8x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @inline_mesh_and_constraint(%arg0: tensor<8x8xf32>, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=2]>, [{"z"}]>}) -> tensor<8x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x", "y"}, {?}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @multi_result_per_value
// CHECK: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>, <@mesh, []>]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @multi_result_per_value(%arg0: tensor<8xf32>, %arg1: tensor<f32>) -> (tensor<8xf32>, tensor<f32>) {
  %0:2 = "stablehlo.optimization_barrier"(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>, <@mesh, []>]>} : (tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @manual
// CHECK: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}], replicated={"y"}>] manual_axes={"x"} (%arg1: tensor<2x16xf32>)
// CHECK: sdy.return
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @manual(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}], replicated={"y"}>] manual_axes={"x"} (%b: tensor<2x16xf32>) {
    %n = stablehlo.negate %b : tensor<2x16xf32>
    sdy.return %n : tensor<2x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @sharding_ops
// CHECK: sdy.sharding_group %arg0 group_id=3 : tensor<8xf32>
// CHECK: sdy.propagation_barrier %arg0 allowed_direction=FORWARD
// CHECK: sdy.reshard %{{.*}} <@mesh, [{"x"}]>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @sharding_ops(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=3 : tensor<8xf32>
  %0 = sdy.propagation_barrier %arg0 allowed_direction=FORWARD : tensor<8xf32>
  %1 = sdy.reshard %0 <@mesh, [{"x"}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @on_maximal_mesh
// CHECK-SAME: #sdy.sharding<@maximal, []>
sdy.mesh @maximal = <[], device_ids=[3]>
func.func @on_maximal_mesh(%arg0: tensor<f32> {sdy.sharding = #sdy.sharding<@maximal, []>}) -> tensor<f32> {
  return %arg0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @named
// CHECK: sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>]
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @named(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] (%a: tensor<8x16xf32>) {
    %t = stablehlo.tanh %a : tensor<8x16xf32>
    sdy.return %t : tensor<8x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
