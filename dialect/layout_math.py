"""Layout arithmetic: how many shards mesh axes make, and a tensor's per-device shape and bytes.

One home for the sums propagation, the plan and auto sharding all do. A dim split over axes
is split into the product of their sizes (a sub-axis counts its own size); its per-device
size is rounded up, as XLA pads a dim the shards do not divide (outside manual regions that is
legal; the shard_map checks reject it there themselves).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .shardings import AxisRef, DimSharding, Mesh, TensorSharding


def axes_size(axes: Iterable[AxisRef], mesh: Mesh) -> int:
    """The number of shards `axes` split a dim into: the product of their sizes on `mesh`."""
    n = 1
    for a in axes:
        n *= a.size(mesh)
    return n


def local_size(size: int, shards: int) -> int:
    """A dim of `size` split into `shards`, per device: rounded up (XLA pads); 0 stays 0."""
    return -(-size // shards) if size > 0 else 0


def local_shape(
    shape: Sequence[int], dims: Sequence[Iterable[AxisRef]], mesh: Mesh
) -> tuple[int, ...]:
    """The per-device shape of `shape` with dim d split over the axes `dims[d]` (a dim past
    the end of `dims` is whole)."""
    return tuple(
        local_size(size, axes_size(dims[d], mesh) if d < len(dims) else 1)
        for d, size in enumerate(shape)
    )


def local_bytes(
    shape: Sequence[int], elem_bytes: int, dims: Sequence[Iterable[AxisRef]], mesh: Mesh
) -> int:
    """The per-device bytes of a tensor of `shape` and `elem_bytes` per element, dim d split
    over the axes `dims[d]`."""
    n = elem_bytes
    for s in local_shape(shape, dims, mesh):
        n *= s
    return n


def axes_layout(mesh: str | Mesh, axes: Iterable[Iterable[AxisRef]]) -> TensorSharding:
    """The sharding that splits dim d over `axes[d]` and nothing else: closed dims, no
    priorities, no replicated or unreduced axes (a layout as the byte models compare them)."""
    return TensorSharding(mesh, tuple(DimSharding(tuple(d)) for d in axes))


def dim_axes(sharding: TensorSharding | None, rank: int) -> tuple[tuple[AxisRef, ...], ...]:
    """The axes of each of `rank` dims under `sharding`, a dim past its end whole (None:
    every dim whole)."""
    dims = sharding.dims if sharding is not None else ()
    return tuple(dims[d].axes if d < len(dims) else () for d in range(rank))


def sharded_local_bytes(
    shape: Sequence[int], elem_bytes: int, sharding: TensorSharding | None, mesh: Mesh
) -> int:
    """`local_bytes` of a tensor laid out as `sharding` (None: replicated)."""
    dims = [d.axes for d in sharding.dims] if sharding is not None else []
    return local_bytes(shape, elem_bytes, dims, mesh)
