"""`dedup-meshes`: identical meshes are one mesh to propagation (reference G48).

Every sharding naming a duplicate names the first mesh of that shape instead; the duplicate's
`sdy.mesh` is erased unless an op other than an sdy op names it (jax 0.11 collectives refer to
a mesh in `replica_groups`): then it stays, unreferenced by any sharding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import Module, Operation, symbol_name
from shardc.dialect.op_views import MeshOp, rewrite_shardings
from shardc.dialect.shardings import Mesh, TensorSharding

from ..context import PassContext


@dataclass(frozen=True)
class DedupMeshes:
    """The mesh de-duplication pass; no options."""

    name: ClassVar[str] = "dedup-meshes"
    changes_ir: ClassVar[bool] = True

    def run(self, module: Module, ctx: PassContext) -> None:
        dedup_meshes(module)


def dedup_meshes(module: Module) -> dict[str, str]:
    """Rename duplicates to their first twin in every sharding; returns duplicate -> kept."""
    seen: dict[Mesh, str] = {}
    alias: dict[str, str] = {}
    duplicates: list[Operation] = []
    for op in module.body.ops:
        if op.name != "sdy.mesh":
            continue
        view = MeshOp(op)
        mesh = view.mesh
        if mesh in seen and mesh.axes:
            alias[view.name] = seen[mesh]
            duplicates.append(op)
            continue
        seen.setdefault(mesh, view.name)
    if not alias:
        return alias

    def rename(s: TensorSharding) -> TensorSharding:
        name = s.mesh_name  # None for an inline mesh
        if name is not None and name in alias:
            return TensorSharding(alias[name], s.dims, s.replicated, s.unreduced)
        return s

    rewrite_shardings(module, rename)
    used = _symbols_named_by_non_sdy_ops(module, {symbol_name(d) for d in duplicates})
    for op in duplicates:
        if symbol_name(op) not in used:
            op.erase()
    return alias


def _symbols_named_by_non_sdy_ops(module: Module, names: set[str]) -> set[str]:
    pattern = re.compile(r"@(" + "|".join(re.escape(n) for n in names) + r")\b")
    used: set[str] = set()
    for op in module.walk():
        if op.name.startswith("sdy.") or op.name in ("func.func", "builtin.module"):
            continue
        for attrs in (op.properties, op.attributes):
            if attrs:
                used.update(pattern.findall(attrs.body()))
    return used
