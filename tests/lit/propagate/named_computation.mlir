// RUN: shardc propagate --split-input-file %s | filecheck %s
// RUN: shardc propagate --keep-open --split-input-file %s | filecheck %s --check-prefix=OPEN

// A named computation is propagated through as if its body were inline (Shardy: its body
// arguments and results are data-flow-edge owners, operand i -> body argument i, returned value
// i -> result i), and the layouts of its body arguments and results are written as its
// in_shardings and out_shardings, not as an op sharding. Checked against Shardy's
// sdy-add-data-flow-edges, sdy-aggressive-propagate, sdy-sink-data-flow-edges (and
// sdy-close-shardings for the closed form) in jaxlib 0.10.2.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK: sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>]
// CHECK-NEXT: stablehlo.tanh %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CHECK: } : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @forward(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = sdy.named_computation<"foo">(%arg0) (%a: tensor<8x16xf32>) {
    %t = stablehlo.tanh %a : tensor<8x16xf32>
    sdy.return %t : tensor<8x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK: sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>]
// CHECK-NEXT: stablehlo.tanh %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// OPEN-LABEL: func.func @backward(
// OPEN-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}
// OPEN: sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{?}, {"y", ?}]>] out_shardings=[<@mesh, [{?}, {"y", ?}]>]
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @backward(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = sdy.named_computation<"foo">(%arg0) (%a: tensor<8x16xf32>) {
    %t = stablehlo.tanh %a : tensor<8x16xf32>
    sdy.return %t : tensor<8x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// The shardings it is given are its body arguments' and results' from the start: the
// argument's comes in from the caller, the result's goes out to its users, and both meet in
// the body (the tanh takes "x" from the argument and "y" from the result, as in Shardy).

// CHECK-LABEL: func.func @given(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
// CHECK: sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {"y"}]>]
// CHECK-NEXT: stablehlo.tanh %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CHECK: stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @given(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {"y"}]>] (%a: tensor<8x16xf32>) {
    %t = stablehlo.tanh %a : tensor<8x16xf32>
    sdy.return %t : tensor<8x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
