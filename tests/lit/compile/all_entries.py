# RUN: shardc compile %S/Inputs/mlp_entry.py | filecheck %s
# Two entries: each module is preceded by its name, split by // -----.
# CHECK: // entry: layer
# CHECK: stablehlo.tanh
# CHECK: // -----
# CHECK: // entry: double
# CHECK: stablehlo.multiply
