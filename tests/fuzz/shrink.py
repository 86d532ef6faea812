"""Delta debugging: the smallest list (of lines, of ops) on which a failure still happens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def shrink_list(items: Sequence[T], fails: Callable[[list[T]], bool], budget: int = 400) -> list[T]:
    """ddmin: drop chunks (halves, quarters, ..., single items) while `fails` stays true.

    `fails(items)` must be true on entry; at most `budget` calls of `fails` are made, so a slow
    oracle (a subprocess, an XLA compile) bounds the time spent shrinking.
    """
    cur = list(items)
    calls = 0
    n = 2
    while len(cur) >= 2 and calls < budget:
        chunk = max(1, len(cur) // n)
        removed = False
        start = 0
        while start < len(cur) and calls < budget:
            cand = cur[:start] + cur[start + chunk :]
            calls += 1
            if cand and fails(cand):
                cur = cand
                removed = True
            else:
                start += chunk
        if chunk == 1 and not removed:
            break
        n = n if removed else min(len(cur), n * 2)
    return cur


def shrink_text(text: str, fails: Callable[[str], bool], budget: int = 400) -> str:
    """`text` cut to the fewest lines, then the fewest characters of each line, that still fail."""
    lines = shrink_list(text.split("\n"), lambda ls: fails("\n".join(ls)), budget)
    out = "\n".join(lines)
    if len(out) <= 400:  # then characters, for short reproducers only
        chars = shrink_list(list(out), lambda cs: fails("".join(cs)), budget // 2)
        out = "".join(chars)
    return out
