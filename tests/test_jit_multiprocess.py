"""shardc.jit under multi-controller JAX: 2 processes x 4 CPU devices on 127.0.0.1 (gloo),
each compiling the same module for the global 4x2 mesh and checking its own shards of an MLP,
then a 3-step optax training loop (grads through a jitted helper, donation, a debug print) with
jax.jit replaced by shardc.jit: the same losses and parameters as jax.jit's in the same run."""

import os
import socket
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).parent / "multiprocess" / "mlp_worker.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_processes_run_an_mlp_and_train_it() -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    procs = [
        subprocess.Popen([sys.executable, str(WORKER), str(port), str(i)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(2)
    ]
    outputs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=240)
            outputs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i, (p, out) in enumerate(zip(procs, outputs, strict=True)):
        assert p.returncode == 0, out[-3000:]
        assert f"ok {i} 4" in out, out[-3000:]
    # jax.debug.print runs once per step on device 0 (process 0's), under jax.jit and shardc.jit
    prints = [line for line in outputs[0].splitlines() if line.startswith("loss ")]
    values = [float(line.split()[1]) for line in prints]
    assert len(values) == 6, prints
    for ref, got in zip(values[:3], values[3:], strict=True):
        assert abs(ref - got) <= 1e-5 * abs(ref), prints
