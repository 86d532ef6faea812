// RUN: shardc check --split-input-file %s 2>&1 | filecheck %s

// Replica groups of mesh x=4, y=2 (ids x*2 + y) decode to the axes JAX's call named, in order.
// CHECK-LABEL: in @groups
// CHECK: collective: stablehlo.all_reduce [add] over {"x"}, 96 bytes/device
// CHECK: collective: stablehlo.all_gather over {"y"}, 64 bytes/device
// CHECK: collective: stablehlo.all_gather over {"y", "x"}, 448 bytes/device
// CHECK: collective: stablehlo.reduce_scatter [add] over {"x"}, 48 bytes/device
// CHECK: collective: stablehlo.all_to_all over {"x"}, 48 bytes/device
// CHECK: collective: stablehlo.collective_permute over {"x"}, 64 bytes/device
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @groups(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<32x4xf32>, tensor<128x8xf32>, tensor<16x2xf32>, tensor<64x2xf32>, tensor<16x8xf32>) {
  %0:6 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> : (tensor<4x4xf32>) -> tensor<8x4xf32>
    // ("y", "x"): y major inside each group
    %g = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6, 1, 3, 5, 7]]> : tensor<1x8xi64>, use_global_device_ids}> : (tensor<4x4xf32>) -> tensor<32x4xf32>
    %3 = "stablehlo.reduce_scatter"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, scatter_dimension = 1 : i64, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x1xf32>
    %4 = "stablehlo.all_to_all"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<4x4xf32>) -> tensor<16x1xf32>
    %5 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], [5, 7], [7, 1]]> : tensor<8x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    sdy.return %1, %2, %g, %3, %4, %5 : tensor<4x4xf32>, tensor<8x4xf32>, tensor<32x4xf32>, tensor<4x1xf32>, tensor<16x1xf32>, tensor<4x4xf32>
  } : (tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<32x4xf32>, tensor<128x8xf32>, tensor<16x2xf32>, tensor<64x2xf32>, tensor<16x8xf32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<16x8xf32>, tensor<32x4xf32>, tensor<128x8xf32>, tensor<16x2xf32>, tensor<64x2xf32>, tensor<16x8xf32>
}

// -----

// Mesh a=2, b=2, c=2: ("c", "a") groups, and device_ids that permute the positions.
// CHECK-LABEL: in @three_axes
// CHECK: collective: stablehlo.all_reduce [add] over {"c", "a"}
// CHECK: collective: stablehlo.all_reduce [add] over {"b"}
sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @three_axes(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", "b", "c"}]>] out_shardings=[<@mesh, [{"a", "b", "c"}]>] manual_axes={"a", "b", "c"} (%arg1: tensor<1xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 4, 1, 5], [2, 6, 3, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<1xf32>) -> tensor<1xf32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3], [4, 6], [5, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<1xf32>) -> tensor<1xf32>
    sdy.return %2 : tensor<1xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// With device_ids reversed, position (x, y) holds device 7 - (2x + y): groups [[7, 5, 3, 1], ...] are "x".
// CHECK-LABEL: in @device_ids
// CHECK: collective: stablehlo.all_reduce [add] over {"x"}
sdy.mesh @mesh = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
func.func @device_ids(%arg0: tensor<8xf32>) -> tensor<2xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<1xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[7, 5, 3, 1], [6, 4, 2, 0]]> : tensor<2x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<1xf32>) -> tensor<1xf32>
    sdy.return %1 : tensor<1xf32>
  } : (tensor<8xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Groups that are no set of whole mesh axes are reported, not guessed.
// CHECK-LABEL: in @irregular
// CHECK: collective: stablehlo.all_reduce [add] over no set of mesh axes (groups vary over {"x", "y"} but hold 2 devices, not the 8 those axes span
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @irregular(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{"x", "y"}]>] manual_axes={"x", "y"} (%arg1: tensor<1xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 3], [1, 2], [4, 7], [5, 6]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<1xf32>) -> tensor<1xf32>
    sdy.return %1 : tensor<1xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// axis_index(("c", "a")) = idx(a) * 1 + idx(c) * 2 from partition_id arithmetic (mesh a, b, c).
// CHECK-LABEL: in @axis_index_tuple
// CHECK: axis_index: axis_index(("c", "a"))
sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @axis_index_tuple() -> tensor<8xi32> {
  %0 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, [{"a", "b", "c"}]>] manual_axes={"a", "b", "c"} () {
    %c4 = stablehlo.constant dense<4> : tensor<ui32>
    %c2 = stablehlo.constant dense<2> : tensor<ui32>
    %c1 = stablehlo.constant dense<1> : tensor<ui32>
    %p = stablehlo.partition_id : tensor<ui32>
    %a0 = stablehlo.divide %p, %c4 : tensor<ui32>
    %a = stablehlo.remainder %a0, %c2 : tensor<ui32>
    %c0 = stablehlo.divide %p, %c1 : tensor<ui32>
    %c = stablehlo.remainder %c0, %c2 : tensor<ui32>
    %cc = stablehlo.multiply %c, %c2 : tensor<ui32>
    %s = stablehlo.add %a, %cc : tensor<ui32>
    %i = stablehlo.convert %s : (tensor<ui32>) -> tensor<i32>
    %r = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<1xi32>
    sdy.return %r : tensor<1xi32>
  } : () -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
