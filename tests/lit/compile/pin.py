# RUN: shardc compile %S/Inputs/pin_entry.py --entry agree --pin | filecheck %s --check-prefix=AGREE
# RUN: shardc compile %S/Inputs/pin_entry.py --entry conflict --pin | filecheck %s --check-prefix=CONFLICT
# Pin mode: a closed constraint after the op results XLA's own propagation would lay out
# otherwise. The dot and the tanh agree with the arguments on every factor: XLA derives both.
# AGREE-LABEL: func.func public @main
# AGREE: stablehlo.dot_general
# AGREE-NOT: sdy.sharding_constraint
# AGREE: return
# The dot's rows and columns both ask for "x": XLA settles the conflict as shardc did (the
# columns, which @main's result then holds), so nothing is pinned either.
# CONFLICT-LABEL: func.func public @main
# CONFLICT: %0 = stablehlo.dot_general %arg0, %arg1
# CONFLICT-NEXT: stablehlo.tanh %0
# CONFLICT-NOT: sdy.sharding_constraint
