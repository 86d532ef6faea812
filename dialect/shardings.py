"""Immutable sharding attributes: meshes, axis refs (with sub-axes), dim and tensor shardings.

`str()` of every class is its exact sdy MLIR text; `repr()` reads like it. Parsing lives in
`sharding_syntax.py` (one grammar); validation against a mesh and a shape lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from .errors import ShardingError, duplicate_axis, rank_mismatch, unknown_axis

# ---------------------------------------------------------------------------------------------
# Meshes


@dataclass(frozen=True, slots=True)
class MeshAxis:
    """A named mesh axis of a given size."""

    name: str
    size: int

    def __str__(self) -> str:
        return f'"{self.name}"={self.size}'


@dataclass(frozen=True)
class Mesh:
    """A device mesh: ordered named axes (row-major device layout) and optional device ids.

    `device_ids=None` means iota order. A mesh with no axes and one device id is maximal.
    """

    axes: tuple[MeshAxis, ...]
    device_ids: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for a in self.axes:
            if a.name in seen:
                raise duplicate_axis(
                    f'"{a.name}"', given=f"mesh {self}", noun="name",
                    hint="give each mesh axis its own name",
                )
            if a.size < 1:
                raise ShardingError(f"axis size must be at least 1, got: {a.size} in mesh {self}")
            seen.add(a.name)
        if self.device_ids is not None:
            ids = self.device_ids
            if not self.axes:
                if len(ids) > 1:
                    raise ShardingError("axes is empty and device_ids has more than one element")
            else:
                if len(ids) != self.num_devices:
                    raise ShardingError(
                        "total product of axis sizes must match total number of device ids, "
                        f"got: {self.num_devices} != {len(ids)}"
                    )
                if sorted(ids) != list(range(len(ids))):
                    raise ShardingError(
                        "sorted device ids must be iota(product(axes)), got: "
                        + ", ".join(map(str, sorted(ids)))
                    )
                if list(ids) == list(range(len(ids))):
                    object.__setattr__(self, "device_ids", None)

    @staticmethod
    def of(**axes: int) -> Mesh:
        """`Mesh.of(x=4, y=2)`."""
        return Mesh(tuple(MeshAxis(n, s) for n, s in axes.items()))

    @cached_property
    def axis_sizes(self) -> dict[str, int]:
        return {a.name: a.size for a in self.axes}

    @cached_property
    def axis_index(self) -> dict[str, int]:
        return {a.name: i for i, a in enumerate(self.axes)}

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    @property
    def num_devices(self) -> int:
        n = 1
        for a in self.axes:
            n *= a.size
        return n if self.axes or self.device_ids is None else len(self.device_ids)

    @property
    def is_maximal(self) -> bool:
        return not self.axes and self.device_ids is not None

    def size_of(self, name: str) -> int:
        try:
            return self.axis_sizes[name]
        except KeyError:
            raise unknown_axis(name, self.body(), self.axis_names) from None

    def body(self) -> str:
        text = "<[" + ", ".join(str(a) for a in self.axes) + "]"
        if self.device_ids is not None:
            text += ", device_ids=[" + ", ".join(map(str, self.device_ids)) + "]"
        return text + ">"

    def __str__(self) -> str:
        return "#sdy.mesh" + self.body()

    def __repr__(self) -> str:
        return f"Mesh({self.body()})"


# ---------------------------------------------------------------------------------------------
# Axis refs


@dataclass(frozen=True, slots=True)
class AxisRef:
    """A full mesh axis (`sub=None`) or the sub-axis `"name":(pre)size`."""

    name: str
    sub: tuple[int, int] | None = None

    @property
    def is_full(self) -> bool:
        return self.sub is None

    def pre_size(self) -> int:
        return 1 if self.sub is None else self.sub[0]

    def size(self, mesh: Mesh) -> int:
        return mesh.size_of(self.name) if self.sub is None else self.sub[1]

    def next_pre_size(self, mesh: Mesh) -> int:
        return self.pre_size() * self.size(mesh)

    def range(self, mesh: Mesh) -> tuple[int, int]:
        """[pre, next) as a half-open range of "pre-size" coordinates of the full axis."""
        return self.pre_size(), self.next_pre_size(mesh)

    def contains(self, other: AxisRef, mesh: Mesh) -> bool:
        if self.name != other.name:
            return False
        if self.sub is None:
            return True
        if other.sub is None:
            return False
        return self.pre_size() <= other.pre_size() and self.next_pre_size(
            mesh
        ) >= other.next_pre_size(mesh)

    def prefix_of(self, other: AxisRef, mesh: Mesh) -> bool:
        return other.contains(self, mesh) and self.pre_size() == other.pre_size()

    def overlaps(self, other: AxisRef, mesh: Mesh) -> bool:
        if self.name != other.name:
            return False
        if self.sub is None or other.sub is None:
            return True
        return self.pre_size() < other.next_pre_size(mesh) and other.pre_size() < self.next_pre_size(
            mesh
        )

    def can_merge(self, other: AxisRef, mesh: Mesh) -> bool:
        return (
            self.sub is not None
            and other.sub is not None
            and self.name == other.name
            and self.next_pre_size(mesh) == other.pre_size()
        )

    def merge(self, other: AxisRef, mesh: Mesh) -> AxisRef:
        pre, size = self.pre_size(), self.size(mesh) * other.size(mesh)
        return make_axis_ref(self.name, pre, size, mesh)

    def validate(self, mesh: Mesh) -> None:
        full = mesh.size_of(self.name)
        if self.sub is None:
            return
        pre, size = self.sub
        if pre < 1:
            raise ShardingError(f"sub-axis pre-size must be at least 1: {self}")
        if size <= 1:
            raise ShardingError(f"sub-axis sizes must be greater than 1: {self}")
        if full % (pre * size):
            raise ShardingError(
                f"sub-axis next pre-size {pre * size} doesn't divide the size of the full axis "
                f"{full}: {self}"
            )
        if size == full:
            raise ShardingError(f"sub-axis size is equal to the full axis size: {self}")

    def sort_key(self, mesh: Mesh) -> tuple[int, int, int]:
        """The mesh comparator: mesh position, then full axis between pre-size 1 and > 1."""
        idx = mesh.axis_index.get(self.name, len(mesh.axes))
        if self.sub is None:
            return (idx, 1, 0)
        pre, size = self.sub
        return (idx, 0 if pre == 1 else 2, pre * 100003 + size)

    def __str__(self) -> str:
        if self.sub is None:
            return f'"{self.name}"'
        return f'"{self.name}":({self.sub[0]}){self.sub[1]}'

    __repr__ = __str__


def make_axis_ref(name: str, pre: int, size: int, mesh: Mesh) -> AxisRef:
    """The canonical ref for `(pre)size` of `name`: the full axis when it covers all of it."""
    if pre == 1 and size == mesh.size_of(name):
        return AxisRef(name)
    return AxisRef(name, (pre, size))


# ---------------------------------------------------------------------------------------------
# Dim and tensor shardings


@dataclass(frozen=True, slots=True)
class DimSharding:
    """Axes sharding one tensor dim, major to minor; open dims (`?`) may still grow."""

    axes: tuple[AxisRef, ...] = ()
    is_closed: bool = True
    priority: int | None = None

    def __str__(self) -> str:
        items = [str(a) for a in self.axes]
        if not self.is_closed:
            items.append("?")
        text = "{" + ", ".join(items) + "}"
        if self.priority is not None:
            text += f"p{self.priority}"
        return text

    __repr__ = __str__


OPEN = DimSharding((), is_closed=False)
CLOSED = DimSharding((), is_closed=True)


@dataclass(frozen=True, slots=True)
class TensorSharding:
    """`#sdy.sharding<@mesh, [dims], replicated={...}, unreduced={...}>`.

    `mesh` is a symbol name (`"mesh"` for `@mesh`) or an inline `Mesh`.
    """

    mesh: str | Mesh
    dims: tuple[DimSharding, ...]
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    # `body()` once computed: a parsed sharding is one shared object per distinct text, so the
    # printer writes most of them without rebuilding the text
    _body: str | None = field(default=None, init=False, compare=False, hash=False, repr=False)
    # the hash once computed: propagation memoizes its steps on shardings (driver.py), and a
    # nested tuple's hash costs a walk over every dim and axis
    _hash: int | None = field(default=None, init=False, compare=False, hash=False, repr=False)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.mesh, self.dims, self.replicated, self.unreduced))
            object.__setattr__(self, "_hash", h)
        return h

    def __reduce__(self) -> tuple:
        # rebuilt from the fields: a cached str hash is only valid in the process that made it
        return (TensorSharding, (self.mesh, self.dims, self.replicated, self.unreduced))

    @staticmethod
    def open(mesh: str | Mesh, rank: int) -> TensorSharding:
        return TensorSharding(mesh, (OPEN,) * rank)

    @staticmethod
    def replicated_of(mesh: str | Mesh, rank: int) -> TensorSharding:
        return TensorSharding(mesh, (CLOSED,) * rank)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def mesh_name(self) -> str | None:
        return self.mesh if isinstance(self.mesh, str) else None

    def all_axes(self) -> list[AxisRef]:
        out = [a for d in self.dims for a in d.axes]
        out.extend(self.replicated)
        out.extend(self.unreduced)
        return out

    def used_axis_names(self) -> set[str]:
        return {a.name for d in self.dims for a in d.axes}

    def is_fully_replicated(self) -> bool:
        return all(not d.axes for d in self.dims) and not self.unreduced

    def is_fully_open(self) -> bool:
        return all(not d.axes and not d.is_closed for d in self.dims) and not (
            self.replicated or self.unreduced
        )

    def closed(self) -> TensorSharding:
        """All dims closed, priorities dropped (what an export writes)."""
        return TensorSharding(
            self.mesh,
            tuple(DimSharding(d.axes) for d in self.dims),
            self.replicated,
            self.unreduced,
        )

    def with_dims(self, dims: tuple[DimSharding, ...]) -> TensorSharding:
        return TensorSharding(self.mesh, dims, self.replicated, self.unreduced)

    def body(self) -> str:
        """The stripped form `<@mesh, [...]>` used inside lists and constraint ops."""
        cached = self._body
        if cached is not None:
            return cached
        text = self._make_body()
        object.__setattr__(self, "_body", text)
        return text

    def _make_body(self) -> str:
        mesh = f"@{self.mesh}" if isinstance(self.mesh, str) else "mesh" + self.mesh.body()
        text = f"<{mesh}, [" + ", ".join(str(d) for d in self.dims) + "]"
        if self.replicated:
            text += ", replicated={" + ", ".join(map(str, self.replicated)) + "}"
        if self.unreduced:
            text += ", unreduced={" + ", ".join(map(str, self.unreduced)) + "}"
        return text + ">"

    def __str__(self) -> str:
        return "#sdy.sharding" + self.body()

    def __repr__(self) -> str:
        return self.body()

    def validate(
        self,
        mesh: Mesh,
        shape: tuple[int, ...] | None = None,
        what: str = "",
        given: str | None = None,
    ) -> None:
        """Raise `ShardingError` if this sharding is invalid on `mesh` for a tensor of `shape`.

        The message starts with `given` (default: `what = <@mesh, [...]>`, the sharding as
        written where it sits), then the constraint broken."""
        if given is None:
            given = f"{what} = {self.body()}" if what else self.body()
        try:
            self._validate(mesh, shape, given)
        except ShardingError as e:
            if e.message.startswith(given):
                raise
            raise ShardingError(f"{given}: {e.message}", hint=e.hint) from None

    def _validate(self, mesh: Mesh, shape: tuple[int, ...] | None, given: str) -> None:
        if mesh.is_maximal:
            if self.dims or self.replicated or self.unreduced:
                raise ShardingError(
                    "a maximal sharding can only have a sharding with rank 0 and no replicated "
                    "or unreduced axes."
                )
            return
        if shape is not None and len(shape) != len(self.dims):
            raise rank_mismatch(given, len(self.dims), f"of shape {shape}", len(shape))
        for i, d in enumerate(self.dims):
            if d.is_closed and not d.axes and d.priority is not None:
                raise ShardingError(f"dim {i} is empty and closed but has a priority")
        seen: list[AxisRef] = []
        for group in [d.axes for d in self.dims] + [self.replicated, self.unreduced]:
            prev: AxisRef | None = None
            for a in group:
                a.validate(mesh)
                for b in seen:
                    if a == b:
                        raise duplicate_axis(str(a), given=given)
                    if a.name == b.name and (a.sub is None) != (b.sub is None):
                        raise ShardingError(
                            f'both sub-axis and full-axis are used for axis name: "{a.name}"'
                        )
                    if a.overlaps(b, mesh):
                        raise ShardingError(f"overlapping sub-axes: {b}, {a}")
                if prev is not None and prev.can_merge(a, mesh):
                    raise ShardingError(f"two consecutive sub-axes can be merged: {prev}, {a}")
                seen.append(a)
                prev = a
        for label, group in (("replicated", self.replicated), ("unreduced", self.unreduced)):
            keys = [a.sort_key(mesh) for a in group]
            if keys != sorted(keys):
                raise ShardingError(f"{label} axes are not ordered w.r.t. mesh")


@dataclass(frozen=True, slots=True)
class ShardingPerValue:
    """`#sdy.sharding_per_value<[...]>`: one sharding per op result."""

    shardings: tuple[TensorSharding, ...]

    def __str__(self) -> str:
        return "#sdy.sharding_per_value<[" + ", ".join(s.body() for s in self.shardings) + "]>"

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class ManualAxes:
    """`#sdy<manual_axes{"x", "y"}>`: the manual axes of a manual_computation."""

    axes: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return "#sdy<manual_axes{" + ", ".join(f'"{a}"' for a in self.axes) + "}>"

    __repr__ = __str__
