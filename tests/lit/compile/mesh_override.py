# RUN: shardc compile %S/Inputs/mlp_entry.py --entry layer --mesh x=16,y=16 | filecheck %s
# A 256-device pod lowers on a small machine.
# CHECK: mhlo.num_partitions = 256
# CHECK: sdy.mesh @mesh = <["x"=16, "y"=16]>
