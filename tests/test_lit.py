"""The lit + FileCheck golden suite under tests/lit, one pytest test per lit file.

Run in this process by tests/lit_runner.py (shardc and filecheck in-process, `not shardc` error
cases through the real executable). Files whose every `shardc` is such an error case run on
background threads from the first lit test on, while the others run here in turn.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from tests.lit_runner import LIT_DIR, Runner, discover, restored_registries

RUNNER = Runner()
FILES = discover([LIT_DIR], RUNNER.config)
# the files that run here first, while the others run on the background threads
NAMES = sorted(
    (os.path.relpath(f, LIT_DIR) for f in FILES), key=lambda n: not RUNNER.needs_main_thread(
        os.path.join(LIT_DIR, n))
)


@pytest.fixture(scope="module")
def background(request: pytest.FixtureRequest) -> Iterator[dict[str, Future]]:
    """The selected lit files that need no in-process shardc, started on two threads (under
    pytest-xdist, `--dist loadfile` keeps this module's tests on one worker)."""
    selected = {
        item.callspec.params["name"]
        for item in request.session.items
        if getattr(item, "function", None) is test_lit
    }
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lit")
    futures = {
        name: pool.submit(RUNNER.run_file, os.path.join(LIT_DIR, name))
        for name in NAMES
        if name in selected and not RUNNER.needs_main_thread(os.path.join(LIT_DIR, name))
    }
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("name", NAMES)
def test_lit(name: str, background: dict[str, Future]) -> None:
    if name in background:
        result = background[name].result()
    else:
        with restored_registries():
            result = RUNNER.run_file(os.path.join(LIT_DIR, name))
    assert result.passed, "\n".join(result.transcript)


def test_the_suite_is_what_lit_discovers() -> None:
    """The files run here are the ones `lit tests/lit` runs (lit.cfg.py's suffixes, excludes)."""
    proc = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "--show-tests", LIT_DIR],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = sorted(
        line.split(" :: ", 1)[1] for line in proc.stdout.splitlines() if " :: " in line
    )
    assert listed == sorted(NAMES)
