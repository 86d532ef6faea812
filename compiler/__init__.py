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
    "import_text": "shardc.importer",
    "import_module": "shardc.importer",
    "export_text": "shardc.exporter",
    "propagate": "shardc.api_propagate",
    "propagate_module": "shardc.api_propagate",
    "plan": "shardc.api_plan",
    "diff": "shardc.api_plan",
    "Plan": "shardc.api_plan",
    "PropagationOptions": "shardc.passes.propagation.options",
    "check": "shardc.api_check",
    "register_rule": "shardc.dialect.rules",
    "register_custom_call_rule": "shardc.dialect.rules",
    "einsum_rule": "shardc.dialect.rules",
    "rule_from_einsum": "shardc.dialect.rules",
    "OpShardingRule": "shardc.dialect.rules",
    "jit": "shardc.jitted",
    "constrain": "shardc.annotations",
    "visualize_sharding": "shardc.grid",
    "entry": "shardc.jitted",
    "Jitted": "shardc.jitted",
    "Lowered": "shardc.jitted",
    "Compiled": "shardc.jitted",
    "parse_spec": "shardc.specs",
    "Spec": "shardc.specs",
    "logical": "shardc.logical_axes",
    "axis_rules": "shardc.logical_axes",
    "logical_to_spec": "shardc.logical_axes",
    "Shard": "shardc.placements",
    "StridedShard": "shardc.placements",
    "Replicate": "shardc.placements",
    "Partial": "shardc.placements",
    "Placements": "shardc.placements",
    "placements_to_sharding": "shardc.placements",
    "sharding_to_placements": "shardc.placements",
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
