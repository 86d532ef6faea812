"""Cost-based automatic sharding: after propagation, choose the layouts no annotation decided.

`cost` is the byte and memory model (pure functions), `graph` the strategy graph built from the
IR, `problem` the same as plain numbers (ties of repeated layers, exact elimination), `solve` the
exact solvers (HiGHS, CP-SAT) and the greedy fallback, `auto_sharding` the pass and its explain.
"""
