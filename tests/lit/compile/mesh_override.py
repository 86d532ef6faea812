# RUN: shardc compile %S/Inputs/mlp_entry.py --entry layer --mesh x=8,y=32 | filecheck %s
# A 256-device pod lowers on a small machine.
# CHECK: mhlo.num_partitions = 256
# CHECK: sdy.mesh @mesh = <["x"=8, "y"=32]>
# CHECK: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
# CHECK-SAME: %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
# A mesh whose axes do not divide a sharded dim is an error, never a silently smaller sharding
# (XLA would keep only the part that divides: "x":(1)8 of x=16 on 8 rows).
# RUN: not shardc compile %S/Inputs/mlp_entry.py --entry layer --mesh x=16,y=16 2>&1 | filecheck %s --check-prefix=DIVIDE
# DIVIDE: error: argument x (in_shardings = <@mesh, [{"x"}, {}]>) splits dim 0 of size 8 (shape (8, 16)) over axes x of <["x"=16, "y"=16]> (16 shards), and 16 does not divide 8; pad dim 0 to a multiple of 16
