"""`shardc plan`: the collectives a layout implies, with bytes, cause and fix, before XLA runs."""

from __future__ import annotations

import argparse
import sys

from shardc.api.plan import plan

from .cmd_propagate import add_option_arguments, options_from_args
from .io import pipeline_debug, read_input, run_chunks, write_output, write_timing

HELP = (
    "List the collectives of the program that runs from a module (the compiled form XLA is "
    "handed, laid out as XLA lays it out): kind, mesh axes, bytes per device, value, op, "
    "location, cause and fix, totals per kind and axis, and memory."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input .mlir file, or - for stdin")
    parser.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    parser.add_argument("--json", action="store_true", help="write the plan as JSON")
    parser.add_argument(
        "--check",
        action="store_true",
        help="also compile the layout with XLA (virtual CPU devices where this machine lacks "
        "the mesh's) and match each planned collective to the compiled ones; with --json, "
        "write the comparison",
    )
    parser.add_argument(
        "--as-propagated",
        action="store_true",
        help="plan shardc's propagated layout as it is, without asking XLA's own propagation "
        "where the program that runs lays values out otherwise (faster; what shardc's layout "
        "implies)",
    )
    add_option_arguments(parser)


def run(args: argparse.Namespace) -> int:
    text, name = read_input(args.input)
    options = options_from_args(args)
    debug = pipeline_debug(args)

    def run_one(chunk: str) -> str:
        result = plan(
            chunk,
            options=options,
            source_name=name,
            verify=not args.no_verify,
            debug=debug,
            check=args.check,
            as_propagated=args.as_propagated,
        )
        for op_name, n in sorted(result.ruleless.items()):  # as `propagate` names them
            print(
                f"no sharding rule for {op_name} ({n} op{'s' if n != 1 else ''}): "
                "nothing propagates through it",
                file=sys.stderr,
            )
        if args.json:
            return result.check.json_text() if args.check else result.json_text()
        return result.table()

    out, failed = run_chunks(text, args.split_input_file, run_one)
    write_output(args.output, out)
    write_timing(args, debug.timings)
    return 1 if failed else 0
