"""What an op or value is called where the program came from: the name in its MLIR location.

JAX writes every op's location as `loc("jit(f)/jvp(g)/dot_general"(callsite(...)))` and every
argument's as `loc("params['w1']")`; XLA keeps the outermost name as the HLO instruction's
`op_name` metadata. `loc_name` reads that name (after the module's `#locN` aliases are
expanded), `source_op_name` the op's, `value_label` a value's name for messages.
"""

from __future__ import annotations

import re

from shardc.dialect.ir import BlockArgument, Module, Operation, Value

_ALIAS = re.compile(r"#loc[\w]*")
_NAME = re.compile(r'^loc\("((?:[^"\\]|\\.)*)"(?!:\d)')

# the location name `--check` wraps every op's location in (`loc("shardc.op.7"(original))`),
# so that XLA's HLO metadata names the op each collective came from
TAG_PREFIX = "shardc.op."


def expand_loc(module: Module, loc: str | None) -> str | None:
    """`loc` with its `#locN` aliases replaced by their text (a few levels deep)."""
    if not loc:
        return None
    aliases = module.loc_aliases
    text = loc
    for _ in range(16):
        m = _ALIAS.search(text)
        if m is None:
            break
        repl = aliases.get(m.group(0))
        if repl is None:
            break
        if repl.startswith("loc(") and repl.endswith(")"):
            repl = repl[4:-1]  # an alias holds `loc(X)`: X goes where the alias was
        text = text[: m.start()] + repl + text[m.end() :]
    return text


def _outer_name(text: str) -> tuple[str, str] | None:
    """The outermost name of an expanded location and the location it wraps."""
    m = _NAME.match(text)
    if m is None:
        return None
    rest = text[m.end() :]
    inner = f"loc{rest[:-1]}" if rest.startswith("(") and rest.endswith(")") else ""
    return m.group(1).replace('\\"', '"'), inner


def loc_name(module: Module, loc: str | None) -> str | None:
    """The outermost name of a location (`jit(f)/dot_general`), None when it has none; a
    `--check` tag is looked through."""
    text = expand_loc(module, loc)
    while text:
        found = _outer_name(text)
        if found is None:
            return None
        name, inner = found
        if not name.startswith(TAG_PREFIX):
            return name
        text = inner
    return None


def source_op_name(module: Module, op: Operation) -> str | None:
    """The name XLA's HLO metadata gives `op` (`op_name`): its location's outermost name (a
    `--check` tag included)."""
    text = expand_loc(module, op.loc)
    found = _outer_name(text) if text else None
    return found[0] if found is not None else None


_WRAPPER = re.compile(
    r"^(?:jvp|transpose|vmap|remat|checkpoint|pjit|jit|custom_jvp_call|custom_vjp_call)\((.*)\)$"
)


def short_name(name: str) -> str:
    """A JAX op name without its `jit(f)/` prefix and transform wrappers: `jit(step)/
    transpose(jvp(model))/dot_general` -> `model/dot_general`, `jit(f)/jvp()/exp` -> `exp`."""
    parts = [p for p in name.split("/") if p]
    if len(parts) > 1 and parts[0].startswith(("jit(", "pjit(")):
        parts = parts[1:]
    out = []
    for p in parts:
        m = _WRAPPER.match(p)
        while m is not None:
            p = m.group(1)
            m = _WRAPPER.match(p)
        if p:
            out.append(p)
    return "/".join(out) or name


def _short_loc(where: str) -> str:
    """`/a/b/model.py:27:11` -> `model.py:27`."""
    parts = where.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return f"{parts[0].rsplit('/', 1)[-1]}:{parts[1]}"
    return where


def value_label(module: Module, v: Value, fallback: str) -> str:
    """A value as the user knows it: a func argument's JAX name (`params['w1']`), an op
    result's JAX op name and source line (`model/dot_general at model.py:27`), else
    `fallback` (the printed `%N`, with the source line where there is one)."""
    if isinstance(v, BlockArgument):
        return loc_name(module, v.loc) or fallback
    owner = getattr(v, "owner", None)
    if owner is None:
        return fallback
    name = loc_name(module, owner.loc)
    where = module.resolve_loc(owner.loc)
    line = _short_loc(where) if where and where != name else None
    if name:
        return f"{short_name(name)} at {line}" if line else short_name(name)
    return f"{fallback} at {line}" if line else fallback
