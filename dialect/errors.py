"""The one error type users see, and the phrase helpers that keep messages uniform.

Every error a user can cause is a `ShardcError`: the first line says what was given and which
constraint it breaks (the CLI prints only that line); further lines may add context and a fix.
"""

from __future__ import annotations


class ShardcError(Exception):
    """A user-facing error: bad MLIR, bad sharding, bad shard_map region, ..."""

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self.full_text())

    def first_line(self) -> str:
        where = f"{self.location}: " if self.location else ""
        line = self.message.splitlines()[0] if self.message else ""
        if self.hint:
            return f"{where}{line}; {self.hint}"
        return f"{where}{line}"

    def full_text(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text


class ParseError(ShardcError):
    """Text that does not parse (MLIR, sharding syntax, rule syntax, spec syntax)."""


class ShardingError(ShardcError, ValueError):
    """A sharding that is invalid for its mesh or its tensor (a `ValueError` too, as `jax.jit`
    raises for the same mistakes: an unknown axis, a dim the axes do not divide, ...)."""


class VerificationError(ShardcError):
    """A module whose structure, types or shardings break an invariant."""


class ManualComputationError(ShardcError, ValueError):
    """A shard_map region whose shapes, axes or replication do not hold (a `ValueError` too,
    as JAX's own shard_map errors are)."""


class ArgumentError(ShardcError, ValueError):
    """A function's arguments that do not fit how it was jitted: a static or donated argument
    number out of range, an unhashable static value, a parameter name it does not have (a
    `ValueError` too, as `jax.jit` raises for the same mistakes)."""


class ArgumentTypeError(ShardcError, TypeError):
    """An argument of the wrong kind: a value that is not an array, a static number that is not
    an int, a compiled function called with other arguments than it was compiled for (a
    `TypeError` too, as `jax.jit` raises for the same mistakes)."""


class UnsupportedError(ShardcError):
    """Input that is valid but that shardc does not handle."""


def caret_excerpt(text: str, line: int, column: int) -> str:
    """The source line `line` (1-based) of `text` with a caret under `column` (1-based)."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1]
    return f"{src}\n{' ' * max(column - 1, 0)}^"
