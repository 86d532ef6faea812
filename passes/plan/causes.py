"""Why a collective is there, and which annotation changes might remove it (text and candidates).

A cause names the two different shardings that meet (the one a value has and the one it must
take), each with where its axes come from when the propagation's origins observer ran: ` <-
params['w1']` (the user annotation they trace back to), `(annotated)` on a value the user
annotated itself, ` <- the type dot_general at f.py:12 gave its result (Explicit axes)` on a
dim whose axes are Explicit mesh axes (JAX's types set them, not propagation), and on a value
the program that runs lays out as XLA's own propagation does (not as shardc's: the compiled
form leaves it to XLA) that layout's provenance and shardc's, with the constraint that would
pin shardc's (`relaid`). A reduction's
cause names the reduction factor, the dims it sits on and their axes. Values are named as the user knows them (`naming.value_label`): the JAX name and source
line of the op that makes them, a func argument's name, `%N` only where the module has no
locations. Each cause comes with fix candidates (`fixes.Candidate`): user annotations and the
sharding they would get; whether one is offered is decided by re-planning with it.
"""

from __future__ import annotations

from typing import Any

from shardc.dialect.axis_types import explicit_axes
from shardc.dialect.ir import Module, Operation, Value
from shardc.dialect.layout_math import axes_layout, dim_axes
from shardc.dialect.rules.model import FactorKind, OpShardingRule
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding
from shardc.dialect.types import TensorType

from ..propagation.explain import type_setter
from . import layout
from .fixes import Candidate, locate
from .naming import value_label
from .op_cost import OpSteps, Tensor

Result = tuple[str, tuple[Candidate, ...]]


def axes_text(axes: tuple[AxisRef, ...]) -> str:
    return "{" + ", ".join(str(a) for a in axes) + "}"


def dims_text(sharding: TensorSharding) -> str:
    """The dims' axes of a layout, `[{"x"}, {}]`."""
    return "[" + ", ".join(axes_text(d.axes) for d in sharding.dims) + "]"


def _first_difference(have: TensorSharding, want: TensorSharding) -> int:
    h, w = dim_axes(have, len(have.dims)), dim_axes(want, len(have.dims))
    for d in range(len(h)):
        if h[d] != w[d]:
            return d
    return 0


def _dim_differs(v: Value, other: TensorSharding | None, dim: int) -> bool:
    """Whether `v`'s dim `dim` has other axes than `other`'s."""
    s = layout.value_sharding(v)
    if s is None or not isinstance(v.type, TensorType):
        return True
    rank = len(v.type.shape)
    return dim < rank and dim_axes(s, rank)[dim] != dim_axes(other, rank)[dim]


class Causes:
    """Builds cause texts and fix candidates; `origins` is an `OriginRecorder` or None."""

    def __init__(
        self,
        module: Module,
        names: dict[int, str],
        origins: Any,
        entries: set[str],
        relaid: dict[int, TensorSharding | None] | None = None,
    ):
        self.module = module
        self.names = names
        self.origins = origins
        self.entries = entries
        # values laid out as XLA's own propagation lays them out (the program that runs),
        # by id, with the layout shardc's propagation gave them (what their origins describe)
        self.relaid = relaid or {}
        self.explicit = explicit_axes(module)
        self._labels: dict[int, str] = {}

    # -- naming --------------------------------------------------------------------------------
    def name(self, holder: Any) -> str:
        """A value by its JAX name and source line (`%N` where the module has no locations)."""
        if isinstance(holder, str):
            return holder
        label = self._labels.get(id(holder))
        if label is not None:
            return label
        fallback = self.names.get(id(holder))
        if fallback is not None and isinstance(holder, Value):
            label = value_label(self.module, holder, fallback)
        elif isinstance(holder, Operation):
            label = holder.name
        else:
            label = fallback or str(getattr(holder, "name", "?"))
        self._labels[id(holder)] = label
        return label

    def _annotation(self, holder: Any) -> Any:
        """The user annotation a holder is (its locator), else None."""
        return locate(self.module, holder, self.entries)

    def root(self, holder: Any, dim: int, whole: bool = True) -> str:
        """` (annotated)` when the user annotated `holder`'s dim itself, ` <- X` when its axes
        trace back to the user annotation X, ` <- the type ...` when they are Explicit mesh
        axes (the type of the op that set them, with its source line), else nothing. On a
        value XLA lays out otherwise than propagation did (`relaid`), that instead (`whole`:
        the text shows its whole layout; else only where dim `dim` differs)."""
        if isinstance(holder, Value) and id(holder) in self.relaid:
            propagated = self.relaid[id(holder)]
            if whole or _dim_differs(holder, propagated, dim):
                return self._relaid_note(holder, propagated)
        r = self.root_holder(holder, dim)
        if r is None:
            return ""
        source = self._type_source(holder, dim, r)
        if source is not None:
            return f" <- {source}"
        if r is holder:
            return " (annotated)"
        return f" <- {self.name(r)}"

    def _relaid_note(self, holder: Value, propagated: TensorSharding | None) -> str:
        """Why `holder` has a layout shardc's propagation did not give it: XLA's own
        propagation, on the module as XLA's import makes it, lays it out so (the compiled form
        leaves it to XLA), and the constraint that would hold it to shardc's layout instead."""
        rank = len(holder.type.shape) if isinstance(holder.type, TensorType) else 0
        shardc = dims_text(axes_layout("", dim_axes(propagated, rank)))
        return (
            f" (as XLA's own propagation lays it out; shardc's propagation gives {shardc}, "
            f"which a sharding constraint on {self.name(holder)} would pin)"
        )

    def _type_source(self, holder: Any, dim: int, root: Any) -> str | None:
        """Where `holder`'s dim comes from when all its axes are Explicit: the type of the
        value JAX constrained as `root`, named by the op that set it; else None."""
        o = self.origins.get(holder, dim)
        if not self.explicit or o is None or not o.axes:
            return None
        if not {a.name for a in o.axes} <= self.explicit:
            return None
        setter = type_setter(root)
        if setter is None or not setter.results:
            return f"the type of {self.name(root)} (Explicit axes)"
        return f"the type {self.name(setter.results[0])} gave its result (Explicit axes)"

    def root_holder(self, holder: Any, dim: int) -> Any:
        """The user annotation `holder`'s dim `dim` traces back to (None: none, or unknown)."""
        if self.origins is None or isinstance(holder, str):
            return None
        o = self.origins.get(holder, dim)
        if o is None:
            return None
        relaid = isinstance(holder, Value) and id(holder) in self.relaid
        if relaid and _dim_differs(holder, self.relaid[id(holder)], dim):
            return None  # (its origin is of the layout propagation gave it, not XLA's)
        r = holder if o.is_annotation else o.root
        return r if r is not None and self._annotation(r) is not None else None

    def dim(self, holder: Any, d: int, axes: tuple[AxisRef, ...]) -> str:
        return f"{self.name(holder)} dim {d} {axes_text(axes)}{self.root(holder, d, whole=False)}"

    # -- candidates ----------------------------------------------------------------------------
    def _mesh_ref(self, v: Any) -> str | Mesh | None:
        s = layout.value_sharding(v) if isinstance(v, Value) else None
        if s is not None:
            return s.mesh
        for m, mesh in self.module.meshes.items():
            if mesh.axes:
                return m
        return None

    def candidate(
        self, holder: Any, target: TensorSharding, shape_of: Value
    ) -> tuple[Candidate, ...]:
        """Give the user annotation `holder` the dims' axes of `target` (a layout of a value
        of `shape_of`'s shape): a candidate when `holder` is one and has that shape."""
        loc = self._annotation(holder)
        if loc is None:
            return ()
        if isinstance(holder, Value):
            t, u = holder.type, shape_of.type
            if not (isinstance(t, TensorType) and isinstance(u, TensorType) and t.shape == u.shape):
                return ()
        mesh = self._mesh_ref(shape_of)
        if mesh is None:
            return ()
        text = f"annotate {loc.kind} {self.name(holder)} as {dims_text(target)}"
        return (Candidate(loc, axes_layout(mesh, (d.axes for d in target.dims)), text),)

    def _roots(self, v: Value, dims: range) -> list[Any]:
        out: list[Any] = []
        for d in dims:
            r = self.root_holder(v, d)
            if r is not None and all(r is not x for x in out):
                out.append(r)
        return out

    # -- ops with rules ------------------------------------------------------------------------
    def _values(self, op: Operation) -> list[Value]:
        return [*op.operands, *op.results]

    def _rival(
        self, op: Operation, i: int, d: int, rule: OpShardingRule, ts: list[Tensor],
        steps: OpSteps, mesh: Mesh,
    ) -> tuple[str, Any]:  # fmt: skip
        """What decided tensor i's dim d must be: a text and the tensor (None: the op)."""
        all_dims = (*rule.operand_dims, *rule.result_dims)
        factors = all_dims[i][d] if d < len(all_dims[i]) else ()
        computed = [c.dims for c in steps.computed]
        want = computed[i][d].axes if d < len(computed[i]) else ()
        have = [t.sharding.dims for t in ts]
        values = self._values(op)
        for f in factors:
            if rule.kinds[f] == FactorKind.NEED_REPLICATION and have[i][d].axes:
                return f"{op.name} cannot split dim {d}", None
        # a tensor of the op sharded along the same factor as the op is computed
        for f in factors:
            for j, dims in enumerate(all_dims):
                if j == i:
                    continue
                for e, fl in enumerate(dims):
                    if f in fl and have[j][e].axes and have[j][e].axes == computed[j][e].axes:
                        return self.dim(values[j], e, have[j][e].axes), values[j]
        # a tensor that takes the axes this dim has on another dim
        mine = set(have[i][d].axes) | set(want)
        for j, t in enumerate(have):
            if j == i:
                continue
            for e, dim in enumerate(t):
                if any(a.overlaps(b, mesh) for a in dim.axes for b in mine):
                    return self.dim(values[j], e, dim.axes), values[j]
        return f"{op.name}'s sharding rule", None

    def operand(
        self, op: Operation, i: int, rule: OpShardingRule, ts: list[Tensor], steps: OpSteps,
        mesh: Mesh,
    ) -> Result:  # fmt: skip
        """Operand i has one sharding, the op needs another."""
        v = op.operands[i]
        have, want = ts[i].sharding, steps.computed[i]
        d = _first_difference(have, want)
        rival, who = self._rival(op, i, d, rule, ts, steps, mesh)
        cause = (
            f"{self.name(v)} is {dims_text(have)}{self.root(v, d)}, {op.name} needs it as "
            f"{dims_text(want)} (following {rival})"
        )
        cands: list[Candidate] = []
        for r in self._roots(v, range(len(have.dims))) or [v]:
            cands.extend(self.candidate(r, want, v))
        if who is not None:
            # the rival's annotation made to agree with operand i's layout (same shapes)
            for r in self._roots(who, range(len(getattr(who.type, "shape", ())))):
                cands.extend(self.candidate(r, have, who))
        return cause, tuple(cands)

    def result(
        self, op: Operation, j: int, rule: OpShardingRule, ts: list[Tensor], steps: OpSteps,
        mesh: Mesh,
    ) -> Result:  # fmt: skip
        """The op computes result j at one sharding, the result has another."""
        n = len(op.operands)
        r = op.results[j]
        have, computed = ts[n + j].sharding, steps.computed[n + j]
        d = _first_difference(have, computed)
        rival, _ = self._rival(op, n + j, d, rule, ts, steps, mesh)
        cause = (
            f"{op.name} computes {self.name(r)} as {dims_text(computed)} (following {rival}), "
            f"it is {dims_text(have)}{self.root(r, d)}"
        )
        cands: list[Candidate] = []
        for root in self._roots(r, range(len(have.dims))):
            cands.extend(self.candidate(root, computed, r))
        return cause, tuple(cands)

    def reduction(
        self, op: Operation, rule: OpShardingRule, ts: list[Tensor], steps: OpSteps, mesh: Mesh
    ) -> Result:
        """Partial results over a sharded reduction factor."""
        parts = []
        cands: list[Candidate] = []
        for f, kind in enumerate(rule.kinds):
            if kind != FactorKind.REDUCTION or not steps.common[f]:
                continue
            where = []
            for i, dims in enumerate(rule.operand_dims):
                for d, fl in enumerate(dims):
                    if f in fl:
                        t = ts[i].sharding
                        where.append(self.dim(op.operands[i], d, t.dims[d].axes))
                        v = op.operands[i]
                        replicated = axes_layout(
                            t.mesh, (() if e == d else x.axes for e, x in enumerate(t.dims))
                        )
                        for r in self._roots(v, range(d, d + 1)):
                            cands.extend(self.candidate(r, replicated, v))
            parts.append(
                f"reduction factor {f} (size {rule.factor_sizes[f]}) sharded on "
                f"{axes_text(steps.common[f])}: " + ", ".join(where)
            )
        return "; ".join(parts) or "partial sums over " + axes_text(steps.reduce_axes), tuple(cands)

    # -- boundaries ----------------------------------------------------------------------------
    def boundary(
        self,
        src: Value,
        holder: Any,
        have: TensorSharding,
        want: TensorSharding,
        what: str,
        wanted: Any,
        label: str | None = None,
    ) -> Result:
        """`src` is `have`, the boundary (`holder`) wants `want`; `wanted` is the sharding
        object the holder carries (for its mesh); `label` names the holder in the text where
        the IR's name for it is none the user knows (a reshard the compiled form adds)."""
        d = _first_difference(have, want)
        dst = label or self.name(holder)
        other = dims_text(want) + (self.root(holder, d) if not isinstance(holder, str) else "")
        if isinstance(holder, str) and self._annotation(holder) is not None:
            other += " (annotated)"
        cause = (
            f"{what}: {self.name(src)} is {dims_text(have)}{self.root(src, d)}, {dst} is {other}"
        )
        cands: list[Candidate] = []
        if isinstance(holder, str) or not isinstance(holder, Value):
            cands.extend(self._holder_candidate(holder, have, src, wanted))
        else:
            for r in self._roots(holder, range(len(want.dims))) or [holder]:
                cands.extend(self.candidate(r, have, src))
        for r in self._roots(src, range(len(have.dims))):
            cands.extend(self.candidate(r, want, src))
        return cause, tuple(cands)

    def _holder_candidate(
        self, holder: Any, have: TensorSharding, src: Value, wanted: TensorSharding | None
    ) -> tuple[Candidate, ...]:
        loc = self._annotation(holder)
        mesh = wanted.mesh if wanted is not None else self._mesh_ref(src)
        if loc is None or mesh is None:
            return ()
        new = axes_layout(mesh, (d.axes for d in have.dims))
        return (Candidate(loc, new, f"declare {self.name(holder)} as {dims_text(have)}"),)
