"""shardc: a sharding-annotation compiler for JAX/XLA, modelled on OpenXLA Shardy.

The public API is imported lazily, so `import shardc` (and `shardc --help`) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from shardc.dialect.errors import ShardcError

__version__ = "0.1.0"

# public name -> module that defines it (imported on first use)
_LAZY: dict[str, str] = {
    "import_text": "shardc.backend.importer",
    "import_module": "shardc.backend.importer",
    "export_text": "shardc.backend.exporter",
    "propagate": "shardc.api.propagate",
    "propagate_module": "shardc.api.propagate",
    "plan": "shardc.api.plan",
    "diff": "shardc.api.plan",
    "Plan": "shardc.api.plan",
    "PropagationOptions": "shardc.passes.propagation.options",
    "check": "shardc.api.check",
    "register_rule": "shardc.dialect.rules",
    "register_custom_call_rule": "shardc.dialect.rules",
    "einsum_rule": "shardc.dialect.rules",
    "rule_from_einsum": "shardc.dialect.rules",
    "OpShardingRule": "shardc.dialect.rules",
    "jit": "shardc.api.jitted",
    "constrain": "shardc.frontend.annotations",
    "visualize_sharding": "shardc.api.grid",
    "entry": "shardc.api.jitted",
    "Jitted": "shardc.api.jitted",
    "Lowered": "shardc.api.jitted",
    "Compiled": "shardc.api.jitted",
    "parse_spec": "shardc.frontend.specs",
    "Spec": "shardc.frontend.specs",
    "logical": "shardc.frontend.logical_axes",
    "axis_rules": "shardc.frontend.logical_axes",
    "logical_to_spec": "shardc.frontend.logical_axes",
    "Shard": "shardc.frontend.placements",
    "StridedShard": "shardc.frontend.placements",
    "Replicate": "shardc.frontend.placements",
    "Partial": "shardc.frontend.placements",
    "Placements": "shardc.frontend.placements",
    "placements_to_sharding": "shardc.frontend.placements",
    "sharding_to_placements": "shardc.frontend.placements",
}


def __getattr__(name: str) -> Any:
    modname = _LAZY.get(name)
    if modname is None:
        raise AttributeError(f"module 'shardc' has no attribute {name!r}")
    value = getattr(importlib.import_module(modname), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = ["ShardcError", "__version__", *_LAZY]
