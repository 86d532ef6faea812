"""`shardc compile SCRIPT.py`: run a user's script and write the propagated module of its entries.

An entry is a `shardc.jit` function marked with `@shardc.entry(*example_args)` at module level
of the script (example arguments may be `jax.ShapeDtypeStruct`s). The script runs with
`__name__ == "__shardc__"`, so its `if __name__ == "__main__":` block does not.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from typing import Any

from shardc.backend.exporter import export_text
from shardc.dialect.errors import ShardcError, unknown_name
from shardc.passes.pipeline import CLI
from shardc.passes.propagation.options import STRATEGIES

from .io import write_output

HELP = "Run a Python script and write the propagated StableHLO + sdy module of its entry functions."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="Python script declaring @shardc.entry functions")
    parser.add_argument("--entry", action="append", default=None, metavar="NAME",
                        help="entry to compile (repeatable; default: all entries of the script)")
    parser.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    parser.add_argument("--mesh", default=None, metavar="x=4,y=2",
                        help="compile for this mesh instead of the entry's own (same axis names)")

    parser.add_argument("--strategy", choices=STRATEGIES, default=None,
                        help="propagation factor strategy (default: the options' default)")
    parser.add_argument("--format", choices=("text", "pretty", "generic"), default="pretty",
                        help="output syntax (text is pretty)")
    parser.add_argument("--pin", action="store_true",
                        help="export mode pin: a closed constraint after every op result")
    parser.add_argument("--show", action="append", default=None, metavar="NAME",
                        help="print the sharding grid of value NAME (e.g. %%arg0) on stderr")
    parser.add_argument("--plan", action="store_true",
                        help="print each entry's communication plan (collectives, bytes, cause, "
                        "fix, memory; as `shardc plan`) on stderr")
    parser.add_argument("--listing", action="store_true",
                        help="print every value with its sharding and source line on stderr")
    parser.add_argument("--keep-redundant-collectives", action="store_true",
                        help="do not rewrite collectives of shard_map regions that act on "
                        "device-invariant values (rewritten by default, as .compile() does)")
    parser.add_argument("--no-check-replication", action="store_true",
                        help="skip the check that shard_map outputs declared replicated along a "
                        "manual axis do not vary along it")


def _user_error(script: str, exc: BaseException) -> Any:
    """A one-line ShardcError naming the script's line that raised."""
    import traceback

    where = script
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if os.path.abspath(frame.filename) == os.path.abspath(script):
            where = f"{script}:{frame.lineno}"
            break
    text = str(exc).strip().splitlines()
    return ShardcError(f"{where}: {type(exc).__name__}: {text[0] if text else ''}".rstrip(": "))


def load_entries(script: str) -> dict[str, Any]:
    """Run `script` and return its entries by name."""
    import runpy

    if not os.path.exists(script):
        raise FileNotFoundError(2, "no such file", script)
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        namespace = runpy.run_path(script, run_name="__shardc__")
    except ShardcError as e:
        raise e from None
    except SystemExit as e:
        raise ShardcError(f"{script} exited with status {e.code} while loading") from None
    except BaseException as e:  # noqa: BLE001 - any error in the user's script is one line
        if isinstance(e, KeyboardInterrupt):
            raise
        raise _user_error(script, e) from None
    finally:
        sys.path.pop(0)
    entries = {}
    for value in namespace.values():
        args = getattr(value, "entry_args", None)
        if args is not None:
            entries[value.entry_name] = value
    if not entries:
        raise ShardcError(
            f"{script} declares no entry",
            hint="mark a shardc.jit function with @shardc.entry(*example_args)",
        )
    return entries


def run(args: argparse.Namespace) -> int:
    entries = load_entries(args.script)
    names = args.entry or list(entries)
    for name in names:
        if name not in entries:
            raise unknown_name("entry", name, list(entries), where=args.script)
    fmt = "pretty" if args.format == "text" else args.format
    mode = "pin" if args.pin else "annotate"
    chunks = []
    tty = sys.stderr.isatty()
    for name in names:
        fun = entries[name]
        if args.mesh:
            fun = fun.with_mesh(args.mesh)
        fun = copy.copy(fun)
        fun.caller = CLI  # fix texts name this command's flags
        if args.no_check_replication:
            fun.check_replication = False
        start = time.perf_counter()
        if tty:
            print(f"shardc: compiling {name} ...", file=sys.stderr, end="\r", flush=True)
        try:
            lowered = fun.lower(*fun.entry_args, strategy=args.strategy)
        except ShardcError:
            raise
        except Exception as e:  # noqa: BLE001 - tracing runs the user's code
            raise _user_error(args.script, e) from None
        rewrite = fun.remove_redundant_collectives and not args.keep_redundant_collectives
        # with the Python source locations JAX traced (op names and lines), so that a later
        # `shardc plan` of the written module names values as the script does
        text = export_text(lowered.exported(mode, rewrite).module, fmt, with_locs=True)
        for line in lowered.removed_collectives if rewrite else []:
            print(f"note: {name}: {line}", file=sys.stderr)
        elapsed = time.perf_counter() - start
        if tty or elapsed > 5:
            print(f"shardc: compiled {name} in {elapsed:.1f}s", file=sys.stderr)
        label = f"// entry: {name}\n" if len(names) > 1 else ""
        if args.listing:
            sys.stderr.write(label + lowered.listing())
        if args.plan:
            sys.stderr.write(label + lowered.plan().table())
        for value in args.show or ():
            sys.stderr.write(label + lowered.show(value, print_it=False))
        header = f"// entry: {name}\n" if len(names) > 1 else ""
        chunks.append(header + text)
    write_output(args.output, "// -----\n".join(chunks))
    return 0
