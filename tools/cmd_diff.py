"""`shardc diff`: what changes between two layouts of one program (shardings, collectives, bytes)."""

from __future__ import annotations

import argparse

from shardc.api.plan import diff

from .io import read_input, write_output

HELP = (
    "Compare two layouts of the same program: values whose sharding differs, collectives added "
    "and removed, and the change in planned bytes (B - A)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="layout A (.mlir)")
    parser.add_argument("b", help="layout B (.mlir)")
    parser.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    parser.add_argument("--json", action="store_true", help="write the diff as JSON")
    parser.add_argument("--no-verify", action="store_true", help="skip the verifier")


def run(args: argparse.Namespace) -> int:
    a, _ = read_input(args.a)
    b, _ = read_input(args.b)
    result = diff(a, b, verify=not args.no_verify)
    write_output(args.output, result.json_text() if args.json else result.table())
    return 0
