"""Runs the lit + FileCheck golden suite under tests/lit as part of pytest."""

import os
import shutil
import subprocess
import sys

import pytest

LIT_DIR = os.path.join(os.path.dirname(__file__), "lit")


def test_lit_suite() -> None:
    if shutil.which("shardc") is None or shutil.which("filecheck") is None:
        pytest.fail("shardc and filecheck must be on PATH: run `pip install -e '.[test]'`")
    jobs = str(max(os.cpu_count() or 1, 1))
    proc = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-q", "-j", jobs, LIT_DIR],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
