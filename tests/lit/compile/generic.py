# RUN: shardc compile %S/Inputs/mlp_entry.py --entry double --format generic | filecheck %s
# CHECK: "func.func"()
# CHECK: "stablehlo.multiply"
