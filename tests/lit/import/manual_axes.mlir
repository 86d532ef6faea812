// RUN: shardc opt --split-input-file --pass-pipeline=remove-size-one-axes,manual-axes-cleanup %s | filecheck %s
// `manual-axes-cleanup`: a manual computation's manual axes lose those of size 1 (the
// size-one-axis step already took them out of its shardings).

// CHECK-LABEL: module
// CHECK: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"}
sdy.mesh @mesh = <["u"=1, "x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"u", "x"}]>] out_shardings=[<@mesh, [{"u", "x"}]>] manual_axes={"u", "x"} (%arg1: tensor<2xf32>) {
    sdy.return %arg1 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Nothing to clean: the axes stay as written.
// CHECK-LABEL: module
// CHECK: manual_axes={"x", "y"}
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{"x", "y"}]>] manual_axes={"x", "y"} (%arg1: tensor<2xf32>) {
    sdy.return %arg1 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
