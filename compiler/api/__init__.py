"""The entry points users call: `shardc.propagate`, `check`, `plan`, `jit` and its stage objects
(`Jitted`, `Lowered`, `Compiled`), the exported module they report from, `visualize_sharding`."""
