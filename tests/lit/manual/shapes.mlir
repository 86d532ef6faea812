// RUN: not shardc check --split-input-file %s 2>&1 | filecheck %s

// Full manual: every dim is divided by the manual axes its in/out sharding names.
// CHECK-LABEL: in @full_manual
// CHECK-NEXT: manual axes: {"x", "y"}; free axes: {}
// CHECK-NEXT: operand 0: tensor<16x8xf32> -> local tensor<4x4xf32>
// CHECK-NEXT: result 0: local tensor<4x4xf32> -> tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @full_manual(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {
    sdy.return %arg1 : tensor<4x4xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// Partial manual: the free axis "y" does not divide the local shape.
// CHECK-LABEL: in @partial_manual
// CHECK-NEXT: manual axes: {"x"}; free axes: {"y"}
// CHECK-NEXT: operand 0: tensor<16x8xf32> -> local tensor<4x8xf32>
// CHECK-NEXT: result 0: local tensor<4x8xf32> -> tensor<16x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @partial_manual(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {"y", ?}]>] out_shardings=[<@mesh, [{"x", ?}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
    sdy.return %arg1 : tensor<4x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// Nested: the inner region's global shapes are the outer region's local ones.
// CHECK-LABEL: manual_axes={"x"}) in @nested
// CHECK: operand 0: tensor<16x8xf32> -> local tensor<4x8xf32>
// CHECK-LABEL: manual_axes={"y"}) in @nested
// CHECK-NEXT: manual axes: {"y"} (inside {"x"}); free axes: {}
// CHECK-NEXT: operand 0: tensor<4x8xf32> -> local tensor<4x4xf32>
// CHECK-NEXT: result 0: local tensor<4x4xf32> -> tensor<4x8xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @nested(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{"x", ?}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}, {"y", ?}]>] out_shardings=[<@mesh, [{?}, {"y", ?}]>] manual_axes={"y"} (%arg2: tensor<4x4xf32>) {
      sdy.return %arg2 : tensor<4x4xf32>
    } : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// A region inside a while body is found and checked like any other.
// CHECK-LABEL: in @in_while_body
// CHECK-NEXT: manual axes: {"x", "y"}; free axes: {}
// CHECK-NEXT: operand 0: tensor<8xf32> -> local tensor<1xf32>
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @in_while_body(%arg0: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %r:2 = stablehlo.while(%i = %n, %v = %arg0) : tensor<i32>, tensor<8xf32>
  cond {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %p = stablehlo.compare GT, %i, %c0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.subtract %i, %c1 : tensor<i32>
    %m = sdy.manual_computation(%v) in_shardings=[<@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{"x", "y"}]>] manual_axes={"x", "y"} (%a: tensor<1xf32>) {
      %s = stablehlo.sine %a : tensor<1xf32>
      sdy.return %s : tensor<1xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    stablehlo.return %j, %m : tensor<i32>, tensor<8xf32>
  }
  return %r#1 : tensor<8xf32>
}

// -----

// A dim the manual axes do not divide is rejected (by the MLIR verifier, with the same facts).
// CHECK: error: {{.*}}shapes.mlir:{{[0-9]+}}:{{[0-9]+}}: 'sdy.manual_computation' op operand dimension size 6 is not divisible by the manual axes size 4
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @not_divisible(%arg0: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x8xf32>) {
    sdy.return %arg1 : tensor<2x8xf32>
  } : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
