"""Bracket scanning of MLIR text, defined once: `( [ { <` nest, `->` is an arrow, not a bracket,
and string literals are skipped whole (so quoted text never needs a char-by-char walk).

The parser, attribute dictionaries and type signatures all split and match through these."""

from __future__ import annotations

import re

# brackets, commas, and whole string literals
BRACKET_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\](){}<>,]')
_OPEN = "([{<"


def split_top_level(text: str) -> list[str]:
    """Split `text` at commas outside brackets, `<...>` and strings (`->` is not a bracket)."""
    out: list[str] = []
    depth = 0
    start = 0
    for m in BRACKET_TOKENS.finditer(text):
        c = m.group()
        if c == ",":
            if depth == 0:
                i = m.start()
                out.append(text[start:i])
                start = i + 1
        elif len(c) > 1:
            continue  # a string literal
        elif c in _OPEN:
            depth += 1
        elif c != ">":
            depth -= 1
        else:
            i = m.start()
            if i == 0 or text[i - 1] != "-":  # `->` is an arrow
                depth -= 1
    tail = text[start:]
    if tail.strip() or out:
        out.append(tail)
    return out


def match_close(text: str, i: int) -> int:
    """Index of the bracket closing `text[i]`, skipping strings and `->` arrows."""
    depth = 0
    for m in BRACKET_TOKENS.finditer(text, i):
        c = m.group()
        if c == "," or len(c) > 1:
            continue
        if c in _OPEN:
            depth += 1
            continue
        if c == ">" and text[m.start() - 1] == "-":
            continue
        depth -= 1
        if depth == 0:
            return m.start()
    raise ValueError("unbalanced brackets")


def top_level_arrow(text: str) -> int:
    """Index of the first `->` outside brackets and strings, or -1."""
    depth = 0
    for m in BRACKET_TOKENS.finditer(text):
        c = m.group()
        if c == "," or len(c) > 1:
            continue
        if c in _OPEN:
            depth += 1
        elif c == ">" and m.start() > 0 and text[m.start() - 1] == "-":
            if depth == 0:
                return m.start() - 1
        else:
            depth -= 1
    return -1


def balanced(text: str) -> bool:
    """Cheap check that every bracket kind opens as often as it closes (`->` excluded); for
    text without string literals (the caller sends those to an exact scan)."""
    return (
        text.count("{") == text.count("}")
        and text.count("[") == text.count("]")
        and text.count("(") == text.count(")")
        and text.count("<") == text.count(">") - text.count("->")
    )
