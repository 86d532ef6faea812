"""`dedup-meshes`: identical meshes are one mesh to propagation (docs/sharding_model.md §1), and
inlined meshes become `sdy.mesh` symbols (Shardy's `sdy-lift-inlined-meshes` does both).

Every sharding naming a duplicate names the first mesh of that shape instead; the duplicate's
`sdy.mesh` is erased unless an op other than an sdy op names it (jax 0.11 collectives refer to
a mesh in `replica_groups`): then it stays, unreferenced by any sharding. A sharding with an
inlined mesh (`#sdy.sharding<mesh<["x"=2]>, ...>`) names the first `sdy.mesh` equal to it, or a
new one named as Shardy names it (`@mesh`, `@maximal_mesh_N` for a maximal mesh, `@empty_mesh`
for an empty one; `_0`, `_1`, ... after a name already taken), put after the module's last mesh
in the order they are first met. (Inlined meshes in collectives' `replica_groups` stay inlined.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from shardc.dialect.ir import AttrDict, Module, Operation, symbol_name
from shardc.dialect.op_views import MeshOp, rewrite_shardings
from shardc.dialect.shardings import Mesh, TensorSharding

from ..context import NONE, SAME_OPS, OpList, PassContext


@dataclass(frozen=True)
class DedupMeshes:
    """The mesh de-duplication pass; no options."""

    name: ClassVar[str] = "dedup-meshes"
    preserves: ClassVar[frozenset[type]] = NONE

    def run(self, module: Module, ctx: PassContext) -> None:
        ops = ctx.analysis(OpList, module)
        renamed = dedup_meshes(module, ops)
        # (erasing a duplicate changed the op list: the lift walks the module again then)
        lifted = lift_inlined_meshes(module, None if renamed else ops)
        if not renamed and not lifted:
            ctx.preserve(*SAME_OPS)  # (no mesh erased, none added)


def dedup_meshes(module: Module, ops: list[Operation] | None = None) -> dict[str, str]:
    """Rename duplicates to their first twin in every sharding; returns duplicate -> kept
    (`ops`: `list(module.walk())`, when the caller has it)."""
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

    rewrite_shardings(module, rename, ops)
    used = _symbols_named_by_non_sdy_ops(module, {symbol_name(d) for d in duplicates}, ops)
    for op in duplicates:
        if symbol_name(op) not in used:
            op.erase()
    return alias


def _symbols_named_by_non_sdy_ops(
    module: Module, names: set[str], ops: list[Operation] | None = None
) -> set[str]:
    pattern = re.compile(r"@(" + "|".join(re.escape(n) for n in names) + r")\b")
    used: set[str] = set()
    for op in module.walk() if ops is None else ops:
        if op.name.startswith("sdy.") or op.name in ("func.func", "builtin.module"):
            continue
        for attrs in (op.properties, op.attributes):
            if attrs:
                used.update(pattern.findall(attrs.body()))
    return used


def lift_inlined_meshes(module: Module, ops: list[Operation] | None = None) -> dict[Mesh, str]:
    """Replace every inlined mesh of a sharding by an `sdy.mesh` symbol (an equal existing one,
    or a new one); returns each inlined mesh -> its symbol (`ops`: `list(module.walk())`, when
    the caller has it)."""
    named: dict[Mesh, str] = {}
    taken = {symbol_name(op) for op in module.body.ops if "sym_name" in op.properties
             or "sym_name" in op.attributes}
    last = -1
    for i, op in enumerate(module.body.ops):
        if op.name == "sdy.mesh":
            view = MeshOp(op)
            named.setdefault(view.mesh, view.name)
            last = i
    lifted: dict[Mesh, str] = {}
    new_ops: list[Operation] = []

    def lift(s: TensorSharding) -> TensorSharding:
        mesh = s.mesh
        if not isinstance(mesh, Mesh):
            return s
        name = named.get(mesh)
        if name is None:
            name = _free_name(_base_name(mesh), taken)
            taken.add(name)
            named[mesh] = lifted[mesh] = name
            props = AttrDict(items={"sym_name": f'"{name}"', "mesh": mesh})
            new_ops.append(Operation("sdy.mesh", properties=props))
        return TensorSharding(name, s.dims, s.replicated, s.unreduced)

    rewrite_shardings(module, lift, ops)
    for k, op in enumerate(new_ops):
        module.body.insert(last + 1 + k, op)
    return lifted


def _base_name(mesh: Mesh) -> str:
    if mesh.is_maximal and mesh.device_ids:
        return f"maximal_mesh_{mesh.device_ids[0]}"
    if not mesh.axes:
        return "empty_mesh"
    return "mesh"


def _free_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_0`, `base_1`, ... (how MLIR's symbol table renames a clash)."""
    name, i = base, 0
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    return name
