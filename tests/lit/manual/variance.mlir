// RUN: shardc check --split-input-file --no-check-replication %s 2>&1 | filecheck %s

// Inputs vary along the manual axes their in_sharding names; elementwise ops take the union;
// all_reduce makes its result invariant along its axes.
// CHECK-LABEL: in @elementwise_and_psum
// CHECK: result 0 variance: varies over {"x", "y"}
// CHECK-NEXT: result 1 variance: varies over {"x"}
// CHECK-NEXT: result 2 variance: invariant
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @elementwise_and_psum(%arg0: tensor<8x2xf32>, %arg1: tensor<2x2xf32>) -> (tensor<8x4xf32>, tensor<8x2xf32>, tensor<2x2xf32>) {
  %0:3 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>] manual_axes={"x", "y"} (%a: tensor<2x2xf32>, %b: tensor<2x1xf32>) {
    %bb = stablehlo.broadcast_in_dim %b, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x2xf32>
    %s = stablehlo.add %a, %bb : tensor<2x2xf32>
    %r = "stablehlo.all_reduce"(%s) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %all = "stablehlo.all_reduce"(%s) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.maximum %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    sdy.return %s, %r, %all : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
  } : (tensor<8x2xf32>, tensor<2x2xf32>) -> (tensor<8x4xf32>, tensor<8x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<8x4xf32>, tensor<8x2xf32>, tensor<2x2xf32>
}

// -----

// all_gather: invariant in the value view, varying in JAX's typing view (seed 002);
// reduce_scatter, all_to_all and collective_permute results vary along their axes.
// CHECK-LABEL: in @collective_views
// CHECK: result 0 variance: invariant (typing view: {"x"})
// CHECK-NEXT: result 1 variance: varies over {"x"}
// CHECK-NEXT: result 2 variance: varies over {"x"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @collective_views(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0:3 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>, <@mesh, [{"x"}]>, <@mesh, [{"x"}]>] manual_axes={"x", "y"} (%a: tensor<8xf32>) {
    %sl = stablehlo.slice %a [0:2] : (tensor<8xf32>) -> tensor<2xf32>
    %p = "stablehlo.collective_permute"(%sl) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], [5, 7], [7, 1]]> : tensor<8x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>
    %g = "stablehlo.all_gather"(%p) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2xf32>) -> tensor<8xf32>
    %rs = "stablehlo.reduce_scatter"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %t = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<2xf32>
    sdy.return %g, %rs, %p : tensor<8xf32>, tensor<2xf32>, tensor<2xf32>
  } : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Loop-carried values reach a fixed point: %v picks up "x" from %a in the body, and the loop's
// result carries it. A branch on a varying predicate makes both branches' results vary.
// CHECK-LABEL: in @control_flow
// CHECK: result 0 variance: varies over {"x"}
// CHECK-NEXT: result 1 variance: varies over {"y"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @control_flow(%arg0: tensor<4xf32>, %arg1: tensor<2xi1>) -> (tensor<1xf32>, tensor<f32>) {
  %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}]>, <@mesh, [{"y"}]>] out_shardings=[<@mesh, [{}]>, <@mesh, []>] manual_axes={"x", "y"} (%a: tensor<1xf32>, %pp: tensor<1xi1>) {
    %zero = stablehlo.constant dense<0.0> : tensor<1xf32>
    %n = stablehlo.constant dense<3> : tensor<i32>
    %r:2 = stablehlo.while(%i = %n, %v = %zero) : tensor<i32>, tensor<1xf32>
    cond {
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %p = stablehlo.compare GT, %i, %c0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.subtract %i, %c1 : tensor<i32>
      %w = stablehlo.add %v, %a : tensor<1xf32>
      stablehlo.return %j, %w : tensor<i32>, tensor<1xf32>
    }
    %pred = stablehlo.reshape %pp : (tensor<1xi1>) -> tensor<i1>
    %k = "stablehlo.if"(%pred) ({
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      stablehlo.return %one : tensor<f32>
    }, {
      %two = stablehlo.constant dense<2.0> : tensor<f32>
      stablehlo.return %two : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    sdy.return %r#1, %k : tensor<1xf32>, tensor<f32>
  } : (tensor<4xf32>, tensor<2xi1>) -> (tensor<1xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<1xf32>, tensor<f32>
}

// -----

// axis_index inside the all-manual wrapper JAX builds in a partial-manual region varies over
// "x" only, so the wrapper's replicated-over-"y" result is fine.
// CHECK-LABEL: manual_axes={"y"}) in @partial_axis_index
// CHECK: axis_index: axis_index("x")
// CHECK: result 0 variance: varies over {"x"}; promised replicated over {"y"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @partial_axis_index() -> tensor<4xi32> {
  %0 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, [{"x", ?}]>] manual_axes={"x"} () {
    %4 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, []>] manual_axes={"y"} () {
      %c = stablehlo.constant dense<2> : tensor<ui32>
      %c_0 = stablehlo.constant dense<4> : tensor<ui32>
      %5 = stablehlo.partition_id : tensor<ui32>
      %6 = stablehlo.divide %5, %c : tensor<ui32>
      %7 = stablehlo.remainder %6, %c_0 : tensor<ui32>
      %8 = stablehlo.convert %7 : (tensor<ui32>) -> tensor<i32>
      sdy.return %8 : tensor<i32>
    } : () -> tensor<i32>
    %b = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<1xi32>
    sdy.return %b : tensor<1xi32>
  } : () -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// sdy collectives reshard over free axes only (no body sharding may name a manual axis), so they
// leave the manual-axis variance as it was: the all_slice over the free "y" does not make the
// value vary, the all_gather over the manual "x" still makes it invariant, and all_slice moves
// no bytes.
// CHECK-LABEL: in @sdy_collectives_over_free_axes
// CHECK: collective: sdy.all_slice over {"y"}, 0 bytes/device
// CHECK: collective: sdy.all_gather over {"y"}, 32 bytes/device
// CHECK: result 0 variance: varies over {"x"}
// CHECK-NEXT: result 1 variance: invariant (typing view: {"x"}); promised replicated over {"x"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @sdy_collectives_over_free_axes(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{"x"}, {?}]>, <@mesh, [{}, {?}]>] manual_axes={"x"} (%arg1: tensor<2x8xf32>) {
    %1 = sdy.all_slice [{}, {"y"}] %arg1 out_sharding=<@mesh, [{}, {"y"}]> : tensor<2x8xf32>
    %2 = sdy.all_gather [{}, {"y"}] %1 out_sharding=<@mesh, [{}, {}]> : tensor<2x8xf32>
    %3 = "stablehlo.all_gather"(%2) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2x8xf32>) -> tensor<8x8xf32>
    %4 = sdy.all_slice [{}, {"y"}] %3 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>
    sdy.return %2, %4 : tensor<2x8xf32>, tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  return %0#0, %0#1 : tensor<8x8xf32>, tensor<8x8xf32>
}
