# RUN: not shardc compile %S/Inputs/broken.py 2>&1 | filecheck %s --check-prefix=BROKEN
# BROKEN: error: {{.*}}broken.py:4: ValueError: bad configuration
# RUN: not shardc compile %S/Inputs/no_entry.py 2>&1 | filecheck %s --check-prefix=NOENTRY
# NOENTRY: error: {{.*}}no_entry.py declares no entry
# RUN: not shardc compile %S/Inputs/mlp_entry.py --entry nope 2>&1 | filecheck %s --check-prefix=NAME
# NAME: error: no entry named 'nope' in {{.*}}; name one of: layer, double
# RUN: not shardc compile %S/Inputs/mlp_entry.py --mesh x=4,z 2>&1 | filecheck %s --check-prefix=MESH
# MESH: error: invalid mesh 'x=4,z'
# RUN: not shardc compile %S/Inputs/missing.py 2>&1 | filecheck %s --check-prefix=MISSING
# MISSING: error: no such file
