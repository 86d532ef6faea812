"""The jaxlib MLIR edge: parse and print MLIR text with the dialects jaxlib ships.

Only this module (and the frontend/backend) touch jaxlib's MLIR bindings. Parse errors become
`ParseError`s that name the file, line and column, with the source line and a caret.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

from shardc.dialect.errors import ParseError, caret_excerpt

_LOCAL = threading.local()


def context() -> Any:
    """A per-thread MLIR context with stablehlo, sdy, func, ... registered."""
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        from jax._src.interpreters import mlir as jax_mlir

        ctx = jax_mlir.make_ir_context()
        ctx.allow_unregistered_dialects = False
        _LOCAL.ctx = ctx
    return ctx


_DIAG = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\): (?P<msg>.*)')


def parse_module(text: str, source_name: str = "<input>", checked: bool = False) -> Any:
    """Parse MLIR text (pretty or generic) into a jaxlib `ir.Module`, or raise `ParseError`;
    `checked`: the text is shardc's own print of checked input (no encoding/nesting scan)."""
    from jaxlib.mlir import ir

    if not text.strip():
        raise ParseError(f"{source_name}: empty input: expected an MLIR module")
    if not checked:
        check_encodable(text, source_name)
        check_nesting(text, source_name)
    with context():
        try:
            return ir.Module.parse(text)
        except ir.MLIRError as e:
            raise _parse_error(e, text, source_name) from None
        except Exception as e:  # noqa: BLE001 - jaxlib raises plain errors on some inputs
            raise ParseError(f"{source_name}: cannot parse MLIR: {e}") from None


@functools.lru_cache(maxsize=16384)
def printed_as_written(text: str) -> bool:
    """Whether jaxlib prints the attribute value `text` back exactly as written."""
    from jaxlib.mlir import ir

    with context():
        try:
            return str(ir.Attribute.parse(text)) == text
        except Exception:  # noqa: BLE001 - any failure: not known to print as written
            return False


# jaxlib's parser recurses on nesting: past about 2,050 nested regions or 7,000 nested brackets
# its C stack overflows (a segfault, not an error). Shardy accepts 2,000 nested regions.
MAX_REGION_DEPTH = 2016
MAX_BRACKET_DEPTH = 5000
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')


def check_encodable(text: str, source_name: str = "<input>") -> None:
    """Raise `ParseError` naming the offset of a character UTF-8 cannot encode (a lone
    surrogate, as `bytes.decode(errors="surrogateescape")` leaves for an invalid byte)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        line = text.count("\n", 0, e.start) + 1
        col = e.start - (text.rfind("\n", 0, e.start) + 1) + 1
        raise ParseError(
            f"{source_name}:{line}:{col}: invalid UTF-8 at character offset {e.start} "
            f"({text[e.start]!a}): MLIR text must be UTF-8",
            hint="pass text that encodes as UTF-8",
        ) from None


# the bytes the nesting scan looks at: brackets, quotes and backslashes; all others are dropped
_KEEP = b'()[]{}<>"\\'
_DROP = bytes(c for c in range(256) if c not in _KEEP)
_PLAIN_STRINGS = re.compile(rb'"[^"]*"')


def nesting_depths(text: str) -> tuple[int, int, int]:
    """(deepest `{` nesting, deepest nesting of any bracket, byte offset where the first limit
    broken is reached), outside string literals; `->` is not a bracket."""
    if text.count("{") + text.count("[") + text.count("(") + text.count("<") <= MAX_REGION_DEPTH:
        return 0, 0, 0  # too few brackets to nest that deep: the common case, no scan
    # Fast path: only the brackets and quotes (a fifth of the text), strings cut out whole; a
    # string with escapes, or a limit broken, goes to the exact scan, which knows offsets.
    marks = text.replace("->", "").encode("utf-8", "replace").translate(None, _DROP)
    if b"\\" not in marks:
        braces, brackets = _bracket_depths(_PLAIN_STRINGS.sub(b"", marks))
        if braces <= MAX_REGION_DEPTH and brackets <= MAX_BRACKET_DEPTH:
            return braces, brackets, 0
    return _exact_nesting_depths(text)


def _bracket_depths(marks: bytes) -> tuple[int, int]:
    """(deepest `{`, deepest any bracket) of a text of brackets only."""
    import numpy as np

    codes = np.frombuffer(marks, dtype=np.uint8)
    depths = []
    for step in _steps():
        depths.append(int(np.cumsum(step[codes], dtype=np.int64).max(initial=0)))
    return depths[0], depths[1]


def _steps() -> tuple[Any, Any]:
    """Per byte value: +1 / -1 for `{` / `}`, and for any opening / closing bracket."""
    import numpy as np

    brace_step = np.zeros(256, dtype=np.int32)
    brace_step[ord("{")], brace_step[ord("}")] = 1, -1
    any_step = np.zeros(256, dtype=np.int32)
    any_step[[ord(c) for c in "([{<"]] = 1
    any_step[[ord(c) for c in ")]}>"]] = -1
    return brace_step, any_step


def _exact_nesting_depths(text: str) -> tuple[int, int, int]:
    """`nesting_depths` over the whole text, string literals blanked: also the offset."""
    import numpy as np

    stripped = _STRINGS.sub(lambda m: " " * len(m.group()), text).replace("->", "  ")
    codes = np.frombuffer(stripped.encode("utf-8", "replace"), dtype=np.uint8)
    deepest = [0, 0]
    at = [-1, -1]
    base = [0, 0]
    chunk = 1 << 20  # bounded memory on big modules
    for start in range(0, len(codes), chunk):
        part = codes[start : start + chunk]
        for k, step in enumerate(_steps()):
            depth = np.cumsum(step[part]) + base[k]
            i = int(np.argmax(depth))
            if depth[i] > deepest[k]:
                deepest[k], at[k] = int(depth[i]), start + i
            base[k] = int(depth[-1])
    where = at[0] if deepest[0] > MAX_REGION_DEPTH else at[1]
    return deepest[0], deepest[1], max(where, 0)


def check_nesting(text: str, source_name: str = "<input>") -> None:
    """Raise `ParseError` before jaxlib sees text nested deeper than its parser survives."""
    braces, brackets, at = nesting_depths(text)
    if braces <= MAX_REGION_DEPTH and brackets <= MAX_BRACKET_DEPTH:
        return
    data = text.encode("utf-8", "replace")
    line = data.count(b"\n", 0, at) + 1
    col = at - (data.rfind(b"\n", 0, at) + 1) + 1
    what = (
        f"{braces} nested regions/attribute dicts (`{{`), more than the {MAX_REGION_DEPTH} "
        "shardc accepts"
        if braces > MAX_REGION_DEPTH
        else f"brackets nested {brackets} deep, more than the {MAX_BRACKET_DEPTH} shardc accepts"
    )
    raise ParseError(
        f"{source_name}:{line}:{col}: input nested too deeply: {what}",
        hint="flatten the nesting (MLIR's parser recurses once per level)",
    )


def _parse_error(e: Exception, text: str, source_name: str) -> ParseError:
    diags = getattr(e, "error_diagnostics", None) or []
    for d in diags:
        loc = str(d.location)
        m = re.search(r'":(\d+):(\d+)', loc)
        if m:
            line, col = int(m.group(1)), int(m.group(2))
            excerpt = caret_excerpt(text, line, col)
            msg = f"{source_name}:{line}:{col}: {d.message}"
            return ParseError(msg + ("\n" + excerpt if excerpt else ""))
        return ParseError(f"{source_name}: {d.message}")
    first = str(e).strip().splitlines()
    return ParseError(f"{source_name}: {first[-1] if first else 'cannot parse MLIR'}")


def generic_text(module: Any, with_locs: bool = True) -> str:
    """Print a jaxlib module in generic op form, with locations unless told (the importer's
    input)."""
    # as bytes: the printer hands its text over a token at a time (~1.7M writes on a 24-layer
    # train step), and a bytes write is cheaper than a str one (~7% of the print)
    return module.operation.get_asm(
        binary=True, print_generic_op_form=True, enable_debug_info=with_locs
    ).decode()


def pretty_text(module: Any, with_locs: bool = False) -> str:
    """Print a jaxlib module in the custom (pretty) op syntax, as `Lowered.as_text()` does.

    The module comes from `parse_module`, which verified it: printing skips a second verify."""
    return module.operation.get_asm(enable_debug_info=with_locs, assume_verified=True)


def verify(module: Any, source_name: str = "<output>") -> None:
    """Run the MLIR verifier (sdy and stablehlo included); raise `ParseError` on failure."""
    from jaxlib.mlir import ir

    with context():
        try:
            ok = module.operation.verify()
        except ir.MLIRError as e:
            raise _parse_error(e, "", source_name) from None
    if not ok:
        raise ParseError(f"{source_name}: the module does not verify")
