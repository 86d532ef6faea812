"""The compact spec syntax, logical rules, placements and the grid geometry (no jax tracing)."""

import pytest

import shardc
from shardc.api.grid import device_blocks, grid_cells
from shardc.dialect.shardings import Mesh
from shardc.frontend.placements import (
    Partial,
    Replicate,
    Shard,
    StridedShard,
    placements_to_sharding,
    sharding_to_placements,
)
from shardc.frontend.specs import format_spec, parse_spec, to_sharding

MESH = Mesh.of(x=4, y=2)


@pytest.mark.parametrize("text,expected", [
    ("x, _", '[{"x"}, {}]'),
    ("{x,y}, ?", '[{"x", "y"}, {?}]'),
    ("x?p1, {y}p0", '[{"x", ?}p1, {"y"}p0]'),
    ("(x,y)", '[{"x", "y"}, {}]'),
    ("x:(1)2, _; unreduced={y}", '[{"x":(1)2}, {}], unreduced={"y"}'),
])
def test_spec_syntax(text: str, expected: str) -> None:
    s = to_sharding(text, MESH, (8, 8))
    assert s.body() == f"<@mesh, {expected}>"
    assert parse_spec(format_spec(parse_spec(text))).dims == parse_spec(text).dims


@pytest.mark.parametrize("text,message", [
    ("x p1", "invalid sharding spec"),
    ("{}p1", "closed empty dim"),
    ("w", 'w: unknown axis name: "w"'),
    ("x, y, _", r"x, y, _: sharding doesn't match tensor rank: 3 != 2 \(value of shape \(8, 8\)\)"),
    ("x, x", 'x, x: duplicate axis ref: "x"'),
    ("x?p01", "leading zeros"),
])
def test_spec_errors(text: str, message: str) -> None:
    with pytest.raises(shardc.ShardcError, match=message):
        to_sharding(text, MESH, (8, 8))


def test_partition_spec_and_named_sharding() -> None:
    from jax.sharding import AbstractMesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    s = to_sharding(P(("x", "y"), P.UNCONSTRAINED), MESH, (8, 8))
    assert s.body() == '<@mesh, [{"x", "y"}, {?}]>'
    with pytest.raises(shardc.ShardcError, match="NamedSharding is on mesh"):
        to_sharding(NamedSharding(AbstractMesh((2,), ("x",)), P("x")), MESH, (8,))


def test_logical_rules() -> None:
    rules = [("batch", "X"), ("hidden", "Y"), ("embed_kernel", "X"), ("embed", "Y")]
    assert str(shardc.logical_to_spec(("batch", None, "embed"), rules)) == str(
        __import__("jax").sharding.PartitionSpec("X", None, "Y"))
    mesh = Mesh.of(X=2, Y=4)
    with shardc.axis_rules(rules):
        s = to_sharding(shardc.logical("batch", "?", "embed", priorities=(0, None, 1)), mesh, (2, 2, 2))
    assert s.body() == '<@mesh, [{"X"}p0, {?}, {"Y"}p1]>'
    with pytest.raises(shardc.ShardcError, match="has no rule"):
        shardc.logical_to_spec(("nope",), rules)
    with pytest.raises(shardc.ShardcError, match="without axis rules"):
        to_sharding(shardc.logical("batch"), mesh, (2,))


def test_placements_round_trip() -> None:
    m = Mesh.of(dp=2, tp=4)
    cases = [((Shard(0), Shard(1)), None, '[{"dp"}, {"tp"}]'),
             ((Shard(0), Shard(0)), {0: ("tp", "dp")}, '[{"tp", "dp"}, {}]'),
             ((StridedShard(0, 4), Shard(0)), None, '[{"tp", "dp"}, {}]'),
             ((Partial(), Shard(1)), None, '[{}, {"tp"}], unreduced={"dp"}'),
             ((Replicate(), Replicate()), None, "[{}, {}]")]
    for placements, order, body in cases:
        s = placements_to_sharding(placements, m, 2, order)
        assert s.body() == f"<@mesh, {body}>"
        back, back_order = sharding_to_placements(s, m)
        assert placements_to_sharding(back, m, 2, back_order) == s
    spec = to_sharding(shardc.Placements(Shard(1), Shard(0)), m, (4, 4))
    assert spec.body() == '<@mesh, [{"tp"}, {"dp"}]>'


@pytest.mark.parametrize("placements,message", [
    ((Partial("max"), Replicate()), "only"),
    ((StridedShard(0, 3), Shard(0)), "not the size product"),
    ((Shard(2), Replicate()), "rank 2"),
    ((Shard(0),), "one placement per mesh axis"),
])
def test_placements_errors(placements: tuple, message: str) -> None:
    with pytest.raises(shardc.ShardcError, match=message):
        placements_to_sharding(placements, Mesh.of(dp=2, tp=4), 2)


def test_sub_axis_has_no_placement() -> None:
    s = to_sharding("x:(1)2", MESH, (8,))
    with pytest.raises(shardc.ShardcError, match="sub-axis"):
        sharding_to_placements(s, MESH)


def test_grid_geometry() -> None:
    blocks = device_blocks(to_sharding("x, y", MESH, (8, 4)), (8, 4), MESH)
    assert blocks[0] == ((0, 2), (0, 2)) and blocks[7] == ((6, 8), (2, 4))
    rows, cols, cells = grid_cells(device_blocks(to_sharding("y, _", MESH, (6, 4)), (6, 4), MESH))
    assert rows == [(0, 3), (3, 6)] and cells[((0, 3), (0, 4))] == [0, 2, 4, 6]
    # a sub-axis: "x":(2)2 is the minor half of x
    blocks = device_blocks(to_sharding("x:(2)2", MESH, (4,)), (4,), MESH)
    assert blocks[0] == ((0, 2),) and blocks[2] == ((2, 4),)
    text = shardc.visualize_sharding("x, y", (8, 4), MESH, print_it=False)
    assert "6" in text and "┌" in text
    with pytest.raises(shardc.ShardcError, match="needs shape"):
        shardc.visualize_sharding("x", mesh=MESH, print_it=False)
