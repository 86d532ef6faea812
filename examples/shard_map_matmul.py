"""Seed 000's shard_map matmuls: contract over a sharded dim with psum, or with psum_scatter.

Both run inside `shardc.jit` (the shard_map becomes an `sdy.manual_computation`).
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

from functools import partial  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import shardc  # noqa: E402

MESH = jax.make_mesh((8,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))


@partial(jax.shard_map, mesh=MESH, in_specs=(P(None, "i"), P("i", None)), out_specs=P(None, None),
         check_vma=False)
def matmul_psum(a, b):
    return jax.lax.psum(a @ b, "i")


@partial(jax.shard_map, mesh=MESH, in_specs=(P(None, "i"), P("i", None)), out_specs=P("i", None),
         check_vma=False)
def matmul_psum_scatter(a, b):
    return jax.lax.psum_scatter(a @ b, "i", scatter_dimension=0, tiled=True)


ARGS = (jax.ShapeDtypeStruct((16, 64), np.float32), jax.ShapeDtypeStruct((64, 32), np.float32))
# contracting dim on "i" for both operands; `shardc compile examples/shard_map_matmul.py`
psum_entry = shardc.entry(*ARGS, name="matmul_psum")(
    shardc.jit(matmul_psum, mesh=MESH, in_shardings=("_, i", "i, _")))
psum_scatter_entry = shardc.entry(*ARGS, name="matmul_psum_scatter")(
    shardc.jit(matmul_psum_scatter, mesh=MESH, in_shardings=("_, i", "i, _")))
ENTRIES = (psum_entry, psum_scatter_entry)


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 64), np.float32)
    b = rng.standard_normal((64, 32), np.float32)
    expected = a @ b
    for jitted in ENTRIES:
        lowered = jitted.lower(a, b)
        print(f"// {jitted.entry_name}")
        print(lowered.as_text())
        y = lowered.compile()(a, b)
        np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-3)
        print(f"{jitted.entry_name}: output {y.sharding}")
    print("OK: both sharded results equal the unsharded one")


if __name__ == "__main__":
    main()
