"""Factor strategies on hand-built projections: no IR (docs/propagation.md §4-§5)."""

from shardc.dialect.shardings import AxisRef, Mesh
from shardc.passes.propagation.factor_propagation import (
    Directions,
    StepInput,
    compatible_major_axes,
    prefix_without_overlap,
    propagate_aggressive,
    propagate_basic,
)
from shardc.passes.propagation.projection import FactorSharding, TensorFactorShardings

MESH = Mesh.of(x=4, y=2)
X, Y = AxisRef("x"), AxisRef("y")
X1, X2 = AxisRef("x", (1, 2)), AxisRef("x", (2, 2))
BOTH = lambda f: Directions.BOTH  # noqa: E731


def t(factors: dict, closed: bool = False, replicated: tuple = ()) -> TensorFactorShardings:
    return TensorFactorShardings(
        {f: FactorSharding(tuple(a), closed, True) for f, a in factors.items()}, replicated
    )


def dot(lhs: dict, rhs: dict, res: dict, sizes=(8, 64, 16), tsizes=(128, 1024, 512)) -> StepInput:
    # factors: 0 = lhs rows (i), 1 = rhs cols (j), 2 = contracting (k)
    return StepInput([t(lhs, True), t(rhs)], [t(res)], sizes, list(tsizes))


def test_compatible_major_axes() -> None:
    s = StepInput([t({0: [X, Y]}), t({0: [X]})], [t({0: []})], (8,), [8, 8, 8])
    assert compatible_major_axes(s, 0, Directions.BOTH, MESH) == (X, Y)
    s = StepInput([t({0: [X, Y]})], [t({0: [X, AxisRef("y")]}), t({0: [Y]})], (8,), [8, 8, 8])
    assert compatible_major_axes(s, 0, Directions.BOTH, MESH) == ()


def test_forward_results_only_cut() -> None:
    s = StepInput([t({0: [X]})], [t({0: [X, Y]})], (8,), [8, 8])
    assert compatible_major_axes(s, 0, Directions.FORWARD, MESH) == (X,)
    assert compatible_major_axes(s, 0, Directions.NONE, MESH) == ()


def test_bigger_source_wins_conflict() -> None:  # G05
    s = dot({0: [X], 2: []}, {1: [X], 2: []}, {0: [], 1: []})
    propagate_aggressive(s, BOTH, MESH)
    assert s.results[0].factors[1].axes == (X,)
    assert s.results[0].factors[0].axes == ()


def test_elementwise_tie_lower_index_wins() -> None:  # G13
    s = StepInput(
        [t({0: [X], 1: []}, True), t({0: [], 1: [X]}, True)],
        [t({0: [], 1: []})],
        (8, 16),
        [128, 128, 128],
        elementwise=True,
    )
    propagate_aggressive(s, BOTH, MESH)
    assert s.results[0].factors[0].axes == (X,) and s.results[0].factors[1].axes == ()


def test_basic_vs_aggressive_replicated() -> None:  # G65
    def step() -> StepInput:
        return StepInput(
            [t({0: [X, Y], 1: []}, True), t({0: [], 1: []}, replicated=(Y,))],
            [t({0: [], 1: []})],
            (8, 16),
            [128] * 3,
            elementwise=True,
        )

    s = step()
    propagate_basic(s, BOTH, MESH)
    assert s.results[0].factors[0].axes == (X,) and s.operands[1].factors[0].axes == (X,)
    s = step()
    propagate_aggressive(s, BOTH, MESH)
    assert s.results[0].factors[0].axes == (X, Y) and s.operands[1].factors[0].axes == (X,)


def test_basic_refuses_axis_used_by_other_factor() -> None:  # G64
    s = dot({0: [X], 2: []}, {1: [], 2: []}, {0: [], 1: [X]})
    propagate_basic(s, BOTH, MESH)
    assert s.operands[1].factors[1].axes == ()
    s = dot({0: [X], 2: []}, {1: [], 2: []}, {0: [], 1: [X]})
    propagate_aggressive(s, BOTH, MESH)
    assert s.operands[1].factors[1].axes == (X,)


def test_prefix_without_overlap() -> None:
    assert prefix_without_overlap(X, X2, MESH) == X1  # G63
    assert prefix_without_overlap(X, X1, MESH) is None
    assert prefix_without_overlap(X, Y, MESH) == X


def test_gcd_split_for_non_minor_factor() -> None:  # G55: "x" into a size-2 major factor
    src = TensorFactorShardings(
        {0: FactorSharding((X,), True, True), 1: FactorSharding((), True, True)}
    )
    dst = TensorFactorShardings(
        {0: FactorSharding((), False, False), 1: FactorSharding((), False, True)}
    )
    s = StepInput([src], [dst], (2, 4), [8, 8])
    propagate_aggressive(s, BOTH, MESH)
    assert dst.factors[0].axes == (X1,)
