// RUN: shardc propagate %s | filecheck %s --check-prefix=DEFAULT
// RUN: shardc propagate --no-split-constants %s | filecheck %s --check-prefix=OFF
// `--no-split-constants`: a constant with two uses is one value to propagation, so both uses'
// shardings meet in it and flow on to the other use; split (the default, as Shardy's constant
// splitter), each use has its own copy and the adds keep their own layouts.

// DEFAULT-LABEL: func.func @shared_constant(
// DEFAULT: %0 = stablehlo.add %arg0, %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// DEFAULT: %1 = stablehlo.add %arg1, %cst_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>}
// OFF-LABEL: func.func @shared_constant(
// OFF: %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// OFF: %0 = stablehlo.add %arg0, %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// OFF: %1 = stablehlo.add %arg1, %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @shared_constant(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8x16xf32>
  %1 = stablehlo.add %arg1, %c : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
