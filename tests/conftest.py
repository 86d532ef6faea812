"""Test bed: 8 virtual CPU devices, set before jax is imported anywhere; and, under
pytest-xdist, how a worker that dies without a word died.

A worker killed from outside (the kernel's OOM killer when the machine runs short of memory,
SIGKILL) or by a native crash (SIGSEGV, or SIGABRT from an XLA `Check failed`) leaves no Python
traceback: xdist reports only "node down: Not properly terminated". The hook below reads the
worker's exit status and names the signal. The suite's settings (pyproject.toml) make such a
death end the run as a failure (`--max-worker-restart=0`: xdist 3.8's loadfile scheduler can
deadlock once it replaces a crashed worker: the dead worker's finished files go back on the
queue as empty units, a worker holding its last test waits for a next one that never comes)
and bound each test (pytest-timeout).
"""

import os
import signal
import subprocess
import sys
from typing import Any

import pytest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# what a worker's fatal signal most likely means on this test bed
_SIGNAL_CAUSES = {
    signal.SIGKILL: "killed from outside the process: most likely the kernel's OOM killer "
    "(the machine ran short of memory), else a kill",
    signal.SIGABRT: "aborted: a native assertion (XLA's `Check failed`, printed on stderr above)",
    signal.SIGSEGV: "a segmentation fault in native code (faulthandler's trace on stderr above)",
}


def worker_exit(node: Any, wait_s: float = 5.0) -> str | None:
    """How the xdist worker process behind `node` ended (reaping it), or None where its
    process cannot be read (another gateway kind, or still running after `wait_s`)."""
    popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    if not isinstance(popen, subprocess.Popen):
        return None
    try:
        code = popen.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return None
    if code >= 0:
        return f"exited with status {code}"
    sig = signal.Signals(-code)
    return f"ended by {sig.name}: {_SIGNAL_CAUSES.get(sig, 'a fatal signal')}"


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's hook on a worker going down: for one that crashed, say how it ended."""
    if not error:
        return
    how = worker_exit(node)
    if how is None:
        return
    line = f"[{getattr(node.gateway, 'id', 'worker')}] {how}"
    config = getattr(node, "config", None)
    reporter = config.pluginmanager.getplugin("terminalreporter") if config else None
    if reporter is not None:
        reporter.write_line(line, red=True)
    else:
        print(line, file=sys.stderr, flush=True)
