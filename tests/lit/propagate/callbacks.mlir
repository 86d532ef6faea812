// RUN: shardc propagate %s 2>/dev/null | filecheck %s
// Host callbacks as JAX lowers them (jax.debug.print, pure_callback, ordered io_callback): a
// zero-result custom_call carries one (maximal) sharding, the device that runs it; it is kept
// on the op as written, as are the callbacks' result shardings; tokens get no sharding (as from JAX).

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: !stablehlo.token)
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, !stablehlo.token) {
// CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {{.*}}sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<f32>) -> ()
// CHECK-NEXT: %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {{.*}}sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1, %arg0) {{.*}}sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (!stablehlo.token, tensor<8x16xf32>) -> !stablehlo.token
// CHECK: return %3, %2 : tensor<8x16xf32>, !stablehlo.token
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: !stablehlo.token) -> (tensor<8x16xf32>, !stablehlo.token) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<> : tensor<0xindex>], result_layouts = [], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<f32>) -> ()
  %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = "", mhlo.backend_config = {index = 1 : ui64}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1, %arg0) {backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 2 : ui64}, operand_layouts = [dense<> : tensor<0xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<> : tensor<0xindex>], sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (!stablehlo.token, tensor<8x16xf32>) -> !stablehlo.token
  %3 = stablehlo.add %1, %arg0 : tensor<8x16xf32>
  return %3, %2 : tensor<8x16xf32>, !stablehlo.token
}
