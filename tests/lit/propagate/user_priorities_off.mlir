// RUN: shardc propagate %s | filecheck %s --check-prefix=DEFAULT
// RUN: shardc propagate --no-user-priorities %s | filecheck %s --check-prefix=OFF
// `--no-user-priorities`: priorities p0, p1, ... are not run in rounds; every annotation
// propagates at once. With rounds, p0 %arg1 claims "x" first (G11); without, the add's
// conflict is settled as between equals and %arg0's dim 0 gets "x".

// DEFAULT-LABEL: func.func @p0_beats_p1(
// DEFAULT: stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>}
// OFF-LABEL: func.func @p0_beats_p1(
// OFF: stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @p0_beats_p1(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p1, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}p0]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
