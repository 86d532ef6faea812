"""Every op's pretty syntax, declared once: the pretty printer writes an op by its entry here
and the pretty parser reads it back by the same entry.

Most ops are one line in the pieces of directives.py (as StableHLO's, CHLO's and Shardy's
declarative assembly formats spell them, e.g. `%0 = stablehlo.broadcast_in_dim %x, dims = [0]
: (tensor<8xf32>) -> tensor<8x16xf32>`); the ops whose syntax holds regions have a format of
their own in regions.py, with both halves side by side. An op without an entry is printed by
jaxlib, and read in its generic form. (The module and its funcs are the structure the printer
and the parser walk, not entries here.)
"""

from __future__ import annotations

from .directives import (
    Arrow,
    Attrs,
    Declared,
    Functional,
    Operands,
    OperandTypes,
    Optional,
    OwnAttrs,
    PairwiseTypes,
    ResultType,
    SameOrFunctional,
    SelectTypes,
    Text,
)
from .properties import (
    I64,
    DenseValue,
    DotDims,
    Enum,
    I64List,
    PrecisionList,
    Prop,
    SliceRanges,
    SymbolName,
    SymbolRef,
    Window,
    Wrapped,
    constant_hint,
)
from .regions import ManualComputation, Reduce, While

# the element-wise ops: `op %a, %b : T` (or functional-type where the types differ)
ELEMENTWISE = tuple(
    f"stablehlo.{n}"
    for n in (
        "abs add and atan2 cbrt ceil clamp convert cosine count_leading_zeros divide exponential "
        "exponential_minus_one floor log log_plus_one logistic maximum minimum multiply negate "
        "not or popcnt power remainder round_nearest_afz round_nearest_even rsqrt shift_left "
        "shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor"
    ).split()
)
# `op %x : (T) -> R`
FUNCTIONAL = tuple(
    f"stablehlo.{n}"
    for n in "bitcast_convert dynamic_update_slice imag is_finite real reshape".split()
)
# chlo's unary ops as JAX emits them (erf, erf_inv, lgamma, square, hyperbolic, ...): `%x : T -> R`
CHLO_UNARY = tuple(
    f"chlo.{n}"
    for n in (
        "acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc is_inf "
        "is_neg_inf is_pos_inf lgamma sinh square tan"
    ).split()
)

_OPERANDS = (Text(" "), Operands())
_NAT_LIST = I64List()
# `sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : T` (its result's sharding is the op's own)
_SHARDING_OP = Declared(
    Text(" "), Operands(1), Text(" "), Prop("sharding", Wrapped("#sdy.sharding", r"<@[^>]*>")),
    Attrs(results=False), ResultType(),
)
_RETURN = Declared(Optional(Text(" "), Operands(), OperandTypes()))
_CUSTOM_CALL_OWN = frozenset(
    "api_version backend_config called_computations has_side_effect "
    "operand_layouts output_operand_aliases result_layouts".split()
)
_CONV_OWN = frozenset({"batch_group_count", "feature_group_count", "precision_config"})
_CONV_DIMS = r"\[[\w, ]*\]x\[[\w, ]*\]->\[[\w, ]*\]"


def _dims(label: str, key: str, same_type: bool = False) -> Declared:
    """`%x, <label> = [..]`: ops whose one property is a dimension list after the operands."""
    types = SameOrFunctional() if same_type else Functional()
    return Declared(*_OPERANDS, Text(f", {label} = "), Prop(key, _NAT_LIST), Attrs(), types)


# the module body's meshes: `sdy.mesh @name = <["x"=2]>`
MESH = Declared(
    Text(" @"), Prop("sym_name", SymbolName()), Text(" = "),
    Prop("mesh", Wrapped("#sdy.mesh", "<.*?>")), Attrs(results=False),
)

FORMATS: dict[str, Declared | Reduce | While | ManualComputation] = {
    **{name: Declared(*_OPERANDS, Attrs(), SameOrFunctional()) for name in ELEMENTWISE},
    **{name: Declared(*_OPERANDS, Attrs(), Functional()) for name in FUNCTIONAL},
    **{name: Declared(*_OPERANDS, Attrs(), Arrow()) for name in CHLO_UNARY},
    "chlo.top_k": Declared(
        Text("("), Operands(1), Text(", k = "), Prop("k", I64()), Text(")"), Attrs(), Arrow(2),
        result_names=("values", "indices"),
    ),
    "stablehlo.constant": Declared(Attrs(), Text(" "), DenseValue(), hint=constant_hint),
    "stablehlo.broadcast_in_dim": _dims("dims", "broadcast_dimensions"),
    "stablehlo.transpose": _dims("dims", "permutation"),
    "stablehlo.reverse": _dims("dims", "dimensions", same_type=True),
    "stablehlo.dynamic_slice": _dims("sizes", "slice_sizes"),
    "stablehlo.concatenate": Declared(
        *_OPERANDS, Text(", dim = "), Prop("dimension", I64()), Attrs(), Functional()
    ),
    "stablehlo.dot_general": Declared(
        *_OPERANDS,
        Text(", "),
        DotDims(),
        Optional(Text(", precision = "), Prop("precision_config", PrecisionList()),
                 key="precision_config"),
        Attrs(),
        Functional(),
    ),
    "stablehlo.compare": Declared(
        Text(" "),
        Prop("comparison_direction", Enum("comparison_direction")),
        Text(", "),
        Operands(2),
        Optional(Text(", "), Prop("compare_type", Enum("comparison_type")), key="compare_type"),
        Attrs(),
        Functional(),
    ),
    "stablehlo.select": Declared(*_OPERANDS, Attrs(), SelectTypes()),
    "stablehlo.iota": Declared(Text(" dim = "), Prop("iota_dimension", I64()), Attrs(), ResultType()),
    "stablehlo.slice": Declared(
        Text(" "), Operands(1), Text(" "), SliceRanges(), Attrs(), Functional()
    ),
    "stablehlo.pad": Declared(
        *_OPERANDS,
        Text(", low = "),
        Prop("edge_padding_low", I64List(signed=True)),
        Text(", high = "),
        Prop("edge_padding_high", I64List(signed=True)),
        Text(", interior = "),
        Prop("interior_padding", _NAT_LIST),
        Attrs(),
        Functional(),
    ),
    "stablehlo.partition_id": Declared(Attrs(), ResultType()),
    "stablehlo.optimization_barrier": Declared(Attrs(), *_OPERANDS, PairwiseTypes()),
    "stablehlo.custom_call": Declared(
        Text(" @"),
        Prop("call_target_name", SymbolName()),
        Text("("),
        Operands(optional=True),
        Text(")"),
        OwnAttrs(_CUSTOM_CALL_OWN),
        Functional(),
    ),
    "stablehlo.convolution": Declared(
        Text("("),
        Operands(2),
        Text(") dim_numbers = "),
        Prop("dimension_numbers", Wrapped("#stablehlo.conv<", _CONV_DIMS, ">", checked=False)),
        Window(),
        OwnAttrs(_CONV_OWN),
        Functional(),
    ),
    "stablehlo.reduce": Reduce(),
    "stablehlo.while": While(),
    "stablehlo.return": _RETURN,
    "sdy.sharding_constraint": _SHARDING_OP,
    "sdy.reshard": _SHARDING_OP,
    "sdy.sharding_group": Declared(
        Text(" "), Operands(1), Text(" group_id="), Prop("group_id", I64(signed=True)), Attrs(),
        OperandTypes(),
    ),
    "sdy.manual_computation": ManualComputation(),
    "sdy.return": _RETURN,
    "sdy.mesh": MESH,
    "func.return": _RETURN,
    "func.call": Declared(
        Text(" "), Prop("callee", SymbolRef()), Text("("), Operands(optional=True), Text(")"),
        Attrs(), Functional(),
    ),
}
