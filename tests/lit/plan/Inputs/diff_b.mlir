sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {?}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}p0, {?}]>}) -> tensor<16x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<16x16xf32>
  %1 = stablehlo.tanh %0 : tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
