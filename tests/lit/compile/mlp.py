# RUN: shardc compile %S/Inputs/mlp_entry.py --entry layer | filecheck %s
# CHECK: sdy.mesh @mesh = <["x"=4, "y"=2]>
# CHECK-LABEL: func.func public @main
# CHECK-SAME: sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>
# CHECK-SAME: sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>
# CHECK: stablehlo.dot_general
# CHECK: stablehlo.tanh
