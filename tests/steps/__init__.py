"""Real training steps compiled by `jax.jit` and `shardc.jit` with the same shardings.

The models live in one module each (`llama`, `lora`, `scan_decoder`, `flax_transformer`, `moe`,
`vit`), built at any size by a `build(mesh, size)` function that returns a `harness.Step`; the
tests use tiny sizes and `bench/bench_steps.py` realistic ones.
"""
