# RUN: shardc compile %S/Inputs/pin_entry.py --entry agree --pin | filecheck %s --check-prefix=AGREE
# RUN: shardc compile %S/Inputs/pin_entry.py --entry conflict --pin | filecheck %s --check-prefix=CONFLICT
# Pin mode: a closed constraint after the op results XLA could lay out otherwise.
# The dot and the tanh agree with the arguments on every factor: XLA derives both, no pin.
# AGREE-LABEL: func.func public @main
# AGREE: stablehlo.dot_general
# AGREE-NOT: sdy.sharding_constraint
# AGREE: return
# The dot's rows and columns both ask for "x" (a conflict shardc settled): its result is pinned.
# CONFLICT-LABEL: func.func public @main
# CONFLICT: %0 = stablehlo.dot_general %arg0, %arg1
# CONFLICT-NEXT: %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]>
# CONFLICT-NEXT: stablehlo.tanh %1
