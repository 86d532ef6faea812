"""Reading inputs and writing outputs for the subcommands (`-` is stdin/stdout).

Outputs are written only after the whole result exists, so a failing run leaves no half-written
file behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable

from shardc.api.plan import PipelineDebug
from shardc.dialect.errors import ParseError, ShardcError
from shardc.passes.pipeline import format_timing


def read_input(path: str) -> tuple[str, str]:
    """(text, name for messages) of `path`, or of stdin for `-`."""
    if path == "-":
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        with open(path, "rb") as f:
            data, name = f.read(), path
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ParseError(
            f"{name}:{line}:{col}: invalid UTF-8 at byte offset {e.start} "
            f"(byte 0x{data[e.start]:02x}): MLIR text must be UTF-8",
            hint="re-encode the file as UTF-8, or write the character as an escape in a string",
        ) from None


def write_output(path: str | None, text: str) -> None:
    """Write `text` to `path` atomically, or to stdout when `path` is None or `-`."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ShardcError(
            f"cannot write {path}: directory {os.path.dirname(path) or directory} does not exist",
            hint="create the directory first, or give -o a path in an existing one",
        )
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".shardc-", suffix=".tmp")
    except OSError as e:  # the directory is not writable (the temporary file is ours)
        raise ShardcError(f"cannot write {path}: {e.strerror or e}",
                          hint="give -o a path in a directory you can write") from None
    try:
        # mkstemp makes the file 0600: give it the mode a plain open() would (an existing
        # file keeps its own)
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(fd, mode)
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


def split_chunks(text: str) -> list[str]:
    """Split at `// -----` lines, padding each chunk so line numbers stay those of the file."""
    out: list[str] = []
    lines = text.split("\n")
    start = 0
    for i, line in enumerate([*lines, "// -----"]):
        if line.strip() == "// -----":
            out.append("\n" * start + "\n".join(lines[start:i]))
            start = i + 1
    return [c for c in out if c.strip()]


def run_chunks(text: str, split: bool, run_one: Callable[[str], str]) -> tuple[str, int]:
    """`run_one(text)`, or with `split` `run_one` per `// -----` chunk (`--split-input-file`):
    outputs joined by `// -----` lines; a chunk's `ShardcError` is printed as one `error:` line
    and the other chunks still run. Returns (output, number of chunks that failed)."""
    if not split:
        return run_one(text), 0

    outs: list[str] = []
    failed = 0
    for chunk in split_chunks(text):
        try:
            outs.append(run_one(chunk))
        except ShardcError as e:
            failed += 1
            sys.stdout.flush()
            print(f"error: {e.first_line()}", file=sys.stderr, flush=True)
    return "// -----\n".join(outs), failed


def add_pipeline_arguments(parser: argparse.ArgumentParser, split_help: str) -> None:
    """The flags every pipeline subcommand shares: checks, dumps, split input."""
    parser.add_argument(
        "--no-check-replication",
        action="store_true",
        help="do not reject shard_map outputs that may vary along an axis their out_sharding "
        "leaves unmentioned (JAX's check_vma=False)",
    )
    parser.add_argument(
        "--dump-after",
        action="append",
        default=[],
        metavar="PASS",
        help="print the module on stderr after pass PASS (repeatable; `all` for every pass)",
    )
    parser.add_argument(
        "--timing",
        action="store_true",
        help="print the wall time of parsing, of every pass and of printing on stderr "
        "(as MLIR's -mlir-timing)",
    )
    parser.add_argument(
        "--disable-pass",
        action="append",
        default=[],
        metavar="PASS",
        help="leave pass PASS out of the pipeline (repeatable; names as for --dump-after)",
    )
    parser.add_argument("--split-input-file", action="store_true", help=split_help)


def pipeline_debug(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The `--dump-after`, `--disable-pass` and `--timing` flags as `shardc.api.plan.PipelineDebug`
    (its `timings` list is filled only with `--timing`)."""
    return PipelineDebug(
        dump_after=tuple(args.dump_after),
        disable=tuple(args.disable_pass),
        timings=[] if args.timing else None,
    )


def write_timing(args: argparse.Namespace, timings: list[tuple[str, float]] | None) -> None:
    """With `--timing`, the execution time report of `timings` on stderr."""
    if args.timing and timings is not None:
        sys.stderr.write(format_timing(timings))
