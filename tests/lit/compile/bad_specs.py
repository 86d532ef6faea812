# Every bad spec is one line on stderr naming the argument, the spec as written and the fix.
# RUN: not shardc compile %S/Inputs/bad_spec.py --entry unknown_axis 2>&1 | filecheck %s --check-prefix=AXIS
# AXIS: error: in_shardings[0] = z, _: unknown axis name: "z" (mesh axes: <["x"=4, "y"=2]>); use one of the mesh axes: x, y
# AXIS-NOT: Traceback
# RUN: not shardc compile %S/Inputs/bad_spec.py --entry priority_typo 2>&1 | filecheck %s --check-prefix=PRIO
# PRIO: error: in_shardings[0]: invalid sharding spec 'x p1, _' at column 3; {{.*}}lowercase p, no space
# RUN: not shardc compile %S/Inputs/bad_spec.py --entry rank 2>&1 | filecheck %s --check-prefix=RANK
# RANK: error: out_shardings[0] = x, _, _: sharding doesn't match tensor rank: 3 != 2 (value of shape (8, 16)); give at most 2 dims
