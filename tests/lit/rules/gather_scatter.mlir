// RUN: shardc rules --split-input-file %s | filecheck %s
// gather and scatter (reference §3.5).

func.func @gather(%x: tensor<8x16xf32>, %idx: tensor<4x1xi32>) -> tensor<4x16xf32> {
  // x[idx]: indices<->result batch factor, unsliced offset dim, collapsed dim (reduction),
  // index vector dim (need replication).
  // CHECK-LABEL: stablehlo.gather: #sdy.op_sharding_rule<([k, j], [i, l])->([i, j]) {i=4, j=16, k=8, l=1} reduction={k} need_replication={l}>
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<8x16xf32>, tensor<4x1xi32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @gather_batching(%x: tensor<8x16xf32>, %idx: tensor<8x3x1xi32>) -> tensor<8x3xf32> {
  // take_along_axis: an explicit batching dim shared by operand, indices and result.
  // CHECK-LABEL: stablehlo.gather: #sdy.op_sharding_rule<([i, k], [i, j, l])->([i, j]) {i=8, j=3, k=16, l=1} reduction={k} need_replication={l}>
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<8x16xf32>, tensor<8x3x1xi32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @scatter_add(%x: tensor<8x16xf32>, %idx: tensor<4x1xi32>, %u: tensor<4x16xf32>) -> tensor<8x16xf32> {
  // x.at[idx].add(u): the indices<->updates batch factor is a reduction factor (add body).
  // CHECK-LABEL: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=4, j=16, k=8, l=1} reduction={i} need_replication={l}>
  %0 = "stablehlo.scatter"(%x, %idx, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<4x1xi32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @scatter_set(%x: tensor<8x16xf32>, %idx: tensor<4x1xi32>, %u: tensor<4x16xf32>) -> tensor<8x16xf32> {
  // x.at[idx].set(u): not a reduction body, so the batch factor needs replication.
  // CHECK-LABEL: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=4, j=16, k=8, l=1} need_replication={i, l}>
  %0 = "stablehlo.scatter"(%x, %idx, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<4x1xi32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
