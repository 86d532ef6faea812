"""The shared error phrases (dialect/errors.py): each names what was given, the constraint it
breaks and a fix, in one first line the CLI prints; and the same mistake caught in different
layers reads the same."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import shardc
from shardc.dialect import errors as E
from shardc.dialect.errors import (
    ArgumentTypeError,
    ManualComputationError,
    ParseError,
    ShardcError,
    ShardingError,
    UnsupportedError,
)
from shardc.dialect.sharding_syntax import parse_tensor_sharding
from shardc.dialect.shardings import Mesh
from shardc.dialect.types import TensorType
from shardc.frontend.specs import to_sharding
from shardc.passes.verify import check_sharding

MESH = '<["x"=4, "y"=2]>'

# (phrase call, error class, the exact first line the CLI prints)
CASES: list[tuple[Callable[[], ShardcError], type[ShardcError], str]] = [
    (
        lambda: E.unknown_axis("q", MESH, ["x", "y"], given="in_shardings[0] = q, _"),
        ShardingError,
        'in_shardings[0] = q, _: unknown axis name: "q" (mesh axes: <["x"=4, "y"=2]>); '
        "use one of the mesh axes: x, y",
    ),
    (
        lambda: E.unknown_mesh("m2", ["mesh"], given="%arg0", location="f.mlir:3:4"),
        ShardingError,
        "f.mlir:3:4: %arg0: unknown mesh: @m2 (meshes in the module: @mesh); declare it with "
        "`sdy.mesh @name = <[...]>` or use a declared mesh",
    ),
    (
        lambda: E.unknown_name("pass", "dedup", ["verify", "export"], given="--disable-pass"),
        ShardcError,
        "--disable-pass: no pass named 'dedup'; name one of: verify, export",
    ),
    (
        lambda: E.unknown_name("entry", "nope", [], where="model.py"),
        ShardcError,
        "no entry named 'nope' in model.py; name one of: none",
    ),
    (
        lambda: E.not_one_of("export mode", "pinned", ("annotate", "pin")),
        ShardcError,
        "export mode = 'pinned' is not one of annotate, pin; use one of annotate, pin",
    ),
    (
        lambda: E.bad_value("verify{dynamic}", "maybe", "a boolean", hint="use true or false"),
        ShardcError,
        "verify{dynamic} = 'maybe' is not a boolean; use true or false",
    ),
    (
        lambda: E.not_divisible(
            "argument v (in_shardings = x)", 0, 6, 'axis "x" of size 4', 4, shape=(6,),
            hint="or leave it to propagation",
        ),
        ShardingError,
        'argument v (in_shardings = x) splits dim 0 of size 6 (shape (6,)) over axis "x" of '
        "size 4 (4 shards), and 4 does not divide 6; pad dim 0 to a multiple of 4, or leave it "
        "to propagation",
    ),
    (
        lambda: E.rank_mismatch("out_shardings[0] = x, _, _", 3, "of shape (8, 16)", 2),
        ShardingError,
        "out_shardings[0] = x, _, _: sharding doesn't match tensor rank: 3 != 2 (value of shape "
        "(8, 16)); "
        "give exactly one dim sharding per dim of the value",
    ),
    (
        lambda: E.count_mismatch("in_shardings", 2, "shardings", 3, "operands"),
        ShardcError,
        "in_shardings has 2 shardings for 3 operands; give exactly one sharding per operand",
    ),
    (
        lambda: E.duplicate_axis('"x"', given="x, x"),
        ShardingError,
        'x, x: duplicate axis ref: "x"; name each axis once: in one dim, or in '
        "replicated=/unreduced=, not in two places",
    ),
    (
        lambda: E.wrong_mesh(
            "NamedSharding", '<["x"=2]>', MESH, "the function", hint="use the same mesh"
        ),
        ShardingError,
        'NamedSharding is on mesh <["x"=2]>, but the function is on mesh <["x"=4, "y"=2]>; '
        "use the same mesh",
    ),
    (
        lambda: E.no_main("the lowered module"),
        ShardcError,
        "the lowered module has no @main function; name the entry function @main "
        "(jax.jit's lowering does)",
    ),
    (
        lambda: E.xla_refused("compile the module", "INVALID_ARGUMENT: bad"),
        ShardcError,
        "XLA could not compile the module: INVALID_ARGUMENT: bad",
    ),
    (
        lambda: E.syntax_error("sharding spec", "x p1", 3, hint="no space before p"),
        ParseError,
        "invalid sharding spec 'x p1' at column 3; no space before p",
    ),
    (
        lambda: E.bad_priority("p01"),
        ParseError,
        "priority 'p01' has leading zeros, which are not allowed; write p1",
    ),
    (
        lambda: E.needs_devices("cost_analysis()", hint="lower with a mesh this machine has"),
        ShardcError,
        "cost_analysis() needs a lowering on the mesh's devices; lower with a mesh this "
        "machine has",
    ),
    (
        lambda: E.not_an_array("b = 'text'", "str", hint="pass arrays"),
        ArgumentTypeError,
        "argument b = 'text' of type str is not an array; pass arrays",
    ),
    (
        lambda: E.unsupported(
            "tuple type tuple<tensor<8xf32>>", "sharding propagation", given="stablehlo.tuple",
            hint="pass the tensors separately",
        ),
        UnsupportedError,
        "stablehlo.tuple: tuple type tuple<tensor<8xf32>>, not supported by sharding "
        "propagation; pass the tensors separately",
    ),
]


@pytest.mark.parametrize("make,cls,first", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_phrase_shape(make: Callable[[], ShardcError], cls: type, first: str) -> None:
    err = make()
    assert type(err) is cls
    assert err.first_line() == first
    # the whole text repeats the first line's facts and gives the fix on its own line
    assert err.message.splitlines()[0] in first
    if err.hint:
        assert str(err).endswith(f"\n  fix: {err.hint}")


def test_every_phrase_is_tested() -> None:
    phrases = {n for n, f in vars(E).items() if callable(f) and not isinstance(f, type)
               and not n.startswith("_") and getattr(f, "__module__", "") == E.__name__}
    phrases.discard("caret_excerpt")
    called = set().union(*(c[0].__code__.co_names for c in CASES))
    assert phrases <= called, sorted(phrases - called)


def test_phrases_take_the_subclass_the_layer_raises() -> None:
    err = E.unknown_axis("a", MESH, ["x", "y"], given="sdy.manual_computation manual_axes",
                         cls=ManualComputationError, location="m.mlir:2:3")
    assert isinstance(err, ManualComputationError) and isinstance(err, ValueError)
    assert err.first_line().startswith('m.mlir:2:3: sdy.manual_computation manual_axes: '
                                       'unknown axis name: "a"')


def test_syntax_error_puts_a_caret_under_the_column() -> None:
    err = E.syntax_error("pass pipeline", "verify,,export", 8)
    assert err.message.splitlines()[1:] == ["  verify,,export", "         ^"]


@pytest.mark.parametrize("mlir_sharding,spec,words", [
    ('[{"q"}, {}]', "q, _", 'unknown axis name: "q"'),
    ('[{"x"}, {"x"}]', "x, x", 'duplicate axis ref: "x"'),
    ('[{"x"}]', "x, _, _", "sharding doesn't match tensor rank: "),
])
def test_mlir_verifier_shardc_verifier_and_frontend_read_alike(
    mlir_sharding: str, spec: str, words: str
) -> None:
    """One mistake, three places that catch it: Shardy's MLIR verifier (MLIR input), shardc's
    verify pass (a sharding on shardc's IR) and shardc.jit's spec resolution."""
    text = ('sdy.mesh @mesh = <["x"=4, "y"=2]>\nfunc.func @main(%arg0: tensor<8x8xf32> '
            f"{{sdy.sharding = #sdy.sharding<@mesh, {mlir_sharding}>}}) -> tensor<8x8xf32> {{\n"
            "  return %arg0 : tensor<8x8xf32>\n}\n")
    mesh = Mesh.of(x=4, y=2)
    with pytest.raises(ShardcError) as mlir:
        shardc.propagate(text)
    with pytest.raises(ShardingError) as verify:
        check_sharding(None, parse_tensor_sharding(f"<@mesh, {mlir_sharding}>"),  # type: ignore[arg-type]
                       TensorType((8, 8), "f32"), "%arg0", None, {"mesh": mesh})
    with pytest.raises(ShardingError) as frontend:
        to_sharding(spec, mesh, (8, 8), "in_shardings[0]")
    assert words in mlir.value.message
    assert verify.value.message.startswith(f"%arg0 = <@mesh, {mlir_sharding}>: {words}")
    assert frontend.value.message.startswith(f"in_shardings[0] = {spec}: {words}")
    assert verify.value.hint and frontend.value.hint


def test_dialect_and_frontend_share_the_phrase() -> None:
    """An axis used twice and a rank mismatch: the dialect's validation and the spec frontend
    give the same constraint words, each after the sharding as written where it sits."""
    mesh = Mesh.of(x=4, y=2)
    for dialect_text, spec, constraint in (
        ('<@mesh, [{"x"}, {"x"}]>', "x, x", 'duplicate axis ref: "x"'),
        ('<@mesh, [{"x"}, {}, {}]>', "x, _, _", "sharding doesn't match tensor rank: 3 != 2 "
         "(value of shape (8, 8))"),
    ):
        with pytest.raises(ShardingError) as dialect_err:
            parse_tensor_sharding(dialect_text).validate(mesh, (8, 8), "%arg0")
        with pytest.raises(ShardingError) as frontend_err:
            to_sharding(spec, mesh, (8, 8), "in_shardings[0]")
        assert dialect_err.value.message.startswith(f"%arg0 = {dialect_text}")
        assert frontend_err.value.message.startswith(f"in_shardings[0] = {spec}")
        for e in (dialect_err.value, frontend_err.value):
            assert e.message.endswith(constraint) and e.hint
