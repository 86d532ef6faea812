// RUN: shardc opt --remove-redundant-collectives --split-input-file %s 2>&1 | filecheck %s
// RUN: shardc opt --remove-redundant-collectives --split-input-file %s 2>&1 | filecheck %s --check-prefix=SDY
// Every case's notes come first (stderr, case by case, in order), then the text of each case.
// CHECK: note: removed stablehlo.all_reduce [add] over {"i"} at {{.*}}: its operand is invariant along {"i"}; now a multiply by 8
// CHECK: note: removed stablehlo.all_reduce [add] over {"i"}
// CHECK: note: removed stablehlo.all_gather over {"x"} {{.*}} now a local concatenate of 4 copies
// CHECK: note: removed stablehlo.reduce_scatter [add] over {"x"} {{.*}} now a local dynamic_slice times 4
// CHECK: note: removed stablehlo.all_reduce [maximum] over {"y"} {{.*}} now its operand
// CHECK-NOT: note: removed

sdy.mesh @mesh8 = <["i"=8]>

// Seed 002's cursed identity transposed twice: both psums act on an unmapped (invariant)
// input and become local multiplies by the group size.
// CHECK-LABEL: func.func @cursed_identity_twice
// CHECK-NOT: all_reduce
// CHECK: %[[C1:.*]] = stablehlo.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[M1:.*]] = stablehlo.multiply %arg{{[0-9]+}}, %[[C1]] : tensor<4xf32>
// CHECK-NEXT: %[[C2:.*]] = stablehlo.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[M2:.*]] = stablehlo.multiply %[[M1]], %[[C2]] : tensor<4xf32>
// CHECK-NEXT: sdy.return %[[M2]]
func.func @cursed_identity_twice(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh8, [{}]>] out_shardings=[<@mesh8, [{}]>] manual_axes={"i"} (%arg1: tensor<4xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    sdy.return %2 : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Gather of an unmapped input: a local concatenate.
// CHECK-LABEL: func.func @gather_invariant
// CHECK-NOT: all_gather
// CHECK: stablehlo.concatenate %arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}, dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<8x4xf32>
func.func @gather_invariant(%arg0: tensor<2x4xf32>) -> tensor<8x4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x4xf32>) {
    %1 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2x4xf32>) -> tensor<8x4xf32>
    sdy.return %1 : tensor<8x4xf32>
  } : (tensor<2x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// psum_scatter of an unmapped input: a slice at this device's place in its "x" group (a table
// indexed by partition_id: device 2x + y sits at position x), times 4.
// CHECK-LABEL: func.func @scatter_invariant
// CHECK-NOT: reduce_scatter
// CHECK: stablehlo.constant dense<[0, 0, 2, 2, 4, 4, 6, 6]> : tensor<8xi32>
// CHECK: stablehlo.partition_id
// CHECK: stablehlo.dynamic_slice
// CHECK: stablehlo.dynamic_slice %arg{{[0-9]+}}, {{.*}} sizes = [2, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
// CHECK: stablehlo.multiply
func.func @scatter_invariant(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<8x4xf32>) {
    %1 = "stablehlo.reduce_scatter"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x4xf32>) -> tensor<2x4xf32>
    sdy.return %1 : tensor<2x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// pmax over "y" of a value that varies only along "x": the operand itself. The psum over "x" of
// that value is needed and stays.
// CHECK-LABEL: func.func @max_invariant_sum_needed
// CHECK-NOT: stablehlo.maximum
// CHECK: "stablehlo.all_reduce"
// CHECK: stablehlo.add
func.func @max_invariant_sum_needed(%arg0: tensor<8xf32>) -> tensor<2xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x", "y"} (%arg1: tensor<2xf32>) {
    %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<2xf32>
    %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<2xf32>) -> tensor<2xf32>
    sdy.return %2 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// sdy collectives act over free axes, which XLA's partitioner owns: never rewritten or reported.
// SDY-NOT: note: {{.*}}sdy.all_slice
// SDY-LABEL: func.func @sdy_collectives_untouched
// SDY: sdy.all_slice
// SDY: sdy.all_gather
func.func @sdy_collectives_untouched(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {?}]>] out_shardings=[<@mesh, [{}, {?}]>] manual_axes={"x"} (%arg1: tensor<8x8xf32>) {
    %1 = sdy.all_slice [{}, {"y"}] %arg1 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>
    %2 = sdy.all_gather [{}, {"y"}] %1 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
    sdy.return %2 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
