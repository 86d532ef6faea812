"""shardc's own fuzzers: mutated MLIR through the CLI, random JAX programs against Shardy.

Both are seeded and reproducible (a failure names its seed), shrink a failure to a small
reproducer, and run a small fixed budget in the test suite (`tests/test_fuzz.py`);
`python -m tests.fuzz --count N` runs long.
"""
