"""shardc: a sharding-annotation compiler for JAX/XLA, modelled on OpenXLA Shardy.

The public API, imported explicitly so that type checkers see each name's real signature. None of
these modules imports jax or jaxlib when it is imported (only when a function that needs them
runs), so `import shardc` and `shardc --help` work without starting JAX; tests/test_public_api.py
checks both.
"""

from __future__ import annotations

from shardc.api.check import check
from shardc.api.grid import visualize_sharding
from shardc.api.jitted import Compiled, Jitted, Lowered, entry, jit
from shardc.api.plan import Plan, diff, plan
from shardc.api.propagate import propagate, propagate_module
from shardc.backend.exporter import export_text
from shardc.backend.importer import import_module, import_text
from shardc.dialect.errors import ShardcError
from shardc.dialect.rules import (
    OpShardingRule,
    einsum_rule,
    register_custom_call_rule,
    register_rule,
    rule_from_einsum,
)
from shardc.frontend.annotations import constrain
from shardc.frontend.logical_axes import axis_rules, logical, logical_to_spec
from shardc.frontend.placements import (
    Partial,
    Placements,
    Replicate,
    Shard,
    StridedShard,
    placements_to_sharding,
    sharding_to_placements,
)
from shardc.frontend.specs import Spec, parse_spec
from shardc.passes.propagation.options import PropagationOptions

__version__ = "0.1.0"

__all__ = [
    "Compiled",
    "Jitted",
    "Lowered",
    "OpShardingRule",
    "Partial",
    "Placements",
    "Plan",
    "PropagationOptions",
    "Replicate",
    "Shard",
    "ShardcError",
    "Spec",
    "StridedShard",
    "__version__",
    "axis_rules",
    "check",
    "constrain",
    "diff",
    "einsum_rule",
    "entry",
    "export_text",
    "import_module",
    "import_text",
    "jit",
    "logical",
    "logical_to_spec",
    "parse_spec",
    "placements_to_sharding",
    "plan",
    "propagate",
    "propagate_module",
    "register_custom_call_rule",
    "register_rule",
    "rule_from_einsum",
    "sharding_to_placements",
    "visualize_sharding",
]
