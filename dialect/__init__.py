"""shardc's IR, sharding attributes, op sharding rules and their text syntax.

This layer imports nothing else of shardc and nothing of jax.
"""

from .errors import (
    ManualComputationError,
    ParseError,
    ShardcError,
    ShardingError,
    UnsupportedError,
    VerificationError,
)
from .shardings import (
    AxisRef,
    DimSharding,
    ManualAxes,
    Mesh,
    MeshAxis,
    ShardingPerValue,
    TensorSharding,
)

__all__ = [
    "AxisRef",
    "DimSharding",
    "ManualAxes",
    "ManualComputationError",
    "Mesh",
    "MeshAxis",
    "ParseError",
    "ShardcError",
    "ShardingError",
    "ShardingPerValue",
    "TensorSharding",
    "UnsupportedError",
    "VerificationError",
]
