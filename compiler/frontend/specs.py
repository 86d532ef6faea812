"""User-facing sharding specs: one compact syntax, plus JAX's own objects, resolved to sdy.

A spec says, per tensor dim, which mesh axes shard it (major to minor), whether propagation may
add more (open, `?`) and with which user priority (`p0` is the strongest). The compact syntax
(grammar in `spec.lark`):

    "x, _"            dim 0 on axis x (closed), dim 1 replicated (closed)
    "{x,y}, ?"        dim 0 on x then y, dim 1 open and empty
    "x?p1, {y}p0"     dim 0 on x, open, priority 1; dim 1 on y, priority 0
    "(x,y), x:(2)2"   parentheses work like braces; x:(2)2 is a sub-axis of x
    "x, _; unreduced={y}"   tensor-level clauses (replicated=, unreduced=) after ';'

Fewer dims than the tensor's rank are padded with closed replicated dims, as JAX pads a
`PartitionSpec`. A priority needs braces or `?` before it (`{x}p1`, `x?p1`), since `xp1` is an
axis name. `PartitionSpec`, `NamedSharding`, `TensorSharding` and objects with a
`to_dim_shardings(mesh, rank)` method (logical specs, placements) are accepted wherever a spec is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput

from shardc.dialect.errors import (
    ParseError,
    ShardcError,
    ShardingError,
    bad_priority,
    bad_value,
    rank_mismatch,
    syntax_error,
    unknown_axis,
    wrong_mesh,
)
from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, MeshAxis, TensorSharding
from shardc.frontend.logical_rules import resolve_pspec_entries

MESH_SYMBOL = "mesh"


@dataclass(frozen=True)
class Spec:
    """A parsed spec: dim shardings plus tensor-level replicated/unreduced axes, no mesh yet."""

    dims: tuple[DimSharding, ...]
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    text: str | None = None

    def __str__(self) -> str:
        if self.text is not None:
            return self.text
        return format_spec(self)


@cache
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("spec.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=True)


def _priority(tok: Token | None) -> int | None:
    if tok is None:
        return None
    digits = str(tok)[1:]
    if len(digits) > 1 and digits[0] == "0":
        raise bad_priority(str(tok))
    return int(digits)


@v_args(inline=True)
class _ToSpec(Transformer):
    def spec(self, dims, *clauses):  # type: ignore[no-untyped-def]
        replicated: tuple[AxisRef, ...] = ()
        unreduced: tuple[AxisRef, ...] = ()
        for kw, axes in clauses:
            if kw == "replicated":
                replicated = axes
            else:
                unreduced = axes
        return Spec(tuple(dims or ()), replicated, unreduced)

    def dims(self, *dims: DimSharding) -> list[DimSharding]:
        return list(dims)

    def replicated_dim(self, _tok: Token) -> DimSharding:
        return DimSharding((), True)

    def open_dim(self, _tok: Token, prio: Token | None) -> DimSharding:
        return DimSharding((), False, _priority(prio))

    def bare_dim(self, axis: AxisRef, open_tok: Token | None, prio: Token | None) -> DimSharding:
        return DimSharding((axis,), open_tok is None, _priority(prio))

    def group_dim(self, axes, open_tok, prio):  # type: ignore[no-untyped-def]
        p = _priority(prio)
        if not axes and open_tok is None and p is not None:
            raise ParseError("a closed empty dim '{}' cannot have a priority")
        return DimSharding(axes, open_tok is None, p)

    def group(self, *axes: AxisRef | None) -> tuple[AxisRef, ...]:
        return tuple(a for a in axes if a is not None)

    def axis(self, name: str, pre: Token | None, size: Token | None) -> AxisRef:
        if pre is None:
            return AxisRef(name)
        return AxisRef(name, (int(pre), int(size)))  # type: ignore[arg-type]

    def bare_name(self, tok: Token) -> str:
        return str(tok)

    def quoted_name(self, tok: Token) -> str:
        return str(tok)[1:-1]

    def clause(self, kw: Token, axes: tuple[AxisRef, ...]) -> tuple[str, tuple[AxisRef, ...]]:
        return (str(kw), axes)


@lru_cache(maxsize=4096)
def parse_spec(text: str) -> Spec:
    """Parse the compact spec syntax; `ParseError` with a caret under the bad column."""
    try:
        spec = _ToSpec().transform(_parser().parse(text))
    except UnexpectedInput as e:
        raise syntax_error(
            "sharding spec", text, getattr(e, "column", 0) or 0,
            hint='write one entry per dim like "x, _" or "{x,y}?p1, ?"; a priority follows '
            'braces or "?" ({x}p1, x?p1), lowercase p, no space (see shardc.frontend.specs)',
        ) from None
    except LarkError as e:
        inner = getattr(e, "orig_exc", None)
        if isinstance(inner, ShardcError):
            raise ParseError(f"invalid sharding spec {text!r}: {inner.message}") from None
        raise ParseError(f"invalid sharding spec {text!r}") from None
    return Spec(spec.dims, spec.replicated, spec.unreduced, text)


def format_spec(spec: Spec) -> str:
    """The compact text of a spec (round-trips through `parse_spec`)."""

    def axis(a: AxisRef) -> str:
        base = a.name if a.name.replace("_", "a").isalnum() and a.name[0].isalpha() else f'"{a.name}"'
        return base if a.sub is None else f"{base}:({a.sub[0]}){a.sub[1]}"

    parts = []
    for d in spec.dims:
        if not d.axes:
            text = "_" if d.is_closed else "?"
        else:
            if len(d.axes) == 1 and d.priority is None:
                text = axis(d.axes[0])
            else:
                text = "{" + ",".join(axis(a) for a in d.axes) + "}"
            if not d.is_closed:
                text += "?"
        if d.priority is not None:
            text += f"p{d.priority}"
        parts.append(text)
    out = ", ".join(parts)
    for kw, axes in (("replicated", spec.replicated), ("unreduced", spec.unreduced)):
        if axes:
            out += f"; {kw}={{" + ",".join(axis(a) for a in axes) + "}"
    return out


# ---------------------------------------------------------------------------------------------
# Meshes


def to_mesh(mesh: Any) -> Mesh:
    """A shardc `Mesh` from a shardc/JAX `Mesh`, an `AbstractMesh`, `"x=4,y=2"` or a dict."""
    if isinstance(mesh, Mesh):
        return mesh
    if isinstance(mesh, str):
        return parse_mesh_arg(mesh)
    if isinstance(mesh, dict):
        return Mesh(tuple(MeshAxis(str(k), int(v)) for k, v in mesh.items()))
    names = getattr(mesh, "axis_names", None)
    sizes = getattr(mesh, "axis_sizes", None)
    if names is None:
        shape = getattr(mesh, "shape", None)
        if isinstance(shape, dict):
            return Mesh(tuple(MeshAxis(str(k), int(v)) for k, v in shape.items()))
        raise bad_value(
            "mesh", mesh, "a mesh", cls=ShardingError,
            hint='pass a jax.sharding.Mesh, an AbstractMesh, a shardc Mesh or "x=4,y=2"',
        )
    if sizes is None:
        sizes = tuple(mesh.shape[n] for n in names)
    return Mesh(tuple(MeshAxis(str(n), int(s)) for n, s in zip(names, sizes, strict=True)))


def parse_mesh_arg(text: str) -> Mesh:
    """`"x=4,y=2"` -> `Mesh(<["x"=4, "y"=2]>)`."""
    axes = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, size = part.partition("=")
        if not sep or not name.strip() or not size.strip().isdigit():
            raise ParseError(
                f"invalid mesh {text!r}: expected name=size pairs", hint='write e.g. "x=4,y=2"'
            )
        axes.append(MeshAxis(name.strip(), int(size)))
    if not axes:
        raise ParseError(f"invalid mesh {text!r}: no axes", hint='write e.g. "x=4,y=2"')
    return Mesh(tuple(axes))


# ---------------------------------------------------------------------------------------------
# Resolving anything spec-like to a TensorSharding


def is_spec_like(obj: Any) -> bool:
    """True for the objects `to_sharding` accepts as one spec (a pytree leaf)."""
    if obj is None or isinstance(obj, str | Spec | TensorSharding):
        return True
    if hasattr(obj, "to_dim_shardings"):
        return True
    if _flax_variable_pspec(obj) is not None:
        return True
    return _is_partition_spec(obj) or type(obj).__name__ == "NamedSharding"


def _flax_variable_pspec(obj: Any) -> Any:
    """The `PartitionSpec` an NNX `Variable` carries in its sharding metadata (logical names
    resolved by Flax's rules in effect), or, for a Variable holding a PartitionSpec (what
    `nnx.get_partition_spec` returns), that spec; None for anything else."""
    import sys

    if "flax" not in sys.modules or not hasattr(obj, "get_metadata"):
        return None
    try:
        from flax import nnx
        from flax.nnx import spmd
    except ImportError:  # pragma: no cover
        return None
    if not isinstance(obj, nnx.Variable):
        return None
    value = obj.get_value() if hasattr(obj, "get_value") else obj.value
    if _is_partition_spec(value):
        return value
    from jax.sharding import PartitionSpec

    return spmd.get_var_pspec(obj) or PartitionSpec()  # no sharding metadata: replicated


def _is_partition_spec(obj: Any) -> bool:
    from jax.sharding import PartitionSpec

    return isinstance(obj, PartitionSpec)


def _from_partition_spec(pspec: Any) -> Spec:
    dims = []
    for entry in pspec:
        if entry is None:
            dims.append(DimSharding((), True))
        elif str(entry) == "UNCONSTRAINED" or type(entry).__name__ == "UnconstrainedSingleton":
            dims.append(DimSharding((), False))
        elif isinstance(entry, tuple | list):
            dims.append(DimSharding(tuple(AxisRef(str(a)) for a in entry), True))
        else:
            dims.append(DimSharding((AxisRef(str(entry)),), True))
    unreduced = tuple(AxisRef(str(a)) for a in sorted(getattr(pspec, "unreduced", ()) or ()))
    return Spec(tuple(dims), (), unreduced, text=str(pspec))


def _from_logical_partition_spec(pspec: Any, mesh: Mesh) -> Spec:
    """A `PartitionSpec` whose names may be logical (`nn.get_partition_spec` of Flax boxes):
    those are mapped through the axis rules in effect (shardc's, else Flax's)."""
    from jax.sharding import PartitionSpec

    resolved = resolve_pspec_entries(tuple(pspec), mesh)
    if resolved is None:
        return _from_partition_spec(pspec)
    spec = _from_partition_spec(PartitionSpec(*resolved))
    return Spec(spec.dims, spec.replicated, spec.unreduced, text=f"{pspec} under logical axis rules")


def to_spec(obj: Any, mesh: Mesh, rank: int) -> Spec:
    """Any spec-like object as a `Spec` (mesh axes already resolved)."""
    if isinstance(obj, Spec):
        return obj
    if isinstance(obj, str):
        return parse_spec(obj)
    if isinstance(obj, TensorSharding):
        return Spec(obj.dims, obj.replicated, obj.unreduced, text=obj.body())
    if hasattr(obj, "to_dim_shardings"):
        return obj.to_dim_shardings(mesh, rank)
    if _is_partition_spec(obj):
        return _from_logical_partition_spec(obj, mesh)
    flax_pspec = _flax_variable_pspec(obj)
    if flax_pspec is not None:
        return _from_logical_partition_spec(flax_pspec, mesh)
    if type(obj).__name__ == "NamedSharding":
        other = to_mesh(obj.mesh)
        if other.axis_sizes != mesh.axis_sizes:
            raise wrong_mesh(
                "NamedSharding", other.body(), mesh.body(), "the function",
                hint="use the same mesh, or pass a PartitionSpec",
            )
        return _from_partition_spec(obj.spec)
    raise ShardingError(
        f"{obj!r} is not a sharding spec",
        hint='pass a spec string like "x, _", a PartitionSpec or a NamedSharding',
    )


def to_sharding(
    obj: Any,
    mesh: Mesh,
    shape: tuple[int, ...],
    what: str = "sharding",
    mesh_ref: str | Mesh = MESH_SYMBOL,
) -> TensorSharding | None:
    """Resolve a spec-like object for a tensor of `shape` on `mesh`; `None` stays `None`.

    Errors name `what` (e.g. `in_shardings[0]`) and the spec as the user wrote it.
    """
    if obj is None:
        return None
    rank = len(shape)
    try:
        spec = to_spec(obj, mesh, rank)
    except ParseError as e:
        raise ParseError(f"{what}: {e.message}", hint=e.hint) from None
    except ShardingError as e:
        raise ShardingError(f"{what} = {_given_text(obj)}: {e.message}", hint=e.hint) from None
    given = f"{what} = {spec}"
    if len(spec.dims) > rank:
        raise rank_mismatch(
            given, len(spec.dims), f"of shape {shape}", rank, hint=f"give at most {rank} dims"
        )
    dims = spec.dims + (DimSharding((), True),) * (rank - len(spec.dims))
    replicated = tuple(sorted(spec.replicated, key=lambda a: a.sort_key(mesh)))
    unreduced = tuple(sorted(spec.unreduced, key=lambda a: a.sort_key(mesh)))
    for a in [x for d in dims for x in d.axes] + list(replicated) + list(unreduced):
        if a.name not in mesh.axis_sizes:
            raise unknown_axis(
                a.name, mesh.body(), mesh.axis_names, given=given,
                hint=_unknown_axis_hint(a.name, mesh),
            )
    sharding = TensorSharding(mesh_ref, dims, replicated, unreduced)
    try:
        sharding.validate(mesh, shape, given=given)
    except ShardingError as e:
        if e.hint is None and "sub-axis" in e.message:
            raise ShardingError(e.message, hint=_SUB_AXIS_HINT) from None
        raise
    return sharding


def _given_text(obj: Any) -> str:
    return obj if isinstance(obj, str) or not hasattr(obj, "to_dim_shardings") else str(obj)


def _unknown_axis_hint(name: str, mesh: Mesh) -> str:
    hint = "use one of the mesh axes: " + ", ".join(mesh.axis_names)
    m = re.fullmatch(r"(.+)p(\d+)", name)
    if m and m.group(1) in mesh.axis_sizes:
        hint += f' (a priority needs braces or "?" before it: {{{m.group(1)}}}p{m.group(2)})'
    return hint


_SUB_AXIS_HINT = (
    'a sub-axis "a":(pre)size needs pre * size to divide the size of axis a, and sub-axes of '
    "one axis must not overlap"
)
