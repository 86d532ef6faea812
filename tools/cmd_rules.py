"""`shardc rules`: print the op sharding rule of every op of a module, one line each."""

from __future__ import annotations

import argparse

from shardc.backend.importer import import_text
from shardc.dialect.rules.model import print_rule
from shardc.dialect.rules.registry import rule_for

from .io import read_input, run_chunks, write_output

HELP = "Print the sharding rule (#sdy.op_sharding_rule) of every op of a module, in order."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input .mlir file, or - for stdin")
    parser.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    parser.add_argument(
        "--conservative",
        action="store_true",
        help="the rules of conservative propagation (propagate --conservative; Shardy's "
        "conservative-propagation): no factor along a concatenate's dim or a convolution's "
        "spatial dims, blocked permutation factors of pad, slice, reduce_window and "
        "select_and_scatter",
    )
    parser.add_argument(
        "--split-input-file",
        action="store_true",
        help="print the rules of each chunk between `// -----` lines as its own module; outputs "
        "are joined by `// -----`, every chunk's error is reported, and the exit is non-zero if "
        "any failed",
    )


def run(args: argparse.Namespace) -> int:
    text, name = read_input(args.input)

    def run_one(chunk: str) -> str:
        module = import_text(chunk, name)
        lines = []
        for op in module.op.walk():
            if op is module.op:
                continue
            rule = rule_for(op, conservative=args.conservative)
            lines.append(f"{op.name}: {print_rule(rule) if rule is not None else 'no rule'}")
        return "\n".join(lines) + ("\n" if lines else "")

    out, failed = run_chunks(text, args.split_input_file, run_one)
    write_output(args.output, out)
    return 1 if failed else 0
