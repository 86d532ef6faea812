// RUN: shardc propagate %s 2>&1 | filecheck %s --check-prefix=DEFAULT
// RUN: shardc propagate --max-steps 1 %s 2>&1 | filecheck %s --check-prefix=CAP
// `--max-steps N`: the worklist stops after N steps per run and says so; the end of the chain
// is then left as it was.

// DEFAULT-NOT: worklist stopped
// DEFAULT: %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
// CAP: note: worklist stopped after 2 steps
// CAP: %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @chain(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.negate %0 : tensor<8x16xf32>
  %2 = stablehlo.negate %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
