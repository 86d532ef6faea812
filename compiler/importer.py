"""MLIR (text or a jaxlib `ir.Module`) -> shardc IR.

jaxlib parses the text (so every dialect it knows is accepted and errors carry line:col), prints
it in generic form, and shardc's own linear-time parser builds the IR from that.
"""

from __future__ import annotations

from typing import Any

from shardc.dialect.ir import Module, release_free_heap, suspended_gc
from shardc.dialect.mlir_text import absorb_sharding_attrs, parse_generic

from . import mlir_bridge


def import_text(text: str, source_name: str = "<input>") -> Module:
    """Parse MLIR text (pretty or generic) into shardc IR."""
    # jaxlib's module is freed once printed: it does not stay alive while shardc builds its IR
    generic = mlir_bridge.generic_text(mlir_bridge.parse_module(text, source_name))
    release_free_heap()  # the freed module's pages, else resident under the IR built next
    return import_generic(generic, source_name)


def import_module(jmod: Any, source_name: str = "<input>") -> Module:
    """Convert a jaxlib `ir.Module` into shardc IR."""
    return import_generic(mlir_bridge.generic_text(jmod), source_name)


def import_generic(generic: str, source_name: str = "<input>") -> Module:
    """Build shardc IR from jaxlib's generic print (with locations) of a module."""
    with suspended_gc():  # both build many objects that live on (see suspended_gc)
        module = parse_generic(generic, source_name)
        absorb_sharding_attrs(module)
    return module
