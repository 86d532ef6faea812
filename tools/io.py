"""Reading inputs and writing outputs for the subcommands (`-` is stdin/stdout).

Outputs are written only after the whole result exists, so a failing run leaves no half-written
file behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile


def read_input(path: str) -> tuple[str, str]:
    """(text, name for messages) of `path`, or of stdin for `-`."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def write_output(path: str | None, text: str) -> None:
    """Write `text` to `path` atomically, or to stdout when `path` is None or `-`."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".shardc-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def add_io_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input .mlir file, or - for stdin")
    parser.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    parser.add_argument(
        "--format",
        choices=("pretty", "generic"),
        default="pretty",
        help="output syntax: the dialects' own (pretty, as JAX prints) or MLIR's generic form",
    )
    parser.add_argument(
        "--debug-locs", action="store_true", help="print source locations in the output"
    )
