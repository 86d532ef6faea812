"""MLIR (text or a jaxlib `ir.Module`) -> shardc IR.

jaxlib parses the text (so every dialect it knows is accepted, the module is verified and errors
carry line:col). Pretty text as JAX lowers a model to it (without locations: the forms shardc's
pretty printer writes, loops, shard_map, generic-form ops with their regions, custom calls,
convolutions) is then read once more by shardc's own pretty parser, which builds the same IR the
generic route would; anything else jaxlib prints in generic form with locations, and
shardc's own linear-time generic parser builds the IR from that.
"""

from __future__ import annotations

from typing import Any

from shardc.backend import mlir_bridge
from shardc.dialect.ir import Module
from shardc.dialect.text import absorb_sharding_attrs, parse_generic, parse_pretty
from shardc.runtime import release_free_heap, suspended_gc


def import_text(text: str, source_name: str = "<input>") -> Module:
    """Parse MLIR text (pretty or generic) into shardc IR."""
    # jaxlib's parse verifies (errors name line:col); its module is dropped (and its heap pages
    # given back) before shardc builds its IR, so the two never take memory together
    mlir_bridge.parse_module(text, source_name)
    release_free_heap()
    with suspended_gc():
        module = parse_pretty(text, source_name, mlir_bridge.printed_as_written)
        if module is not None:
            absorb_sharding_attrs(module)
            return module
    # outside the pretty parser's forms: jaxlib parses again (the text is checked already) and
    # prints the generic form, which shardc's generic parser reads
    generic = mlir_bridge.generic_text(mlir_bridge.parse_module(text, source_name, checked=True))
    release_free_heap()  # the freed module's pages, else resident under the IR built next
    return import_generic(generic, source_name)


def import_module(jmod: Any, source_name: str = "<input>") -> Module:
    """Convert a jaxlib `ir.Module` into shardc IR."""
    return import_generic(mlir_bridge.generic_text(jmod), source_name)


def import_generic(generic: str, source_name: str = "<input>") -> Module:
    """Build shardc IR from jaxlib's generic print (with or without locations) of a module."""
    with suspended_gc():  # both build many objects that live on (see suspended_gc)
        return parse_generic(generic, source_name, absorb=True)
