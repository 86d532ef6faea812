"""`shardc opt`: import a module, run the requested rewrites, export it."""

from __future__ import annotations

import argparse

from .io import add_io_arguments, read_input, write_output

HELP = "Parse, verify and re-print a StableHLO + sdy module, running the requested rewrites."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_io_arguments(parser)
    parser.add_argument(
        "--remove-redundant-collectives",
        action="store_true",
        help="rewrite collectives of shard_map regions that act on device-invariant values",
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip shardc's verifier on the input"
    )


def run(args: argparse.Namespace) -> int:
    from shardc.exporter import export_text
    from shardc.importer import import_text

    text, name = read_input(args.input)
    module = import_text(text, name)
    if not args.no_verify:
        from shardc.passes.verify import verify_module

        verify_module(module)
    if args.remove_redundant_collectives:
        from shardc.passes.manual.redundant import remove_redundant_collectives

        report = remove_redundant_collectives(module)
        for line in report.lines():
            import sys

            print(f"note: {line}", file=sys.stderr)
    write_output(args.output, export_text(module, args.format, with_locs=args.debug_locs))
    return 0
