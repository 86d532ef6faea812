"""`shardc check`: check the shard_map regions of a module and print what they do."""

from __future__ import annotations

import argparse

HELP = (
    "Check the sdy.manual_computation (shard_map) regions of a module: local shapes, "
    "collectives and their mesh axes, device variance, and the replication of unmapped outputs."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input .mlir file, or - for stdin")
    parser.add_argument(
        "--no-check-replication",
        action="store_true",
        help="do not reject outputs that may vary along an axis their out_sharding leaves "
        "unmentioned (JAX's check_vma=False)",
    )


def run(args: argparse.Namespace) -> int:
    from shardc.api_check import check
    from shardc.importer import import_text

    from .io import read_input

    text, name = read_input(args.input)
    module = import_text(text, name)
    report = check(module, check_replication=not args.no_check_replication)
    print("\n".join(report.lines()))
    return 0
