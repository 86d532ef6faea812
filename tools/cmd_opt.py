"""`shardc opt`: import a module, run the requested rewrites, export it."""

from __future__ import annotations

import argparse

from shardc.api.propagate import dump_to_stderr
from shardc.backend.exporter import export_text
from shardc.backend.importer import import_text
from shardc.backend.xla_form import ShardyOracle
from shardc.passes.context import ImportNotes
from shardc.passes.manual.redundant import Report as RedundantReport
from shardc.passes.pipeline import (
    CLI,
    PipelineOptions,
    parse_pipeline,
    run_passes,
    run_pipeline,
)
from shardc.passes.propagation.report import PropagationReport
from shardc.runtime import suspended_gc

from .io import (
    add_io_arguments,
    add_pipeline_arguments,
    read_input,
    run_chunks,
    write_output,
    write_timing,
)

HELP = "Parse, verify and re-print a StableHLO + sdy module, running the requested rewrites."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_io_arguments(parser)
    parser.add_argument(
        "--remove-redundant-collectives",
        action="store_true",
        help="rewrite collectives of shard_map regions that act on device-invariant values",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="skip shardc's verifier and shard_map checks on the input",
    )
    parser.add_argument(
        "--pass-pipeline",
        metavar="SPEC",
        default=None,
        help="run exactly these passes, e.g. 'verify,split-constants,propagate{strategy=basic},"
        "merge-constants' (any pass alone, with its options; instead of the other flags' "
        "pipeline)",
    )
    add_pipeline_arguments(
        parser,
        "run each chunk between `// -----` lines as its own module; outputs are joined by "
        "`// -----`, every chunk's error is reported, and the exit is non-zero if any failed",
    )


def run(args: argparse.Namespace) -> int:
    import sys
    import time

    text, name = read_input(args.input)
    passes = parse_pipeline(args.pass_pipeline) if args.pass_pipeline is not None else None
    oracle = ShardyOracle() if passes is not None and any(p.name == "pin" for p in passes) else None
    pipeline = PipelineOptions(
        verify=not args.no_verify,
        check_manual=not args.no_verify,
        check_replication=not args.no_verify and not args.no_check_replication,
        propagate=False,
        remove_redundant_collectives=args.remove_redundant_collectives,
        dump_after=tuple(args.dump_after),
        disable=tuple(args.disable_pass),
    )

    timings: list[tuple[str, float]] = []
    clock = time.perf_counter

    @suspended_gc()
    def run_one(chunk: str) -> str:
        start = clock()
        module = import_text(chunk, name)
        parsed = clock()
        dump = dump_to_stderr if args.dump_after else None
        if passes is not None:
            ctx = run_passes(module, passes, CLI, dump, pipeline.dump_after, oracle)
        else:
            ctx = run_pipeline(module, pipeline, CLI, dump)
        redundant = ctx.result(RedundantReport)
        notes = ctx.result(ImportNotes)
        for line in [
            *(redundant.lines() if redundant is not None else []),
            *(notes.warnings if notes is not None and ctx.result(PropagationReport) is None else []),
        ]:
            print(f"note: {line}", file=sys.stderr)
        ran = clock()
        out = export_text(module, args.format, with_locs=args.debug_locs)
        timings.extend([("parse", parsed - start), *ctx.timings, ("print", clock() - ran)])
        return out

    out, failed = run_chunks(text, args.split_input_file, run_one)
    write_output(args.output, out)
    write_timing(args, timings)
    return 1 if failed else 0
