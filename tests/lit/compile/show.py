# RUN: shardc compile %S/Inputs/mlp_entry.py --entry layer --show %%arg0 --listing -o %t.mlir 2>&1 | filecheck %s
# CHECK: %arg0  tensor<8x16xf32>
# CHECK: stablehlo.dot_general {{.*}}mlp_entry.py:15
# CHECK: %arg0: tensor<8x16xf32>
# CHECK: 0,1
# CHECK: 6,7
