"""Every example compiles and runs on 8 virtual CPU devices with the unsharded numbers."""

import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.mark.parametrize("name", ["mlp", "priorities", "transformer_2d", "shard_map_matmul"])
def test_example_runs(name: str) -> None:
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, f"{name}.py")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "OK:" in proc.stdout
