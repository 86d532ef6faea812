"""What the manual-region passes need to know about one `sdy.manual_computation`.

A `ManualRegion` reads the op's mesh, its own manual axes, the manual axes of the regions
around it (axes already bound outside), the free axes, and its in/out shardings, once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from shardc.dialect.errors import ManualComputationError, unknown_axis, unknown_mesh
from shardc.dialect.ir import Block, Module, Operation
from shardc.dialect.op_views import MANUAL_COMPUTATION, ManualComputation
from shardc.dialect.shardings import Mesh, TensorSharding

MANUAL_OP = MANUAL_COMPUTATION


@dataclass(frozen=True)
class ManualRegion:
    """One `sdy.manual_computation` with its mesh and axis split resolved."""

    op: Operation
    mesh_name: str | None
    mesh: Mesh
    manual_axes: tuple[str, ...]
    outer_axes: tuple[str, ...]  # manual axes of enclosing regions
    in_shardings: tuple[TensorSharding, ...]
    out_shardings: tuple[TensorSharding, ...]
    location: str | None = None
    parent: ManualRegion | None = field(default=None, compare=False, repr=False)

    @property
    def body(self) -> Block:
        return self.op.regions[0].entry

    @property
    def scope_axes(self) -> tuple[str, ...]:
        """Every manual axis bound inside the body (enclosing regions' and this one's), mesh order."""
        bound = set(self.manual_axes) | set(self.outer_axes)
        return tuple(a for a in self.mesh.axis_names if a in bound)

    @property
    def free_axes(self) -> tuple[str, ...]:
        """Mesh axes that stay automatic inside the body."""
        bound = set(self.scope_axes)
        return tuple(a for a in self.mesh.axis_names if a not in bound)

    @property
    def is_fully_manual(self) -> bool:
        return not self.free_axes

    def group_size(self, axes: tuple[str, ...]) -> int:
        n = 1
        for a in axes:
            n *= self.mesh.size_of(a)
        return n

    def describe(self) -> str:
        axes = ", ".join(f'"{a}"' for a in self.manual_axes)
        return f"sdy.manual_computation (manual_axes={{{axes}}})"


def _mesh_of(module: Module, op: Operation, shardings: tuple[TensorSharding, ...]) -> tuple:
    meshes = module.meshes
    for s in shardings:
        if isinstance(s.mesh, Mesh):
            return None, s.mesh
        if s.mesh in meshes:
            return s.mesh, meshes[s.mesh]
        raise unknown_mesh(
            s.mesh, list(meshes), given=f"{MANUAL_OP} {s.body()}", cls=ManualComputationError,
            location=module.resolve_loc(op.loc),
        )
    # no shardings at all (zero operands and results): the module's only non-empty mesh
    named = [(n, m) for n, m in meshes.items() if m.axes]
    if len(named) == 1:
        return named[0]
    raise ManualComputationError(
        f"{MANUAL_OP} has no in/out shardings and the module has {len(named)} meshes with axes, "
        "so its mesh is ambiguous",
        location=module.resolve_loc(op.loc),
        hint="give the region at least one operand or result sharding",
    )


def region_of(module: Module, op: Operation, parent: ManualRegion | None = None) -> ManualRegion:
    """Resolve one `sdy.manual_computation` (its `parent` region, if nested, must be given)."""
    view = ManualComputation(op)
    ins = view.in_shardings
    outs = view.out_shardings
    mesh_name, mesh = _mesh_of(module, op, ins + outs)
    manual = view.manual_axes
    loc = module.resolve_loc(op.loc)
    for a in manual:
        if a not in mesh.axis_sizes:
            raise unknown_axis(
                a, mesh.body(), mesh.axis_names, given=f"{MANUAL_OP} manual_axes",
                cls=ManualComputationError, location=loc,
            )
    outer = parent.scope_axes if parent is not None else ()
    for a in manual:
        if a in outer:
            raise ManualComputationError(
                f'{MANUAL_OP}: manual axis "{a}" is already bound by an enclosing '
                f"{MANUAL_OP}",
                location=loc,
                hint="a nested shard_map may only name axes its parent left free",
            )
    return ManualRegion(op, mesh_name, mesh, manual, outer, ins, outs, loc, parent)


def manual_regions(module: Module) -> list[ManualRegion]:
    """Every manual region of the module, outer before inner (pre-order)."""
    out: list[ManualRegion] = []
    # an explicit stack (ops in reverse so they pop in order): nesting depth is the input's
    stack: list[tuple[Operation, ManualRegion | None]] = [(module.op, None)]
    while stack:
        op, parent = stack.pop()
        if op.name == MANUAL_OP:
            region = region_of(module, op, parent)
            out.append(region)
            parent = region
        stack.extend((inner, parent) for r in reversed(op.regions) for b in reversed(r.blocks)
                     for inner in reversed(b.ops))
    return out


def enclosing_ops(op: Operation) -> Iterator[Operation]:
    """The ops around `op`, innermost first."""
    cur = op.parent_op
    while cur is not None:
        yield cur
        cur = cur.parent_op


def axes_text(axes: tuple[str, ...] | list[str] | set[str] | frozenset[str]) -> str:
    """`{"x", "y"}` as sdy writes axis sets."""
    return "{" + ", ".join(f'"{a}"' for a in axes) + "}"


def spec_text(sharding: TensorSharding, region: ManualRegion) -> str:
    """An in/out sharding as the `PartitionSpec` a shard_map user wrote (manual axes only)."""
    parts = []
    for d in sharding.dims:
        names = [a.name for a in d.axes if a.name in region.manual_axes]
        if not names:
            parts.append("None")
        elif len(names) == 1:
            parts.append(f"'{names[0]}'")
        else:
            parts.append("(" + ", ".join(f"'{n}'" for n in names) + ")")
    while parts and parts[-1] == "None":
        parts.pop()
    return "P(" + ", ".join(parts) + ")"
