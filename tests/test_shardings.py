"""Sharding attributes: print -> parse -> print round trips, and validation errors."""

from __future__ import annotations

import pytest

from shardc.dialect import AxisRef, DimSharding, Mesh, ShardcError, TensorSharding
from shardc.dialect.errors import ParseError, ShardingError
from shardc.dialect.sharding_syntax import parse_attr, parse_mesh, parse_tensor_sharding

ROUND_TRIP = [
    '#sdy.sharding<@mesh, [{"x"}, {}]>',
    '#sdy.sharding<@mesh, []>',
    '#sdy.sharding<@mesh, [{"x", "y"}, {?}]>',
    '#sdy.sharding<@mesh, [{"x", ?}p1, {"y"}p0]>',
    '#sdy.sharding<@mesh, [{?}p3, {}]>',
    '#sdy.sharding<@mesh, [{"x":(2)2}, {"x":(1)2}]>',
    '#sdy.sharding<@mesh, [{"x":(1)2, "y"}, {}], replicated={"x":(2)2}>',
    '#sdy.sharding<@mesh, [{}, {}], replicated={"x"}, unreduced={"y"}>',
    '#sdy.sharding<@mesh, [{}], unreduced={"x", "y"}>',
    '#sdy.sharding<mesh<["z"=2]>, [{"z"}]>',
    '#sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, []>]>',
    '#sdy.sharding_per_value<[]>',
    '#sdy.mesh<["x"=4, "y"=2]>',
    '#sdy.mesh<["a"=2, "b"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>',
    "#sdy.mesh<[], device_ids=[3]>",
    "#sdy.mesh<[]>",
    '#sdy<manual_axes{"x", "y"}>',
    "#sdy<manual_axes{}>",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_print_parse_print(text: str) -> None:
    value = parse_attr(text)
    assert str(value) == text
    assert str(parse_attr(str(value))) == text


def test_whitespace_and_clause_order_normalise() -> None:
    s = parse_tensor_sharding('#sdy.sharding< @mesh , [ { "d" : ( 1 ) 2 } ], unreduced={"y"}, replicated={"x"}>')
    assert str(s) == '#sdy.sharding<@mesh, [{"d":(1)2}], replicated={"x"}, unreduced={"y"}>'


def test_stripped_form_and_iota_device_ids() -> None:
    assert parse_tensor_sharding('<@m, [{"x"}]>') == TensorSharding("m", (DimSharding((AxisRef("x"),)),))
    assert str(parse_mesh('<["x"=2], device_ids=[0, 1]>')) == '#sdy.mesh<["x"=2]>'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('#sdy.sharding<@mesh, [{"x"}p01]>', "leading zeros"),
        ('#sdy.sharding<@mesh, [{?, "x"}]>', "'?' must be the last"),
        ('#sdy.sharding<@mesh, [{"x"]>', "column"),
        ("#sdy.sharding<mesh, []>", "invalid sharding syntax"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_attr(text)


MESH = Mesh.of(x=4, y=2, d=8)


@pytest.mark.parametrize(
    ("text", "shape", "message"),
    [
        ('<@m, [{"z"}]>', (8,), 'unknown axis name: "z"'),
        ('<@m, [{"x"}]>', (8, 8), r"sharding doesn't match tensor rank: 1 != 2 \(value of shape \(8, 8\)\)"),
        ('<@m, [{"x"}, {"x"}]>', (8, 8), 'duplicate axis ref: "x"'),
        ('<@m, [{"x"}], replicated={"x"}>', (8,), 'duplicate axis ref: "x"'),
        ('<@m, [{}], replicated={"y", "x"}>', (8,), "replicated axes are not ordered w.r.t. mesh"),
        ('<@m, [{}], unreduced={"y", "x"}>', (8,), "unreduced axes are not ordered w.r.t. mesh"),
        ('<@m, [{"d":(0)2}]>', (8,), 'sub-axis pre-size must be at least 1: "d":\\(0\\)2'),
        ('<@m, [{"d":(1)1}]>', (8,), "sub-axis sizes must be greater than 1"),
        ('<@m, [{"d":(3)2}]>', (8,), "next pre-size 6 doesn't divide the size of the full axis 8"),
        ('<@m, [{"d":(1)8}]>', (8,), "sub-axis size is equal to the full axis size"),
        ('<@m, [{"d":(1)4}, {"d":(2)2}]>', (8, 8), "overlapping sub-axes"),
        ('<@m, [{"d":(1)2}, {"d"}]>', (8, 8), "both sub-axis and full-axis are used"),
        ('<@m, [{"d":(1)2, "d":(2)2}]>', (8,), "two consecutive sub-axes can be merged"),
        ('<@m, [{}p1]>', (8,), "dim 0 is empty and closed but has a priority"),
    ],
)
def test_validation_errors(text: str, shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(ShardingError, match=message) as info:
        parse_tensor_sharding(text).validate(MESH, shape, "%arg0")
    assert info.value.message.startswith(f"%arg0 = {parse_tensor_sharding(text).body()}")
    assert isinstance(info.value, ShardcError)


@pytest.mark.parametrize(
    "text",
    [
        '<@m, [{"d":(1)2}, {"d":(4)2}]>',  # a gap: fine
        '<@m, [{"d":(4)2, "d":(1)2}]>',  # minor first: fine
        '<@m, [{"d":(1)2}, {"d":(2)4}]>',  # consecutive but different dims: fine
        '<@m, [{"x"}, {?}p1]>',  # open empty dim may have a priority
        '<@m, [{"x", "y"}]>',  # non-divisible shardings are legal (XLA pads)
    ],
)
def test_valid_shardings(text: str) -> None:
    parse_tensor_sharding(text).validate(MESH, (3, 5)[: parse_tensor_sharding(text).rank])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('<["a"=2, "a"=4]>', 'mesh #sdy.mesh<.*>: duplicate axis name: "a"'),
        ('<["a"=2], device_ids=[0, 0]>', "sorted device ids must be iota"),
        ('<["a"=2], device_ids=[1, 0, 2]>', "got: 2 != 3"),
        ('<["a"=0]>', "axis size must be at least 1"),
        ("<[], device_ids=[1, 2]>", "axes is empty and device_ids has more than one element"),
    ],
)
def test_mesh_errors(text: str, message: str) -> None:
    with pytest.raises(ShardcError, match=message):
        parse_mesh(text)


def test_maximal_sharding_must_be_rank_0() -> None:
    maximal = parse_mesh("<[], device_ids=[3]>")
    assert maximal.is_maximal
    parse_tensor_sharding("<@maximal, []>").validate(maximal, ())
    with pytest.raises(ShardingError, match="maximal sharding"):
        parse_tensor_sharding('<@maximal, [{}]>').validate(maximal, (4,))


def test_axis_ref_relations() -> None:
    m = Mesh.of(x=8)
    full, hi, lo = AxisRef("x"), AxisRef("x", (1, 2)), AxisRef("x", (2, 4))
    assert full.contains(hi, m) and not hi.contains(full, m)
    assert hi.prefix_of(AxisRef("x", (1, 4)), m)
    assert not hi.overlaps(lo, m) and hi.can_merge(lo, m)
    assert hi.merge(lo, m) == full
    assert AxisRef("x", (1, 4)).overlaps(lo, m)


def test_repr_reads_like_the_syntax() -> None:
    s = parse_tensor_sharding('<@mesh, [{"x", ?}p1, {}]>')
    assert repr(s) == '<@mesh, [{"x", ?}p1, {}]>'
    assert str(s.closed()) == '#sdy.sharding<@mesh, [{"x"}, {}]>'


def test_sharding_hash_is_cached_and_survives_pickling() -> None:
    import pickle

    dims = (DimSharding((AxisRef("x"), AxisRef("y", (1, 2)))), DimSharding((), False, 1))
    a = TensorSharding("mesh", dims, (AxisRef("z"),))
    b = TensorSharding("mesh", tuple(dims), (AxisRef("z"),))
    assert a == b and hash(a) == hash(b) == hash(a)  # second call: the cached value
    assert hash(a) == hash(("mesh", a.dims, a.replicated, a.unreduced))
    assert a != TensorSharding("mesh", dims) and {a: 1}[b] == 1
    copy = pickle.loads(pickle.dumps(a))
    assert copy == a and hash(copy) == hash(a) and str(copy) == str(a)
