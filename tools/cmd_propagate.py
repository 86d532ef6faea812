"""`shardc propagate`: Shardy's sharding propagation on a StableHLO + sdy module."""

from __future__ import annotations

import argparse
import sys
from dataclasses import MISSING, fields

from shardc.api.plan import explicit
from shardc.api.propagate import propagate_text
from shardc.passes.pipeline import CLI
from shardc.passes.propagation.options import STRATEGIES, PropagationOptions

from .io import (
    add_io_arguments,
    add_pipeline_arguments,
    pipeline_debug,
    read_input,
    run_chunks,
    write_output,
    write_timing,
)

HELP = "Propagate shardings through a StableHLO + sdy module, as Shardy does, and export it."

# option fields with a hand-written flag (the others get --<name> / --no-<name> from their type)
_EXTRA = {"debug_origins": "--explain"}


def _option_fields() -> list:
    return list(fields(PropagationOptions))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_io_arguments(parser)
    parser.add_argument(
        "--pin",
        action="store_true",
        help="also pin every op result with a closed sdy.sharding_constraint (export mode pin)",
    )
    parser.add_argument(
        "--explicit",
        action="store_true",
        help="write the communication plan into the module as explicit sdy collectives "
        "(sdy.all_gather, sdy.all_reduce, ...), as Shardy's explicit-reshard pipeline does",
    )
    add_option_arguments(parser)


def add_option_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag for every `PropagationOptions` field, and --no-verify (shared with `plan`)."""
    for f in _option_fields():
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not MISSING else None
        doc = f.metadata["help"]
        if f.name == "strategy":
            parser.add_argument(flag, choices=STRATEGIES, default=default, help=doc)
        elif f.name in _EXTRA:
            parser.add_argument(
                _EXTRA[f.name],
                flag,
                dest=f.name,
                action="store_true",
                default=default,
                help=doc + " (printed on stderr)",
            )
        elif isinstance(default, bool):
            parser.add_argument(
                flag, dest=f.name, action=argparse.BooleanOptionalAction, default=default, help=doc
            )
        elif isinstance(default, int):
            parser.add_argument(flag, dest=f.name, type=int, default=default, help=doc)
        elif isinstance(default, float):
            parser.add_argument(flag, dest=f.name, type=float, default=default, help=doc)
        elif isinstance(default, str):
            parser.add_argument(flag, dest=f.name, default=default, help=doc)
    parser.add_argument("--no-verify", action="store_true", help="skip the verifier")
    add_pipeline_arguments(
        parser,
        "propagate each chunk between `// -----` lines as its own module; outputs are joined "
        "by `// -----`, every chunk's error is reported, and the exit is non-zero if any failed",
    )


def options_from_args(args: argparse.Namespace):  # type: ignore[no-untyped-def]

    return PropagationOptions(**{f.name: getattr(args, f.name) for f in _option_fields()})


def run(args: argparse.Namespace) -> int:
    options = options_from_args(args)
    text, name = read_input(args.input)
    if args.explicit:
        debug = pipeline_debug(args)

        def explicit_one(chunk: str) -> str:
            return explicit(
                chunk,
                options=options,
                format=args.format,
                source_name=name,
                verify=not args.no_verify,
                debug=debug,
            )

        out, failed = run_chunks(text, args.split_input_file, explicit_one)
        write_output(args.output, out)
        write_timing(args, debug.timings)
        return 1 if failed else 0

    timings: list[tuple[str, float]] = []

    def run_one(chunk: str) -> str:
        out, report = propagate_text(
            chunk,
            options=options,
            mode="pin" if args.pin else "annotate",
            format=args.format,
            source_name=name,
            verify=not args.no_verify,
            check_replication=not args.no_check_replication,
            with_locs=args.debug_locs,
            dump_after=tuple(args.dump_after),
            disable=tuple(args.disable_pass),
            caller=CLI,
            timings=timings if args.timing else None,
        )
        err = sys.stderr
        for line in report.notes():  # one line per op kind without a rule, then warnings
            print(f"note: {line}", file=err)
        for line in report.round_dumps:
            print(f"dump: {line}", file=err)
        if options.debug_origins:
            print(f"note: {report.summary()}", file=err)
            for line in report.explanation:
                print(f"explain: {line}", file=err)
        return out

    out, failed = run_chunks(text, args.split_input_file, run_one)
    write_output(args.output, out)
    write_timing(args, timings)
    return 1 if failed else 0
