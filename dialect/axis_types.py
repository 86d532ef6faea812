"""Which mesh axes of a module are `Explicit`: a JAX frontend's record for the passes.

On JAX's `Explicit` axes a value's sharding is part of its type, and JAX writes it on the
module itself (a sharding constraint after each op whose result type carries one). `sdy.mesh`
has no axis types, so the frontend names the Explicit axes in one module attribute; a pass that
labels where a sharding came from (the plan, explanations) reads them here: a sharding on an
Explicit axis comes from the type of the value, set by the op the constraint follows.
"""

from __future__ import annotations

import re

from .ir import Module

EXPLICIT_AXES = "shardc.explicit_axes"


def explicit_axes(module: Module) -> frozenset[str]:
    """The names of the module's Explicit mesh axes (none when the attribute is absent)."""
    text = module.op.attributes.get(EXPLICIT_AXES)
    if not text:
        return frozenset()
    return frozenset(re.findall(r'"((?:[^"\\]|\\.)*)"', str(text)))
