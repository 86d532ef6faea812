# RUN: shardc compile %S/Inputs/mlp_entry.py --entry layer --pin | filecheck %s
# Pin mode: a closed constraint after op results.
# CHECK-LABEL: func.func public @main
# CHECK: stablehlo.dot_general
# CHECK: sdy.sharding_constraint
