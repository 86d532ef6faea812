"""One process of a 2-process x 4-CPU-device run of a shardc.jit MLP (see test_jit_multiprocess).

Usage: python mlp_worker.py PORT PROCESS_ID. Prints `ok <process id> <checked shards>` when the
process's shards equal numpy's numbers and jax.jit's."""

import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402

jax.config.update("jax_cpu_collectives_implementation", "gloo")
port, pid = int(sys.argv[1]), int(sys.argv[2])
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid)

import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import shardc  # noqa: E402

assert jax.device_count() == 8 and jax.local_device_count() == 4
mesh = jax.make_mesh((4, 2), ("x", "y"))  # over both processes' devices
rng = np.random.default_rng(0)  # the same global values in both processes
x_np = rng.standard_normal((16, 32), np.float32)
w1_np = rng.standard_normal((32, 64), np.float32)
w2_np = rng.standard_normal((64, 32), np.float32)


def global_array(value, spec):
    sharding = NamedSharding(mesh, spec)
    return jax.make_array_from_callback(value.shape, sharding, lambda idx: value[idx])


x = global_array(x_np, P("x"))
w1 = global_array(w1_np, P(None, "y"))
w2 = global_array(w2_np, P())


def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


out = shardc.jit(mlp, mesh=mesh, out_shardings="x, _")(x, w1, w2)
ref = jax.jit(mlp)(x, w1, w2)
expected = np.maximum(x_np @ w1_np, 0) @ w2_np
assert out.shape == (16, 32) and not out.is_fully_addressable
assert out.sharding.spec == P("x")
checked = 0
for shard in out.addressable_shards:  # this process's 4 shards of the global result
    np.testing.assert_allclose(np.asarray(shard.data), expected[shard.index], rtol=1e-4, atol=1e-4)
    checked += 1
for shard in ref.addressable_shards:  # jax.jit's run of the same program agrees
    np.testing.assert_allclose(np.asarray(shard.data), expected[shard.index], rtol=1e-4, atol=1e-4)

# a training loop written for jax.jit, run with jax.jit replaced by shardc.jit: optax, grads
# through a jitted helper, donation, a debug print; same losses and parameter shards
import optax  # noqa: E402
from jax.experimental.multihost_utils import process_allgather  # noqa: E402

tx = optax.adamw(1e-2)
params = {"w1": global_array(w1_np, P(None, "y")), "w2": global_array(w2_np, P())}


def train(jit):
    loss_fn = jit(lambda p, x: (mlp(x, p["w1"], p["w2"]) ** 2).mean())

    def step(p, opt_state, x):
        loss, grads = jax.value_and_grad(loss_fn)(p, x)
        jax.debug.print("loss {l}", l=loss)
        updates, opt_state = tx.update(grads, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, loss

    step = jit(step, donate_argnums=(0, 1))
    p = jax.tree.map(lambda a: a * 1.0, params)  # a copy of its own: it is donated
    o, losses = tx.init(p), []
    for _ in range(3):
        p, o, loss = step(p, o, x)
        losses.append(float(loss))  # replicated: readable in every process
    return p, losses


ref_p, ref_losses = train(jax.jit)
got_p, got_losses = train(lambda f, **kw: shardc.jit(f, mesh=mesh, **kw))
np.testing.assert_allclose(got_losses, ref_losses, rtol=1e-5)
for name in params:  # gathered across both processes (a collective, not a host copy trick)
    np.testing.assert_allclose(process_allgather(got_p[name], tiled=True),
                               process_allgather(ref_p[name], tiled=True), rtol=1e-4, atol=1e-5)
print(f"ok {pid} {checked}", flush=True)
jax.distributed.shutdown()
