"""`shardc check`: check the shard_map regions of a module and print what they do."""

from __future__ import annotations

import argparse

from shardc.api.check import check
from shardc.backend.importer import import_text
from shardc.dialect.errors import ShardcError
from shardc.passes.pipeline import CLI

from .io import read_input, split_chunks, write_output

HELP = (
    "Check the sdy.manual_computation (shard_map) regions of a module: local shapes, "
    "collectives and their mesh axes, device variance, and the replication of unmapped outputs."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input .mlir file, or - for stdin")
    parser.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    parser.add_argument(
        "--no-check-replication",
        action="store_true",
        help="do not reject outputs that may vary along an axis their out_sharding leaves "
        "unmentioned (JAX's check_vma=False)",
    )
    parser.add_argument(
        "--split-input-file",
        action="store_true",
        help="check each chunk between `// -----` lines as its own module; report every "
        "chunk's error and exit non-zero if any failed",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    text, name = read_input(args.input)
    if not args.split_input_file:
        write_output(args.output, _check_one(text, name, args))
        return 0
    failed = 0
    to_file = args.output not in (None, "-")
    report: list[str] = []
    for chunk in split_chunks(text):
        try:
            lines = _check_one(chunk, name, args)
        except ShardcError as e:
            failed += 1
            sys.stdout.flush()
            print(f"error: {e.first_line()}", file=sys.stderr, flush=True)
            continue
        if to_file:
            report.append(lines)
        else:
            print(lines, end="", flush=True)
    if to_file:
        write_output(args.output, "".join(report))
    return 1 if failed else 0


def _check_one(text: str, name: str, args: argparse.Namespace) -> str:
    """The report of one module, as lines ending in a newline."""
    module = import_text(text, name)
    report = check(module, check_replication=not args.no_check_replication, caller=CLI)
    return "\n".join(report.lines()) + "\n"
