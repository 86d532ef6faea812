"""shardc IR -> MLIR text (generic, or pretty: shardc's own printer where it knows every op's
syntax, else through jaxlib) and jaxlib `ir.Module`."""

from __future__ import annotations

from typing import Any, Literal

from shardc.backend import mlir_bridge
from shardc.dialect.ir import Module
from shardc.dialect.text import Unsupported, print_generic, print_pretty
from shardc.runtime import suspended_gc

Format = Literal["pretty", "generic", "text"]


def to_jax_module(module: Module) -> Any:
    """The module as a jaxlib `ir.Module` (parsed from shardc's generic text)."""
    # shardc prints what it imported: the input's nesting, no new strings
    return mlir_bridge.parse_module(print_generic(module), "<shardc output>", checked=True)


@suspended_gc()
def export_text(
    module: Module, fmt: Format = "pretty", with_locs: bool = False, release: bool = False
) -> str:
    """MLIR text of `module`: `pretty` (the dialects' own syntax, as JAX prints) or `generic`.
    `release`: the caller is done with `module`; it may be emptied (`Module.release`) as soon
    as its text is printed, before the text is joined (the peak memory of `shardc.propagate`)."""
    if fmt == "generic":
        return print_generic(module, with_locs=with_locs)
    if not with_locs:
        try:
            # byte-identical to jaxlib's print, without its re-parse
            return print_pretty(module, release=release)
        except Unsupported:
            pass  # an op or form shardc's printer does not write: jaxlib prints it
    jmod = to_jax_module(module)
    return mlir_bridge.pretty_text(jmod, with_locs=with_locs)
