// RUN: shardc rules --split-input-file %s | filecheck %s
// gather and scatter (docs/op_rules.md §3.5).

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

// -----

func.func @gather_two_index_dims(%x: tensor<8x16x4xf32>, %idx: tensor<5x2xi32>) -> tensor<5x4xf32> {
  // x[i, j] for 5 pairs: the index vector dim of the indices has its own size (2), need
  // replication.
  // CHECK-LABEL: stablehlo.gather: #sdy.op_sharding_rule<([k, l, j], [i, m])->([i, j]) {i=5, j=4, k=8, l=16, m=2} reduction={k, l} need_replication={m}>
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 4>}> : (tensor<8x16x4xf32>, tensor<5x2xi32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

func.func @scatter_two_inputs(%x: tensor<8x16xf32>, %y: tensor<8x16xi32>, %idx: tensor<4x1xi32>, %u: tensor<4x16xf32>, %v: tensor<4x16xi32>) -> (tensor<8x16xf32>, tensor<8x16xi32>) {
  // Both inputs combined with the same reduction (add): the batch factor is a reduction.
  // CHECK-LABEL: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [k, j], [i, l], [i, j], [i, j])->([k, j], [k, j]) {i=4, j=16, k=8, l=1} reduction={i} need_replication={l}>
  %0:2 = "stablehlo.scatter"(%x, %y, %idx, %u, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
    %s = stablehlo.add %c, %a : tensor<f32>
    %t = stablehlo.add %b, %d : tensor<i32>
    stablehlo.return %s, %t : tensor<f32>, tensor<i32>
  }) : (tensor<8x16xf32>, tensor<8x16xi32>, tensor<4x1xi32>, tensor<4x16xf32>, tensor<4x16xi32>) -> (tensor<8x16xf32>, tensor<8x16xi32>)
  return %0#0, %0#1 : tensor<8x16xf32>, tensor<8x16xi32>
}

// -----

func.func @scatter_two_inputs_two_reductions(%x: tensor<8x16xf32>, %y: tensor<8x16xi32>, %idx: tensor<4x1xi32>, %u: tensor<4x16xf32>, %v: tensor<4x16xi32>) -> (tensor<8x16xf32>, tensor<8x16xi32>) {
  // add for one input, max for the other: no one reduction, so need replication.
  // CHECK-LABEL: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [k, j], [i, l], [i, j], [i, j])->([k, j], [k, j]) {i=4, j=16, k=8, l=1} need_replication={i, l}>
  %0:2 = "stablehlo.scatter"(%x, %y, %idx, %u, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
    %s = stablehlo.add %a, %c : tensor<f32>
    %t = stablehlo.maximum %b, %d : tensor<i32>
    stablehlo.return %s, %t : tensor<f32>, tensor<i32>
  }) : (tensor<8x16xf32>, tensor<8x16xi32>, tensor<4x1xi32>, tensor<4x16xf32>, tensor<4x16xi32>) -> (tensor<8x16xf32>, tensor<8x16xi32>)
  return %0#0, %0#1 : tensor<8x16xf32>, tensor<8x16xi32>
}

// -----

func.func @scatter_logical(%x: tensor<8x16xi1>, %y: tensor<8x16xi32>, %idx: tensor<4x1xi32>, %u: tensor<4x16xi1>, %v: tensor<4x16xi32>) -> (tensor<8x16xi1>, tensor<8x16xi32>) {
  // `or` combines booleans (a reduction); on integers it is bitwise, not one.
  // CHECK-LABEL: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=4, j=16, k=8, l=1} reduction={i} need_replication={l}>
  %0 = "stablehlo.scatter"(%x, %idx, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<i1>, %b: tensor<i1>):
    %s = stablehlo.or %a, %b : tensor<i1>
    stablehlo.return %s : tensor<i1>
  }) : (tensor<8x16xi1>, tensor<4x1xi32>, tensor<4x16xi1>) -> tensor<8x16xi1>
  // CHECK: stablehlo.scatter: #sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=4, j=16, k=8, l=1} need_replication={i, l}>
  %1 = "stablehlo.scatter"(%y, %idx, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.or %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<8x16xi32>, tensor<4x1xi32>, tensor<4x16xi32>) -> tensor<8x16xi32>
  return %0, %1 : tensor<8x16xi1>, tensor<8x16xi32>
}
