# RUN: not shardc compile %S/Inputs/replication.py 2>&1 | filecheck %s --check-prefix=ERR
# The shard_map output varies along "x" but out_specs=P() promises a replicated copy; the
# check runs even with check_vma=False, and says how to turn it off.
# The user already wrote check_vma=False: the fix must not suggest it as the way out.
# ERR: error: {{.*}}replication.py:{{[0-9]+}}:{{[0-9]+}}: result 0 of sdy.manual_computation{{.*}}"x"{{.*}}turn shardc's check off (--no-check-replication, shardc.jit(..., check_replication=False); JAX's check_vma=False does not reach it)
# RUN: shardc compile %S/Inputs/replication.py --no-check-replication | filecheck %s
# CHECK: sdy.manual_computation
