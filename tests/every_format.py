"""A module with an op of every one-line format of the text layer (dialect/text/formats.py), as
jaxlib prints it: the printer tests check each against jaxlib's print, the parser tests read
each both ways. `UNCOVERED` lists the formats it leaves out and why."""

from __future__ import annotations

from shardc.backend import mlir_bridge
from shardc.dialect.text.formats import CHLO_UNARY, ELEMENTWISE, FUNCTIONAL

# formats checked elsewhere, or that cannot be in a module the printer writes whole
UNCOVERED = {
    "stablehlo.while": "regions: test_loops_convolutions_and_reducers_print_as_jaxlib_does",
    "stablehlo.reduce": "regions: test_a_reduce_with_a_reducer_region_prints_as_jaxlib_does",
    "sdy.manual_computation": "read only (jaxlib prints it): the parser's region tests",
    "sdy.return": "only inside a manual computation, which jaxlib prints",
    "stablehlo.return": "only in regions: the loop and reduce tests",
    "chlo.top_k": "results named by the op (%values, %indices): read only",
}

_INT_ONLY = {"and", "or", "xor", "not", "popcnt", "count_leading_zeros", "shift_left",
             "shift_right_arithmetic", "shift_right_logical"}
_UNARY = {"abs", "cbrt", "ceil", "convert", "cosine", "count_leading_zeros", "exponential",
          "exponential_minus_one", "floor", "log", "log_plus_one", "logistic", "negate", "not",
          "popcnt", "round_nearest_afz", "round_nearest_even", "rsqrt", "sign", "sine", "sqrt",
          "tan", "tanh"}
_BOTH = ("remainder", "abs", "sign", "maximum", "minimum")
_FUNCTIONAL = {
    "stablehlo.bitcast_convert": "%f : (tensor<8x16xf32>) -> tensor<8x16xi32>",
    "stablehlo.dynamic_update_slice": (
        "%f, %u, %k, %k : (tensor<8x16xf32>, tensor<2x16xf32>, tensor<i32>, tensor<i32>) "
        "-> tensor<8x16xf32>"
    ),
    "stablehlo.imag": "%z : (tensor<8x16xcomplex<f32>>) -> tensor<8x16xf32>",
    "stablehlo.is_finite": "%f : (tensor<8x16xf32>) -> tensor<8x16xi1>",
    "stablehlo.real": "%z : (tensor<8x16xcomplex<f32>>) -> tensor<8x16xf32>",
    "stablehlo.reshape": "%f : (tensor<8x16xf32>) -> tensor<16x8xf32>",
}
_CHLO_TYPES = {
    "chlo.conj": "%z : tensor<8x16xcomplex<f32>> -> tensor<8x16xcomplex<f32>>",
    "chlo.is_inf": "%f : tensor<8x16xf32> -> tensor<8x16xi1>",
    "chlo.is_neg_inf": "%f : tensor<8x16xf32> -> tensor<8x16xi1>",
    "chlo.is_pos_inf": "%f : tensor<8x16xf32> -> tensor<8x16xi1>",
}

_MODULE = """
module @every attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%f: tensor<8x16xf32>, %g: tensor<8x16xf32>, %i: tensor<8x16xi32>,
      %j: tensor<8x16xi32>, %k: tensor<i32>, %z: tensor<8x16xcomplex<f32>>,
      %u: tensor<2x16xf32>, %img: tensor<1x8x8x3xf32>, %ker: tensor<3x3x3x4xf32>,
      %b3: tensor<2x8x16xf32>, %c3: tensor<2x16x4xf32>) -> (tensor<8x16xf32>, tensor<8x16xi32>) {
{elementwise}
{functional}
{chlo}
    %cmp = stablehlo.compare LT, %f, %g, FLOAT : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xi1>
    %cmp2 = stablehlo.compare EQ, %i, %j : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi1>
    %sel = stablehlo.select %cmp, %f, %g : tensor<8x16xi1>, tensor<8x16xf32>
    %io = stablehlo.iota dim = 1 : tensor<8x16xf32>
    %sl = stablehlo.slice %f [2:6, 0:16] : (tensor<8x16xf32>) -> tensor<4x16xf32>
    %cc = stablehlo.concatenate %sl, %sl, dim = 0 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %zf = stablehlo.constant dense<0.0> : tensor<f32>
    %zi = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %pd = stablehlo.pad %sl, %zf, low = [-1, 0], high = [5, 0], interior = [0, 0] : (tensor<4x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %rv = stablehlo.reverse %pd, dims = [0, 1] : tensor<8x16xf32>
    %ds = stablehlo.dynamic_slice %rv, %k, %k, sizes = [8, 16] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
    %pid = stablehlo.partition_id : tensor<ui32>
    %cv = stablehlo.convert %pid : (tensor<ui32>) -> tensor<f32>
    %bc = stablehlo.broadcast_in_dim %cv, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %rs = sdy.reshard %bc <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
    %sc = sdy.sharding_constraint %rs <@mesh, [{}, {"y"}]> : tensor<8x16xf32>
    sdy.sharding_group %sc group_id=7 : tensor<8x16xf32>
    %r1 = stablehlo.reshape %sc : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %t1 = stablehlo.transpose %r1, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %dot = stablehlo.dot_general %b3, %c3, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
    %dot2 = stablehlo.dot_general %t1, %r1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %ob:2 = stablehlo.optimization_barrier %t1, %i : tensor<8x16xf32>, tensor<8x16xi32>
    %ccall = stablehlo.custom_call @my_kernel(%ob#0) {backend_config = "cfg", mhlo.frontend_attributes = {tag = "a"}} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    stablehlo.custom_call @my_effect() {has_side_effect = true} : () -> ()
    %conv = stablehlo.convolution(%img, %ker) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
    %conv2 = stablehlo.convolution(%img, %ker) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[0, 2], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
    %called = call @callee(%ccall) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %a1 = stablehlo.add %called, %ds : tensor<8x16xf32>
    %a2 = stablehlo.add %a1, %cc : tensor<8x16xf32>
    %a3 = stablehlo.add %a2, %io : tensor<8x16xf32>
    %a4 = stablehlo.select %cmp2, %a3, %sel : tensor<8x16xi1>, tensor<8x16xf32>
    return %a4, {last_int} : tensor<8x16xf32>, tensor<8x16xi32>
  }
  func.func private @callee(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %y = stablehlo.negate %x : tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}
"""


def every_format_text() -> str:
    """The module as jaxlib prints it: each element-wise op on f32 and/or i32, each
    functional-type and chlo op, then one op (or more, for optional parts) of every other
    one-line format."""
    floats, ints = [], []
    prev_f, prev_i = "%f", "%i"
    for n, full in enumerate(ELEMENTWISE):
        name = full.removeprefix("stablehlo.")
        if name == "clamp":
            floats.append(f"    %f{n} = {full} %g, {prev_f}, %g : tensor<8x16xf32>")
            prev_f = f"%f{n}"
            continue
        if name in _INT_ONLY or name in _BOTH:
            args = prev_i if name in _UNARY else f"{prev_i}, %j"
            ints.append(f"    %i{n} = {full} {args} : tensor<8x16xi32>")
            prev_i = f"%i{n}"
        if name not in _INT_ONLY:
            args = prev_f if name in _UNARY else f"{prev_f}, %g"
            floats.append(f"    %f{n} = {full} {args} : tensor<8x16xf32>")
            prev_f = f"%f{n}"
    functional = [f"    %fn{n} = {name} {_FUNCTIONAL[name]}" for n, name in enumerate(FUNCTIONAL)]
    chlo = [
        f"    %ch{n} = {name} "
        + _CHLO_TYPES.get(name, "%f : tensor<8x16xf32> -> tensor<8x16xf32>")
        for n, name in enumerate(CHLO_UNARY)
    ]
    text = (
        _MODULE.replace("{elementwise}", "\n".join(floats + ints))
        .replace("{functional}", "\n".join(functional))
        .replace("{chlo}", "\n".join(chlo))
        .replace("{last_int}", prev_i)
    )
    return mlir_bridge.pretty_text(mlir_bridge.parse_module(text, "every"))
