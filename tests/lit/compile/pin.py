# RUN: shardc compile %S/Inputs/mlp_entry.py --entry layer --pin | filecheck %s
# Pin mode: XLA derives this layer's layouts from its boundaries as shardc did, so nothing is
# pinned (a constraint goes only where XLA would lay a value out otherwise).
# CHECK-LABEL: func.func public @main
# CHECK-SAME: sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>
# CHECK: stablehlo.dot_general {{.*}}sdy.sharding_per_value
# CHECK-NOT: sdy.sharding_constraint
# CHECK: return
