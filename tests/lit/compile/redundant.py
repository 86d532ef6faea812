# RUN: shardc compile %S/Inputs/redundant_psum.py 2>%t.err | filecheck %s
# RUN: filecheck %s --check-prefix=NOTE < %t.err
# RUN: shardc compile %S/Inputs/redundant_psum.py --keep-redundant-collectives | filecheck %s --check-prefix=KEEP
# The psum of a replicated value becomes a local multiply by the group size (4 along "x").
# CHECK-LABEL: func.func public @main
# CHECK: sdy.manual_computation
# CHECK-NOT: stablehlo.all_reduce
# CHECK: sdy.return
# NOTE: note: scaled: {{.*}}all_reduce
# KEEP: stablehlo.all_reduce
