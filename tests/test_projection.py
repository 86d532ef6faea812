"""Projection and back-projection on plain data (docs/propagation.md §2)."""

from shardc.dialect.shardings import AxisRef, DimSharding, Mesh, TensorSharding
from shardc.passes.propagation.projection import back_project, is_strict_prefix, project

MESH = Mesh.of(x=4, y=2)
X, Y = AxisRef("x"), AxisRef("y")
X1, X2 = AxisRef("x", (1, 2)), AxisRef("x", (2, 2))


def ts(*dims: tuple, closed: bool = True) -> TensorSharding:
    return TensorSharding("mesh", tuple(DimSharding(tuple(d), closed) for d in dims))


def test_split_into_sub_axes() -> None:
    p = project(ts([X]), ((0, 1),), (2, 4), MESH)  # G06
    assert p.factors[0].axes == (X1,) and p.factors[1].axes == (X2,)
    assert p.factors[1].minor_most and not p.factors[0].minor_most


def test_overflow_closes_next_factor() -> None:
    p = project(ts([X, Y]), ((0, 1),), (6, 4), MESH)  # G41
    assert p.factors[0].axes == (X1,)
    assert p.factors[0].overflow == (X2, Y)
    assert p.factors[1].closed and p.factors[1].axes == ()


def test_coprime_everything_overflows() -> None:
    mesh = Mesh.of(x=4, y=3)
    p = project(ts([Y, X]), ((0, 1),), (4, 3), mesh)  # G53
    assert p.factors[0].axes == () and p.factors[0].overflow == (Y, X)


def test_absent_sharding_is_open() -> None:
    p = project(None, ((0,), (1,)), (8, 16), MESH)
    assert all(not f.closed and not f.axes for f in p.factors.values())


def test_back_projection_stops_at_partial_factor() -> None:
    p = project(ts([Y], [X]), ((0,), (1,)), (8, 4), MESH)
    out = back_project(p, None, ((0, 1),), (8, 4), MESH, "mesh")  # G08
    assert out.dims[0].axes == (Y,)


def test_back_projection_merges_full_factors() -> None:
    p = project(ts([X], [Y]), ((0,), (1,)), (4, 8), MESH)
    out = back_project(p, None, ((0, 1),), (4, 8), MESH, "mesh")  # G07
    assert out.dims[0].axes == (X, Y)


def test_back_projection_merges_sub_axes() -> None:
    p = project(ts([X]), ((0, 1),), (2, 4), MESH)
    out = back_project(p, None, ((0, 1),), (2, 4), MESH, "mesh")
    assert out.dims[0].axes == (X,)


def test_round_trip_keeps_open_flag() -> None:
    s = ts([X], [], closed=False)
    p = project(s, ((0,), (1,)), (8, 16), MESH)
    assert back_project(p, s, ((0,), (1,)), (8, 16), MESH, "mesh") == s


def test_strict_prefix() -> None:
    assert is_strict_prefix((), (X,), MESH)
    assert is_strict_prefix((X1,), (X,), MESH)
    assert is_strict_prefix((X,), (X, Y), MESH)
    assert not is_strict_prefix((X,), (X,), MESH)
    assert not is_strict_prefix((Y,), (X, Y), MESH)
    assert not is_strict_prefix((X,), (), MESH)
