"""`shardc.visualize_sharding`: a terminal grid of which devices hold which block of a tensor.

Geometry is plain Python (`device_blocks`, `grid_cells`): each device's block per tensor dim from
the mesh coordinates of the axes sharding that dim (first axis major, sub-axes included, blocks
of `ceil(size / shards)` as XLA pads). A thin `rich` renderer draws it, like
`jax.debug.visualize_array_sharding`. 1-D and 2-D tensors are drawn as they are; for higher
ranks the grid shows the last two dims, and a cell lists every device holding that block for
any index of the leading dims.
"""

from __future__ import annotations

import io
from typing import Any

from shardc.dialect.errors import ShardcError, rank_mismatch
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding
from shardc.frontend import specs

Block = tuple[tuple[int, int], ...]


def _coordinate(ref: AxisRef, mesh_coord: int, full: int) -> int:
    if ref.sub is None:
        return mesh_coord
    pre, size = ref.sub
    return (mesh_coord // (full // (pre * size))) % size


def device_blocks(sharding: TensorSharding, shape: tuple[int, ...], mesh: Mesh) -> dict[int, Block]:
    """Device id -> the `[start, stop)` range it holds in every dim."""
    if len(sharding.dims) != len(shape):
        raise rank_mismatch(
            f"sharding {sharding.body()}", len(sharding.dims), f"of shape {shape}", len(shape)
        )
    sizes = [a.size for a in mesh.axes]
    index = mesh.axis_index
    out: dict[int, Block] = {}
    for pos in range(mesh.num_devices):
        coords, rest = [], pos
        for s in reversed(sizes):
            coords.append(rest % s)
            rest //= s
        coords.reverse()
        block = []
        for dim, d in zip(shape, sharding.dims, strict=True):
            tile, shards = 0, 1
            for ref in d.axes:
                i = index[ref.name]
                size = ref.size(mesh)
                tile = tile * size + _coordinate(ref, coords[i], sizes[i])
                shards *= size
            step = -(-dim // shards) if shards else dim
            block.append((min(tile * step, dim), min((tile + 1) * step, dim)))
        device = mesh.device_ids[pos] if mesh.device_ids is not None else pos
        out[device] = tuple(block)
    return out


def grid_cells(blocks: dict[int, Block]) -> tuple[list[tuple[int, int]], list[tuple[int, int]], dict]:
    """(row ranges, column ranges, (row, col) -> sorted device ids) over the last two dims."""
    cells: dict[tuple[tuple[int, int], tuple[int, int]], set[int]] = {}
    for device, block in blocks.items():
        shown = block[-2:] if len(block) >= 2 else ((0, 1),) + tuple(block[-1:] or ((0, 1),))
        cells.setdefault((shown[0], shown[1]), set()).add(device)
    rows = sorted({r for r, _ in cells})
    cols = sorted({c for _, c in cells})
    return rows, cols, {k: sorted(v) for k, v in cells.items()}


def _ids(devices: list[int]) -> str:
    return ",".join(map(str, devices))


def render_blocks(blocks: dict[int, Block], title: str = "", width: int = 100) -> str:
    """Draw the grid with rich; returns the text (no colours)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    rows, cols, cells = grid_cells(blocks)
    table = Table(show_header=False, box=box.SQUARE, show_lines=True, padding=(0, 1))
    for _ in cols:
        table.add_column(justify="center")
    for r in rows:
        table.add_row(*[_ids(cells.get((r, c), [])) or "-" for c in cols])
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(table)
    return (title + "\n" if title else "") + console.export_text()



def render_grid(sharding: TensorSharding, shape: tuple[int, ...], mesh: Mesh, title: str = "") -> str:
    """The grid of `sharding` for a tensor of `shape` on `mesh`."""
    note = " (last two dims)" if len(shape) > 2 else ""
    head = f"{title + '  ' if title else ''}{sharding.body()}{note}"
    if sharding.unreduced:
        head += "  (unreduced: partial sums)"
    return render_blocks(device_blocks(sharding, shape, mesh), head)


def _blocks_of_jax(sharding: Any, shape: tuple[int, ...]) -> dict[int, Block]:
    out: dict[int, Block] = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        block = []
        for dim, sl in zip(shape, index, strict=True):
            start, stop, _ = sl.indices(dim)
            block.append((start, stop))
        out[device.id] = tuple(block)
    return out


def visualize_sharding(
    sharding_or_value: Any,
    shape: tuple[int, ...] | None = None,
    mesh: Any = None,
    print_it: bool = True,
) -> str:
    """Print (and return) a grid of which devices hold which block.

    Give a `jax.Array`, or a sharding (spec text, `PartitionSpec`, `TensorSharding`,
    `NamedSharding`, logical spec, placements) with `shape` and `mesh`.
    """
    obj = sharding_or_value
    text: str
    if hasattr(obj, "sharding") and hasattr(obj, "shape") and not isinstance(obj, TensorSharding):
        text = render_blocks(_blocks_of_jax(obj.sharding, tuple(obj.shape)), str(obj.sharding))
    else:
        if shape is None:
            raise ShardcError("visualize_sharding needs shape= for a sharding (or give an array)")
        if mesh is None and type(obj).__name__ == "NamedSharding":
            mesh = obj.mesh
        if mesh is None:
            raise ShardcError("visualize_sharding needs mesh= for a sharding (or give an array)")
        the_mesh = specs.to_mesh(mesh)
        resolved = specs.to_sharding(obj, the_mesh, tuple(shape), "sharding")
        assert resolved is not None
        text = render_grid(resolved, tuple(shape), the_mesh)
    if print_it:
        print(text, end="")
    return text
