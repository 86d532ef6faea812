"""The one error type users see, and the phrase helpers that keep messages uniform.

Every error a user can cause is a `ShardcError`: the first line says what was given and which
constraint it breaks (the CLI prints only that line); further lines may add context and a fix.

A mistake that can be made in several places (an unknown axis, mesh or pass name, a dim its axes
do not divide, a sharding of the wrong rank, an axis used twice, an option value out of its set,
...) is phrased by one function below, which returns the error for the caller to raise. Each
takes `given`: the value as the user wrote it, with where it sits (`in_shardings[0] = x, _`,
`sdy.sharding_constraint`, `pass pipeline 'verify'`), so the same mistake reads the same whether
the MLIR verifier, the JAX frontend or a pass catches it. The helpers take plain strings and
numbers (no shardc types), so every layer can import this module.
"""

from __future__ import annotations

from collections.abc import Sequence


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


def _lead(given: str) -> str:
    return f"{given}: " if given else ""


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) or "none"


def unknown_axis(
    name: str,
    mesh: str,
    axes: Sequence[str],
    *,
    given: str = "",
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` names mesh axis `name`, which mesh `mesh` (its text, `<["x"=4]>`) does not have.

    The words `unknown axis name: "q"` are Shardy's verifier's, so shardc and sdy-opt read alike.
    """
    return (cls or ShardingError)(
        f'{_lead(given)}unknown axis name: "{name}" (mesh axes: {mesh})',
        location=location,
        hint=hint or f"use one of the mesh axes: {_names(axes)}",
    )


def unknown_mesh(
    name: str,
    known: Sequence[str],
    *,
    given: str = "",
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` refers to mesh `@name`, which the module does not declare (`known`: those it does)."""
    return (cls or ShardingError)(
        f"{_lead(given)}unknown mesh: @{name} "
        f"(meshes in the module: {_names(['@' + m for m in known])})",
        location=location,
        hint="declare it with `sdy.mesh @name = <[...]>` or use a declared mesh",
    )


def unknown_name(
    kind: str,
    name: str,
    known: Sequence[str],
    *,
    where: str = "",
    given: str = "",
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
) -> ShardcError:
    """`given` (a flag, an option) names a `kind` (pass, entry, value, factor, option, ...)
    `name` that `where` (a script, `@main`, a pass) does not have; `known`: the names it has."""
    in_where = f" in {where}" if where else ""
    return (cls or ShardcError)(
        f"{_lead(given)}no {kind} named {name!r}{in_where}",
        hint=hint or f"name one of: {_names(known)}",
    )


def not_one_of(
    what: str,
    value: object,
    choices: Sequence[str],
    *,
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
) -> ShardcError:
    """Option `what` was given `value`, which is not one of its `choices`."""
    return (cls or ShardcError)(
        f"{what} = {value!r} is not one of {_names(choices)}",
        hint=hint or f"use one of {_names(choices)}",
    )


def bad_value(
    what: str,
    value: object,
    expected: str,
    *,
    hint: str,
    cls: type[ShardcError] | None = None,
) -> ShardcError:
    """Option or argument `what` was given `value`, which is not `expected` ("a boolean",
    "a size", "a mesh", ...)."""
    return (cls or ShardcError)(f"{what} = {value!r} is not {expected}", hint=hint)


def not_divisible(
    given: str,
    dim: int,
    size: int,
    axes: str,
    shards: int,
    *,
    shape: object = None,
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` splits dim `dim` of size `size` (of a value of `shape`, where it helps) over `axes`
    (their text: names with sizes or the mesh), `shards` ways in all, and `shards` does not
    divide `size`. The fix always offers padding; `hint` adds the caller's alternatives."""
    of_shape = f" (shape {shape})" if shape is not None else ""
    fix = f"pad dim {dim} to a multiple of {shards}"
    return (cls or ShardingError)(
        f"{given} splits dim {dim} of size {size}{of_shape} over {axes} ({shards} shards), "
        f"and {shards} does not divide {size}",
        location=location,
        hint=f"{fix}, {hint}" if hint else fix,
    )


def rank_mismatch(
    given: str,
    rank: int,
    value: str,
    value_rank: int,
    *,
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` has `rank` dim shardings, but the value it shards (`value`: `of shape (8, 8)` or
    its type) has rank `value_rank`. The words are Shardy's verifier's, which catches the same
    mistake in MLIR input."""
    return (cls or ShardingError)(
        f"{given}: sharding doesn't match tensor rank: {rank} != {value_rank} (value {value})",
        location=location,
        hint=hint or "give exactly one dim sharding per dim of the value",
    )


def count_mismatch(
    given: str,
    count: int,
    items: str,
    expected: int,
    targets: str,
    *,
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` has `count` `items` (shardings, block arguments, ...) for `expected` `targets`
    (operands, results, values, ...): the two lists must pair up one to one."""
    return (cls or ShardcError)(
        f"{given} has {count} {items} for {expected} {targets}",
        location=location,
        hint=hint or f"give exactly one {items.removesuffix('s')} per "
        f"{targets.removesuffix('s')}",
    )


def duplicate_axis(
    axis: str,
    *,
    given: str = "",
    noun: str = "ref",
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` uses mesh axis `axis` (its text, `"x"` or `"x":(1)2`) more than once; `noun`:
    "ref" for a use in a sharding, "name" for a mesh's declaration. The words are Shardy's
    verifier's (`duplicate axis ref: "x"`), which catches the same mistake in MLIR input."""
    return (cls or ShardingError)(
        f"{_lead(given)}duplicate axis {noun}: {axis}",
        location=location,
        hint=hint or "name each axis once: in one dim, or in replicated=/unreduced=, "
        "not in two places",
    )


def wrong_mesh(
    given: str,
    mesh: str,
    expected: str,
    where: str,
    *,
    hint: str,
    cls: type[ShardcError] | None = None,
) -> ShardcError:
    """`given` is on mesh `mesh`, but `where` (the function, the context) is on `expected`."""
    return (cls or ShardingError)(
        f"{given} is on mesh {mesh}, but {where} is on mesh {expected}", hint=hint
    )


def no_main(what: str = "the module") -> ShardcError:
    """`what` has no `@main` function, the entry every lowering and export starts from."""
    return ShardcError(
        f"{what} has no @main function",
        hint="name the entry function @main (jax.jit's lowering does)",
    )


def xla_refused(what: str, first: str, *, hint: str | None = None) -> ShardcError:
    """XLA refused `what` (compiling the module, ...); `first` is its first error line."""
    return ShardcError(f"XLA could not {what}: {first}", hint=hint)


def syntax_error(
    what: str,
    text: str,
    column: int,
    *,
    hint: str | None = None,
    cls: type[ShardcError] | None = None,
) -> ShardcError:
    """`text` does not read as a `what` (sharding syntax, sharding spec, rule spec, pass
    pipeline) at `column` (1-based): the text with a caret under that column follows the first
    line. A long text is cut 20 characters after the column."""
    excerpt = text if len(text) < 200 else text[: max(column + 20, 0)]
    return (cls or ParseError)(
        f"invalid {what} {excerpt!r} at column {column}\n"
        f"  {excerpt}\n  {' ' * max(column - 1, 0)}^",
        hint=hint,
    )


def bad_priority(token: str) -> ShardcError:
    """A dim priority written with leading zeros (`p01`): sdy's syntax takes `p1`."""
    return ParseError(
        f"priority {token!r} has leading zeros, which are not allowed",
        hint=f"write p{token.lstrip('?{}p').lstrip('0') or '0'}",
    )


def needs_devices(what: str, hint: str) -> ShardcError:
    """`what` (a cost analysis, an HLO text, a trace) needs the devices of the mesh, and the
    lowering was made for an abstract mesh or one bigger than this machine."""
    return ShardcError(f"{what} needs a lowering on the mesh's devices", hint=hint)


def not_an_array(given: str, type_name: str, *, hint: str) -> ShardcError:
    """Argument `given` (its path and value) is of type `type_name`, which is not an array."""
    return ArgumentTypeError(f"argument {given} of type {type_name} is not an array", hint=hint)


def unsupported(
    construct: str,
    by: str,
    *,
    given: str = "",
    why: str = "",
    hint: str,
    cls: type[ShardcError] | None = None,
    location: str | None = None,
) -> ShardcError:
    """`given` (an op, a call) holds `construct` (a dynamic dim, a tuple type, keyword
    arguments), which `by` (shardc's propagation, the pin export, an abstract lowering) does
    not handle; `why` says what it needs instead."""
    because = f" ({why})" if why else ""
    return (cls or UnsupportedError)(
        f"{_lead(given)}{construct}, not supported by {by}{because}",
        location=location,
        hint=hint,
    )
