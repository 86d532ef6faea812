"""shardc's pretty-text parser (dialect/text/pretty_parser.py) builds the IR the generic route
builds (jaxlib's generic print with locations, then shardc's generic parser): the same ops,
attribute texts, types, shardings, locations and alias table, on every program and every lit
input; errors found later name the same line:col; what it cannot rebuild exactly falls back."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from shardc.backend import mlir_bridge
from shardc.backend.importer import import_generic, import_text
from shardc.dialect.errors import ShardcError
from shardc.dialect.ir import Module
from shardc.dialect.text import absorb_sharding_attrs, parse_pretty, print_generic, print_pretty
from shardc.dialect.text.floats import canonical_float
from shardc.passes.pipeline import PipelineOptions, run_pipeline

from .every_format import every_format_text
from .programs import PROGRAMS, lit_inputs, lowered_text


def _generic_route(text: str, name: str) -> Module:
    return import_generic(mlir_bridge.generic_text(mlir_bridge.parse_module(text, name)), name)


def _pretty_route(text: str, name: str) -> Module | None:
    mlir_bridge.parse_module(text, name)  # the importer parses with jaxlib first
    module = parse_pretty(text, name, mlir_bridge.printed_as_written)
    if module is not None:
        absorb_sharding_attrs(module)
    return module


def _dump(module: Module) -> list[Any]:
    """Everything the rest of shardc reads off the imported IR, op by op."""
    out: list[Any] = [module.source_name, dict(module.loc_aliases)]
    for op in module.walk():
        out.append(
            (
                op.name,
                type(op).__name__,
                op.properties.body(),
                op.attributes.body(),
                op.successors,
                op.loc,
                module.resolve_loc(op.loc),
                [(r.type, r.sharding) for r in op.results],
                [[(u.name, i) for u, i in r.uses] for r in op.results],
                getattr(op, "result_shardings", None),
                [
                    (b.label, [(a.type, a.loc, a.sharding) for a in b.args])
                    for r in op.regions
                    for b in r.blocks
                ],
            )
        )
    return out


def _assert_same(text: str, name: str) -> bool:
    """Both routes agree; False where the pretty parser declined (the generic route runs)."""
    mine = _pretty_route(text, name)
    if mine is None:
        return False
    ref = _generic_route(text, name)
    assert _dump(mine) == _dump(ref), name
    assert print_generic(mine) == print_generic(ref), name
    assert print_generic(mine, with_locs=False) == print_generic(ref, with_locs=False), name
    return True


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_import_alike_both_ways(name: str) -> None:
    _assert_same(lowered_text(name), name)


def test_what_jax_lowers_a_model_to_takes_the_pretty_route() -> None:
    # guards the suite: the comparisons must not all be fallbacks (generic-form ops inside the
    # pretty text, with regions or not, included: case, gather/scatter, sort, reduce_window),
    # loops (while) and shard_map (sdy.manual_computation)
    for name in ("mlp", "transformer_layer", "grad", "wsc", "cond", "gather_scatter", "sort",
                 "iota_cumsum", "scan", "fori_loop", "shard_map_psum", "shard_map_all_gather",
                 "shard_map_all_to_all", "shard_map_ppermute", "shard_map_psum_scatter"):
        if name in PROGRAMS:
            assert _assert_same(lowered_text(name), name), name


def test_lit_inputs_import_alike_both_ways() -> None:
    pretty = 0
    for name, text in lit_inputs():
        try:
            mlir_bridge.parse_module(text, name)
        except ShardcError:
            continue  # jaxlib rejects it: the importer never reaches either route
        pretty += _assert_same(text, name)
    assert pretty >= 30


def test_every_format_imports_alike_both_ways() -> None:
    text = every_format_text()
    assert _assert_same(text, "every")
    # as the printer writes it once propagated: result shardings in every attribute dictionary
    module = import_text(text, "every")
    run_pipeline(module, PipelineOptions(export="annotate"))
    assert _assert_same(print_pretty(module), "every propagated")


def _pipeline_error(module: Module) -> str | None:
    try:
        run_pipeline(module, PipelineOptions())
    except ShardcError as e:
        return str(e)
    return None


def test_errors_name_the_same_line_and_column() -> None:
    checked = 0
    for name, text in lit_inputs():
        try:
            mine = import_text(text, name)
        except ShardcError as e:
            with pytest.raises(ShardcError) as ref:
                _generic_route(text, name)
            assert str(e) == str(ref.value)
            continue
        error = _pipeline_error(mine)
        if error is None:
            continue
        assert error == _pipeline_error(_generic_route(text, name)), name
        checked += bool(re.search(r":\d+:\d+", error))
    assert checked >= 3


_ONE_OP = """module @m {{
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
    {op}
    return %0 : tensor<4xf32>
  }}
}}
"""


@pytest.mark.parametrize(
    "op",
    [
        "%0 = stablehlo.negate %arg0 {b.x = 1 : i32, a.x = 2 : i32} : tensor<4xf32>",  # unsorted
        "%0 = stablehlo.negate %arg0 {a.x = 1} : tensor<4xf32>",  # jaxlib adds `: i64`
        '%0 = sdy.sharding_constraint %arg0 <@mesh, [{"x" }]> : tensor<4xf32>',
        "%0 = stablehlo.negate %arg0 : (tensor<4xf32>) -> tensor<4xf32> // note",
        "%0 = stablehlo.negate %arg0 : tensor<04xf32>",
        # generic lines: an op's own attribute written among the attributes (jaxlib moves it to
        # the properties), a spelling jaxlib re-spaces, unsorted properties, a `%0:1` result
        '%0 = "stablehlo.reverse"(%arg0) {dimensions = array<i64: 0>} : '
        "(tensor<4xf32>) -> tensor<4xf32>",
        '%0 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64:0>}> : '
        "(tensor<4xf32>) -> tensor<4xf32>",
        '%0 = "stablehlo.sort"(%arg0) <{is_stable = true, dimension = 0 : i64}> ({\n'
        "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "      %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "      stablehlo.return %c : tensor<i1>\n"
        "    }) : (tensor<4xf32>) -> tensor<4xf32>",
        '%0 = "stablehlo.negate"(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, '
        '[{"x" }]>]>} : (tensor<4xf32>) -> tensor<4xf32>',
    ],
)
def test_spellings_jaxlib_would_change_take_the_generic_route(op: str) -> None:
    text = _ONE_OP.format(op=op)
    assert parse_pretty(text, "t", mlir_bridge.printed_as_written) is None
    assert print_generic(import_text(text, "t")) == print_generic(_generic_route(text, "t"))


@pytest.mark.parametrize(
    "literal, element, canonical",
    [
        ("0.000000e+00", "f32", True),
        ("0.0", "f32", False),
        ("1.000000e+00", "f32", True),
        ("1.0", "f32", False),
        ("0.353553385", "f32", True),
        ("3.535534e-01", "f32", False),
        ("9.99999974E-6", "f32", True),
        ("0xFF800000", "f32", True),
        ("0xff800000", "f32", False),
        ("0x3F800000", "f32", False),
        ("1.000000e+00", "bf16", True),
        ("1.000000e-01", "f64", True),
        ("1.0000000e-01", "f32", False),
        ("0x7FC00000", "f32", True),
        ("1.6777216E+7", "f32", False),
        ("0x4B800000", "f32", True),
    ],
)
def test_float_spellings(literal: str, element: str, canonical: bool) -> None:
    assert canonical_float(literal, element) is canonical


def test_float_spellings_match_jaxlib_on_random_values() -> None:
    rng = random.Random(14)
    cases = []
    for element in ("f64", "f32", "f16", "bf16"):
        for _ in range(150):
            v = rng.choice(
                [rng.uniform(-1e3, 1e3), 10 ** rng.uniform(-30, 30), 2.0 ** rng.randint(-20, 20)]
            )
            for spelling in (repr(v), f"{v:.6e}", f"{v:.9g}", f"{v:.8e}"):
                if "." in spelling or "e" in spelling:
                    cases.append((spelling, element))
    lines = [
        f"    %c{i} = stablehlo.constant dense<{lit}> : tensor<{el}>"
        for i, (lit, el) in enumerate(cases)
    ]
    text = "module {\n  func.func @main() {\n" + "\n".join(lines) + "\n    return\n  }\n}\n"
    out = mlir_bridge.pretty_text(mlir_bridge.parse_module(text))
    printed = re.findall(r"dense<([^>]*)> : tensor<", out)
    assert len(printed) == len(cases)
    for (lit, el), out in zip(cases, printed, strict=True):
        assert canonical_float(lit, el) is (out == lit), (lit, el, out)
        assert canonical_float(out, el), (out, el)


_ATTR_SPELLINGS = [
    "1 : i1", "true", "1", "1 : i64", "-1 : i32", "0 : ui8", "-0 : i32", '"text"', '"a\\"b"',
    "unit", "[1, 2]", "[1 : i64, 2 : i64]", "[]", "{b = 1 : i32, a = 2 : i32}",
    "{a = 2 : i32, b = 1 : i32}", "1.0 : f32", "1.000000e+00 : f32", "0x7F800000 : f32",
    "array<i64: 1>", '#sdy.sharding<@mesh, [{"x"}]>', '#sdy.sharding<@mesh, [{"x"} ]>',
    "dense<1.0> : tensor<f32>", "{}",
]


@pytest.mark.parametrize("value", _ATTR_SPELLINGS)
def test_attribute_spellings_import_alike_both_ways(value: str) -> None:
    text = _ONE_OP.format(op=f"%0 = stablehlo.negate %arg0 {{a.x = {value}}} : tensor<4xf32>")
    try:
        mlir_bridge.parse_module(text, "t")
    except ShardcError:
        return  # jaxlib rejects it
    _assert_same(text, "t")


_CONSTANTS = [
    ("true", "i1"), ("1", "i1"), ("-1", "i32"), ("07", "i32"), ("4294967295", "ui32"),
    ("0x7FC00000", "f32"), ("0x7fc00000", "f32"), ("-0.000000e+00", "f32"), ("1.0", "bf16"),
    ("1.000000e+00", "bf16"), ("1.000000e+00", "f16"), ("3.14159274", "f32"),
    ("3.1415926535897931", "f64"), ("(1.000000e+00,0.000000e+00)", "complex<f32>"),
    # lists (up to 100 elements) and hex strings (more)
    ("[1.000000e+00, 2.000000e+00]", "2xf32"), ("[1.0, 2.0]", "2xf32"),
    ("[1.000000e+00, 1.000000e+00]", "2xf32"), ("[[0, 1], [2, 3]]", "2x2xi32"),
    ("[0, 1, 2, 3]", "2x2xi32"), ("[[true, false]]", "1x2xi1"), ("[-1, 7]", "2xui8"),
    ("[" + ", ".join(map(str, range(100))) + "]", "100xi32"),
    ("[" + ", ".join(map(str, range(101))) + "]", "101xi32"),
    ('"0x' + "".join(f"{i:02X}000000" for i in range(101)) + '"', "101xi32"),
    ('"0x' + "".join(f"{i:02x}000000" for i in range(101)) + '"', "101xi32"),
    ('"0x' + "".join(f"{i:02X}000000" for i in range(100)) + '"', "100xi32"),
    ('"0x' + "0000803F" * 120 + '"', "120xf32"),
    ('"0x' + "0001" * 60 + '"', "120xi1"),
    ('"0x' + "".join(f"{i:02X}00" for i in range(120)) + '"', "120xbf16"),
]


@pytest.mark.parametrize("literal, element", _CONSTANTS)
def test_constant_spellings_import_alike_both_ways(literal: str, element: str) -> None:
    op = f"%c = stablehlo.constant dense<{literal}> : tensor<{element}>"
    text = _ONE_OP.format(op=op + "\n    %0 = stablehlo.negate %arg0 : tensor<4xf32>")
    try:
        mlir_bridge.parse_module(text, "t")
    except ShardcError:
        return
    _assert_same(text, "t")


def test_printed_spellings_take_the_pretty_route() -> None:
    for value in ("1 : i64", '"text"', "{a = 2 : i32, b = 1 : i32}", "1.000000e+00 : f32", "true"):
        op = f"%0 = stablehlo.negate %arg0 {{a.x = {value}}} : tensor<4xf32>"
        assert _assert_same(_ONE_OP.format(op=op), "t"), value
    for literal, element in (("true", "i1"), ("-1", "i32"), ("0x7FC00000", "f32"),
                             ("1.000000e+00", "bf16"), ("3.14159274", "f32"),
                             ("[[0, 1], [2, 3]]", "2x2xi32"), ("[true, false]", "2xi1"),
                             ('"0x' + "0000803F" * 100 + '00000040"', "101xf32")):
        op = f"%c = stablehlo.constant dense<{literal}> : tensor<{element}>"
        text = _ONE_OP.format(op=op + "\n    %0 = stablehlo.negate %arg0 : tensor<4xf32>")
        assert _assert_same(text, "t"), literal


_GENERIC_OPS = [
    '%0 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64: 0>}> {sdy.sharding = '
    '#sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<4xf32>) -> tensor<4xf32>',
    # regions: block arguments get aliases of their own, ops inside in either syntax
    '%0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({\n'
    "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    '      %c = "stablehlo.compare"(%a, %b) <{comparison_direction = '
    "#stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "      stablehlo.return %c : tensor<i1>\n"
    "    }) : (tensor<4xf32>) -> tensor<4xf32>",
    # several regions, several results, attributes after the regions
    "%p = stablehlo.constant dense<1> : tensor<i32>\n"
    '    %0:2 = "stablehlo.case"(%p) ({\n'
    "      stablehlo.return %arg0, %arg0 : tensor<4xf32>, tensor<4xf32>\n"
    "    }, {\n"
    "      %n = stablehlo.negate %arg0 : tensor<4xf32>\n"
    '      "stablehlo.return"(%n, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> ()\n'
    '    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>} : '
    "(tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>)",
    '%0 = "stablehlo.custom_call"(%arg0) <{call_target_name = "Sharding"}> '
    '{mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>',
    # results in groups, in either syntax
    '%0, %b:2 = "stablehlo.optimization_barrier"(%arg0, %arg0, %arg0) : (tensor<4xf32>, '
    "tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)\n"
    "    %c, %d = stablehlo.optimization_barrier %b#1, %b : tensor<4xf32>, tensor<4xf32>",
]


@pytest.mark.parametrize("op", _GENERIC_OPS)
def test_generic_op_lines_take_the_pretty_route(op: str) -> None:
    assert _assert_same(_ONE_OP.format(op=op), "t")


_CUSTOM_CALL = "%0 = stablehlo.custom_call @{target}(%arg0) {attrs}: (tensor<4xf32>) -> tensor<4xf32>"


@pytest.mark.parametrize(
    "target, attrs, pretty",
    [
        ("Sharding", '{backend_config = "", mhlo.sharding = "{replicated}"} ', True),
        ("f", "", True),
        # its own attributes become properties, the others stay: both sorted by jaxlib
        ("f", '{mhlo.sharding = "{replicated}", backend_config = "", api_version = 1 : i32} ', True),
        ("f", "{api_version = 4 : i32, backend_config = {a = 1 : i32}, operand_layouts = "
              "[dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} ", True),
        ("f", "{has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@mesh, "
              '[{"x"}]>]>} ', True),
        ('"a b"', "", False),  # a quoted target
        ("f", "{foo = 1 : i32} ", False),  # an attribute without a dialect prefix
        ("f", "{backend_config = \"\",  mhlo.x = 1 : i32} ", False),  # re-spaced by jaxlib
        # printed as a splat
        ("f", "{operand_layouts = [dense<[0]> : tensor<1xindex>], result_layouts = "
              "[dense<0> : tensor<1xindex>]} ", False),
    ],
)
def test_custom_calls_import_alike_both_ways(target: str, attrs: str, pretty: bool) -> None:
    text = _ONE_OP.format(op=_CUSTOM_CALL.format(target=target, attrs=attrs))
    assert (parse_pretty(text, "t", mlir_bridge.printed_as_written) is not None) is pretty
    assert print_generic(import_text(text, "t")) == print_generic(_generic_route(text, "t"))
    if pretty:
        assert _assert_same(text, "t")


_CONV = """func.func @f(%x: tensor<8x3x32x32xf32>, %k: tensor<16x3x3x3xf32>) -> tensor<{out}xf32> {{
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]{window} {{{attrs}}} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<{out}xf32>
  return %0 : tensor<{out}xf32>
}}"""
_GROUPS = "batch_group_count = 1 : i64, feature_group_count = 1 : i64"


@pytest.mark.parametrize(
    "window, attrs, out, pretty",
    [
        (", window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = "
         "[1, 1], reverse = [false, false]}", _GROUPS, "8x16x32x32", True),
        # padding not a splat, a reversed dim, strides, precision, a discardable attribute
        (", window = {stride = [1, 2], pad = [[1, 0], [1, 1]], reverse = [false, true]}",
         _GROUPS + ", precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision "
         'HIGHEST>], sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {"x"}, {}, {}]>]>',
         "8x16x31x16", True),
        (", window = {}", _GROUPS, "8x16x30x30", True),  # no window entries
        (", window = {stride = [1,1]}", _GROUPS, "8x16x30x30", False),  # re-spaced by jaxlib
    ],
)
def test_convolutions_import_alike_both_ways(
    window: str, attrs: str, out: str, pretty: bool
) -> None:
    text = _CONV.format(window=window, attrs=attrs, out=out)
    if "@m" in text:
        text = 'sdy.mesh @m = <["x"=2]>\n' + text
    assert (parse_pretty(text, "t", mlir_bridge.printed_as_written) is not None) is pretty
    assert print_generic(import_text(text, "t")) == print_generic(_generic_route(text, "t"))
    if pretty:
        assert _assert_same(text, "t")


def test_what_jax_lowers_common_layers_to_takes_the_pretty_route() -> None:
    # argmax: a reduce of two inputs with its reducer written out; chlo ops (erf/erfc in exact
    # gelu, square in var, asinh, cosh, lgamma, erf_inv); is_finite in logsumexp
    import jax
    import jax.numpy as jnp

    def f(a: Any) -> Any:
        return (
            jnp.argmax(a, -1),
            jax.nn.gelu(a, approximate=False),
            jnp.var(a, axis=0),
            jax.nn.logsumexp(a, axis=-1),
            jnp.arcsinh(a) + jnp.cosh(a) + jax.lax.lgamma(a) + jax.scipy.special.erfinv(a),
            jax.lax.top_k(a, 3),  # results named one by one: `%values, %indices = ..`
        )

    text = jax.jit(f).lower(jax.ShapeDtypeStruct((8, 16), jnp.float32)).as_text()
    assert "reducer(" in text and "chlo.erfc" in text and "stablehlo.is_finite" in text
    assert "%values, %indices = chlo.top_k" in text
    assert _assert_same(text, "layers")


_REGION_OPS = """module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = sdy.manual_computation(%arg0, %arg0) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x16xf32>, %b: tensor<4x16xf32>) {
      %1 = stablehlo.add %a, %b : tensor<4x16xf32>
      sdy.return %1 : tensor<4x16xf32>
    } {foo.bar = 1 : i32} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2:2 = stablehlo.while(%i = %c, %v = %0) : tensor<i32>, tensor<8x16xf32> attributes {foo.x = 1 : i32}
    cond {
      %3 = stablehlo.compare LT, %i, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %4 = sdy.manual_computation(%v) in_shardings=[<@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"y"}, {}]>] manual_axes={} (%w: tensor<8x16xf32>) {
        %5 = stablehlo.negate %w : tensor<8x16xf32>
        sdy.return %5 : tensor<8x16xf32>
      } : (tensor<8x16xf32>) -> tensor<8x16xf32>
      stablehlo.return %i, %4 : tensor<i32>, tensor<8x16xf32>
    }
    %6 = stablehlo.while(%j = %c) : tensor<i32>
    cond {
      %7 = stablehlo.compare LT, %j, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      stablehlo.return %j : tensor<i32>
    }
    return %2#1 : tensor<8x16xf32>
  }
}
"""


def test_while_and_manual_computation_take_the_pretty_route() -> None:
    # block arguments: the while's two blocks share one location per loop value; nested regions
    assert _assert_same(_REGION_OPS, "t")
    # an op's own attribute among a region op's discardable ones: the generic route
    text = _REGION_OPS.replace("{foo.bar = 1 : i32}", "{foo = 1 : i32}")
    assert parse_pretty(text, "t", mlir_bridge.printed_as_written) is None
    assert print_generic(import_text(text, "t")) == print_generic(_generic_route(text, "t"))


_RECURSIVE = """{header}
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    %1 = call @main(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }}
{footer}"""


@pytest.mark.parametrize("header, footer", [("module @m {", "}"), ("// implicit module", "")])
def test_an_error_after_the_pretty_route_names_the_op_line_and_column(
    header: str, footer: str
) -> None:
    text = _RECURSIVE.format(header=header, footer=footer)
    assert _assert_same(text, "rec.mlir")
    error = _pipeline_error(import_text(text, "rec.mlir"))
    assert error is not None and error.startswith("rec.mlir:5:10: recursive call")
    assert error == _pipeline_error(_generic_route(text, "rec.mlir"))


def test_attributes_nested_deeper_than_pythons_stack_import_as_before() -> None:
    value = "1 : i32"
    for _ in range(1500):  # jaxlib accepts it; a recursive check of it would overflow
        value = "{a = " + value + "}"
    text = _ONE_OP.format(op=f"%0 = stablehlo.negate %arg0 {{x.y = {value}}} : tensor<4xf32>")
    assert print_generic(import_text(text, "t")) == print_generic(_generic_route(text, "t"))


def test_mutants_import_alike_both_ways() -> None:
    # the mutation fuzzer's inputs (tests/fuzz): respellings, swapped attributes, cut lines;
    # long runs (thousands of mutants, seeds 1-3) found no difference either
    from tests.fuzz import mutation

    pool = mutation.corpus()
    pretty = 0
    for i in range(150):
        name, data = mutation.mutant(14, i, pool)
        try:
            text = data.decode("utf-8")
            mlir_bridge.parse_module(text, name)
        except (UnicodeDecodeError, ShardcError):
            continue
        pretty += _assert_same(text, name)
    assert pretty >= 10


@pytest.mark.parametrize("text", ["", "\n", "a", "a\n", "a\nbb\n\nccc", "x\n" * 50 + "end"])
@pytest.mark.parametrize("size", [1, 3, 1 << 18])
def test_chunked_lines_match_split(text: str, size: int) -> None:
    """The parser's chunked line reader reads the lines `split` gives, forward, one back, and
    from the start again."""
    from shardc.dialect.text.pretty_parser import _Lines

    want = text.split("\n")
    lines = _Lines(text, size)
    assert len(lines) == len(want)
    assert [lines[i] for i in range(len(want))] == want
    if len(want) > 1:
        assert lines[len(want) - 2] == want[-2]  # the line before the current chunk's
    assert lines[0] == want[0]
    with pytest.raises(IndexError):
        lines[len(want)]
