"""The `shardc` command line: one module per subcommand.

Each subcommand module defines `HELP`, `add_arguments(parser)` and `run(args) -> int`; none
imports jax or jaxlib before a command that needs them runs, so `shardc --help` starts no JAX.
Every `ShardcError` becomes one line `error: ...` on stderr and a non-zero exit; no traceback
ever reaches the user.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from shardc import __version__
from shardc.dialect.errors import ShardcError

from . import cmd_check, cmd_compile, cmd_diff, cmd_opt, cmd_plan, cmd_propagate, cmd_rules

# subcommand name -> its module
SUBCOMMANDS: dict[str, ModuleType] = {
    "opt": cmd_opt,
    "propagate": cmd_propagate,
    "check": cmd_check,
    "compile": cmd_compile,
    "rules": cmd_rules,
    "plan": cmd_plan,
    "diff": cmd_diff,
}


class UsageError(Exception):
    """A command line argparse rejects (unknown flag, bad choice, missing input)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line `error: ...` and exit 1, like every other error."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="shardc",
        description="shardc: sharding-annotation compiler for JAX/XLA (StableHLO + sdy).",
    )
    parser.add_argument("--version", action="version", version=f"shardc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, mod in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except ShardcError as e:
        print(f"error: {e.first_line()}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"error: no such file: {e.filename}", file=sys.stderr)
        return 1
    except IsADirectoryError as e:
        print(f"error: is a directory: {e.filename}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # noqa: BLE001 - a bug in shardc: one line, details on request
        import os

        if os.environ.get("SHARDC_DEBUG"):
            raise
        print(
            f"error: internal error: {type(e).__name__}: {e} (set SHARDC_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
