"""shardc IR -> MLIR pretty (custom op syntax) text, byte-identical to jaxlib's pretty print.

The export used to print generic text and have jaxlib parse it again only to print it pretty;
this printer writes the pretty form directly for the ops and forms it knows (the table `_OPS`:
what JAX lowers a model to, each format as stablehlo/sdy/func print it; `_REGION_OPS`: ops
whose regions are printed in full, a while's cond/do and a reduce's reducer, named as MLIR
names nested regions). Anything else (an op not in the tables, a property it does not expect,
more than one block, location printing) raises `Unsupported`, and the caller prints through
jaxlib instead: this printer never guesses a format. tests/test_pretty_printer.py checks it
byte for byte against jaxlib on every lit input and the benchmark stacks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..ir import (
    AttrDict,
    AttrList,
    FuncOp,
    Module,
    Operation,
    Value,
    parse_dict_list,
)
from ..types import TensorType, split_function_type
from .generic import FOLD_LINES
from .sharding_attrs import func_properties, result_sharding_attrs


class Unsupported(Exception):
    """An op or form this printer does not write: print through jaxlib instead."""


_DIM_LIST = re.compile(r"array<i64(?:: ([0-9, ]*))?>$")
_DOT = re.compile(
    r"#stablehlo\.dot<(?:lhs_batching_dimensions = \[([0-9, ]*)\], "
    r"rhs_batching_dimensions = \[([0-9, ]*)\](?:, )?)?"
    r"(?:lhs_contracting_dimensions = \[([0-9, ]*)\], "
    r"rhs_contracting_dimensions = \[([0-9, ]*)\])?>$"
)
_PRECISION = re.compile(r"#stablehlo<precision (\w+)>")
_INT_ELEMENT = re.compile(r"(?:[su]?i\d+)$")
_FLOAT_ELEMENT = re.compile(r"(?:bf16|f16|f32|f64|complex<(?:bf16|f16|f32|f64)>)$")


def _dims(raw: object) -> str:
    """`array<i64: 0, 1>` -> `[0, 1]` (DenseI64ArrayAttr's pretty form)."""
    m = _DIM_LIST.match(str(raw))
    if m is None:
        raise Unsupported(f"dimension list {raw}")
    return f"[{m.group(1) or ''}]"


def _sorted_body(d: AttrDict | None) -> str:
    """An attribute dictionary's entries as MLIR prints them: sorted by name."""
    return d.sorted_body() if d else ""


def _attr_dict(op: Operation) -> str:
    """` {attrs}` with the op's discardable attributes and its results' `sdy.sharding`."""
    body = result_sharding_attrs(op)
    if not body:
        return ""
    if op.attributes and "sdy.sharding" in body:
        body = AttrDict(items=dict(sorted(AttrDict(body).items()))).body()
    return " {" + body + "}"


def _strip_prefix(text: str, prefix: str) -> str:
    """`#sdy.sharding<...>` -> `<...>`: an attribute whose kind the op's syntax already fixes."""
    if not text.startswith(prefix + "<"):
        raise Unsupported(f"attribute {text[:40]}")
    return text[len(prefix) :]


class _FuncPrinter:
    """Names and prints the ops of one function (an isolated-from-above scope: `%0`, `%cst`,
    `%arg0` and the name-conflict counter all restart in each function)."""

    def __init__(self) -> None:
        self.names: dict[Value, str] = {}  # (values hash by identity)
        self.next_value = 0
        self.next_conflict = 0
        self.next_argument = 0
        self.used: set[str] = set()
        self.dialect = "func"  # the default dialect: its ops print without their prefix

    def fork(self) -> _FuncPrinter:
        """The naming state a nested region starts from (MLIR's SSANameState): the counters
        and names of its whole parent region, which a sibling region does not see."""
        child = _FuncPrinter()
        child.names = self.names  # (a value is named once; a sibling never reads another's)
        child.next_value = self.next_value
        child.next_conflict = self.next_conflict
        child.next_argument = self.next_argument
        child.used = set(self.used)
        child.dialect = ""  # (a region of a stablehlo op: no default dialect)
        return child

    def unique(self, hint: str) -> str:
        """`hint`, or `hint_N` with the next free conflict number (MLIR's uniqueValueName)."""
        name = hint
        if hint in self.used:
            while True:
                name = f"{hint}_{self.next_conflict}"
                self.next_conflict += 1
                if name not in self.used:
                    break
        self.used.add(name)
        return name

    def name(self, v: Value) -> str:
        try:
            return self.names[v]
        except KeyError:
            raise Unsupported("a value used before its definition") from None

    def operands(self, op: Operation) -> str:
        names = self.names
        try:
            return ", ".join([names[v] for v in op.operands])
        except KeyError:
            raise Unsupported("a value used before its definition") from None

    def define(self, op: Operation, hint: str | None = None) -> str:
        """Name `op`'s results; the `%x = ` / `%x:n = ` head of its line."""
        n = len(op.results)
        if not n:
            return ""
        if hint is None:
            name = f"%{self.next_value}"
            self.next_value += 1
        else:
            name = "%" + self.unique(hint)
        if n == 1:
            self.names[op.results[0]] = name
            return f"{name} = "
        for i, r in enumerate(op.results):
            self.names[r] = f"{name}#{i}"
        return f"{name}:{n} = "


def _types(values: Sequence[Value]) -> list[str]:
    return [v.type.text for v in values]


def _functional(op: Operation) -> str:
    ins = ", ".join(_types(op.operands))
    outs = _types(op.results)
    out = outs[0] if len(outs) == 1 and not outs[0].startswith("(") else f"({', '.join(outs)})"
    return f"({ins}) -> {out}"


def _same_type(op: Operation) -> str:
    """custom<SameOperandsAndResultType>: one type when all are equal, else functional."""
    types = _types(op.operands) + _types(op.results)
    if len(op.results) == 1 and all(t == types[0] for t in types):
        return types[0]
    return _functional(op)


def _no_props(op: Operation) -> None:
    if op.properties or op.regions or op.successors:
        raise Unsupported(op.name)


# ---------------------------------------------------------------------------------------------
# One function per format: each returns the op's line without indentation.

OpFormat = Callable[[Operation, _FuncPrinter], str]


def _elementwise(op: Operation, p: _FuncPrinter) -> str:
    _no_props(op)
    ops = p.operands(op)
    return f"{p.define(op)}{op.name} {ops}{_attr_dict(op)} : {_same_type(op)}"


def _functional_type_op(op: Operation, p: _FuncPrinter) -> str:
    """`name %x attr-dict : functional-type` (reshape)."""
    _no_props(op)
    ops = p.operands(op)
    return f"{p.define(op)}{op.name} {ops}{_attr_dict(op)} : {_functional(op)}"


def _constant(op: Operation, p: _FuncPrinter) -> str:
    if op.regions or op.operands or len(op.results) != 1 or op.properties.keys() != ["value"]:
        raise Unsupported(op.name)
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.encoding:
        raise Unsupported("constant type")
    value = str(op.properties["value"])
    suffix = " : " + t.text
    if not value.endswith(suffix):
        raise Unsupported("constant whose value type is not its result type")
    if _INT_ELEMENT.match(t.element_type):
        hint = "c"
    elif _FLOAT_ELEMENT.match(t.element_type):
        hint = "cst"
    else:
        raise Unsupported(f"constant of {t.element_type}")
    head = p.define(op, hint)
    return f"{head}{op.name}{_attr_dict(op)} {value[: -len(suffix)]} : {t.text}"


def _dims_op(
    key: str,
    label: str = "dims",
    read: Callable[[object], str] = _dims,
    type_of: Callable[[Operation], str] = _functional,
) -> OpFormat:
    """`name %x, <label> = <value> attr-dict : <type>`, for ops whose one property is printed
    after the operands: broadcast_in_dim and transpose (`dims`), concatenate (`dim`), reverse
    (`dims`, one type), dynamic_slice (`sizes`)."""

    def fmt(op: Operation, p: _FuncPrinter) -> str:
        _props(op, {key})
        if len(op.results) != 1:
            raise Unsupported(op.name)
        value = read(op.properties[key])
        ops = p.operands(op)
        return f"{p.define(op)}{op.name} {ops}, {label} = {value}{_attr_dict(op)} : {type_of(op)}"

    return fmt


def _dot_general(op: Operation, p: _FuncPrinter) -> str:
    keys = set(op.properties.keys())
    if op.regions or not keys <= {"dot_dimension_numbers", "precision_config"}:
        raise Unsupported(op.name)
    m = _DOT.match(str(op.properties["dot_dimension_numbers"]))
    if m is None:
        raise Unsupported("dot dimension numbers")
    lb, rb, lc, rc = (g or "" for g in m.groups())
    parts = []
    if lb or rb:
        parts.append(f"batching_dims = [{lb}] x [{rb}]")
    parts.append(f"contracting_dims = [{lc}] x [{rc}]")
    if "precision_config" in keys:
        raw = str(op.properties["precision_config"])
        names = _PRECISION.findall(raw)
        if f"[{', '.join(f'#stablehlo<precision {n}>' for n in names)}]" != raw:
            raise Unsupported("precision config")
        parts.append(f"precision = [{', '.join(names)}]")
    ops = p.operands(op)
    return f"{p.define(op)}{op.name} {ops}, {', '.join(parts)}{_attr_dict(op)} : {_functional(op)}"


def _reduce(op: Operation, p: _FuncPrinter) -> str:
    """The compact form `stablehlo.reduce(%x init: %i) applies stablehlo.add across
    dimensions = [..]`, for one input whose body is one commutative binary op on the block
    arguments (the only reduce form printed here)."""
    if op.properties.keys() != ["dimensions"] or len(op.operands) != 2 or len(op.regions) != 1:
        raise Unsupported(op.name)
    blocks = op.regions[0].blocks
    if len(blocks) != 1 or len(blocks[0].ops) != 2:
        raise Unsupported("reduce body")
    inner, ret = blocks[0].ops
    args = blocks[0].args
    if (
        inner.name not in _COMMUTATIVE
        or inner.properties
        or inner.attributes
        or inner.regions
        or len(inner.results) != 1
        or inner.results[0].sharding is not None
        or len(args) != 2
        or any(a.sharding is not None for a in args)
        or inner.operands != args
        or ret.name != "stablehlo.return"
        or list(ret.operands) != list(inner.results)  # (results are a tuple)
        or ret.attributes
        or ret.properties
    ):
        raise Unsupported("reduce body")
    x, init = op.operands
    element = x.type.element_type if isinstance(x.type, TensorType) else None
    scalar = f"tensor<{element}>"
    if any(a.type.text != scalar for a in args):
        raise Unsupported("reduce body types")
    dims = _dims(op.properties["dimensions"])
    head = f"{op.name}({p.name(x)} init: {p.name(init)})"
    tail = f" applies {inner.name} across dimensions = {dims}{_attr_dict(op)} : {_functional(op)}"
    return p.define(op) + head + tail


def _sdy_sharding_op(op: Operation, p: _FuncPrinter) -> str:
    """`sdy.sharding_constraint %x <@mesh, [...]> attr-dict : type` (and `sdy.reshard`)."""
    if op.regions or op.properties.keys() != ["sharding"] or len(op.results) != 1:
        raise Unsupported(op.name)
    sharding = _strip_prefix(str(op.properties["sharding"]), "#sdy.sharding")
    ops = p.operands(op)
    if op.results[0].sharding is not None:
        raise Unsupported("sharding attribute on a sharding op")
    attrs = f" {{{_sorted_body(op.attributes)}}}" if op.attributes else ""
    return f"{p.define(op)}{op.name} {ops} {sharding}{attrs} : {op.results[0].type.text}"


_ENUM = re.compile(r"#stablehlo<(?:comparison_direction|comparison_type) (\w+)>$")
_I64 = re.compile(r"(\d+) : i64$")


def _enum(raw: object) -> str:
    """`#stablehlo<comparison_direction GT>` -> `GT`."""
    m = _ENUM.match(str(raw))
    if m is None:
        raise Unsupported(f"enum {raw}")
    return m.group(1)


def _i64(raw: object) -> str:
    """`1 : i64` -> `1`."""
    m = _I64.match(str(raw))
    if m is None:
        raise Unsupported(f"integer {raw}")
    return m.group(1)


def _props(op: Operation, required: set[str], optional: frozenset[str] = frozenset()) -> None:
    keys = set(op.properties.keys())
    if op.regions or op.successors or not required <= keys <= required | optional:
        raise Unsupported(op.name)


def _compare(op: Operation, p: _FuncPrinter) -> str:
    """`stablehlo.compare GT, %a, %b, FLOAT : (T, T) -> T` (the type only when given)."""
    _props(op, {"comparison_direction"}, frozenset({"compare_type"}))
    direction = _enum(op.properties["comparison_direction"])
    kind = op.properties.get("compare_type")
    tail = f", {_enum(kind)}" if kind is not None else ""
    ops = p.operands(op)
    return f"{p.define(op)}{op.name} {direction}, {ops}{tail}{_attr_dict(op)} : {_functional(op)}"


def _select(op: Operation, p: _FuncPrinter) -> str:
    """`stablehlo.select %p, %a, %b : tensor<i1>, T` (pred type, then the shared type)."""
    _props(op, set())
    pred, a, b = (v.type.text for v in op.operands)
    result = op.results[0].type.text
    if a != result or b != result or pred == result:
        raise Unsupported("select types")
    return f"{p.define(op)}{op.name} {p.operands(op)}{_attr_dict(op)} : {pred}, {result}"


def _iota(op: Operation, p: _FuncPrinter) -> str:
    _props(op, {"iota_dimension"})
    dim = _i64(op.properties["iota_dimension"])
    return f"{p.define(op)}{op.name} dim = {dim}{_attr_dict(op)} : {op.results[0].type.text}"


def _slice(op: Operation, p: _FuncPrinter) -> str:
    """`stablehlo.slice %x [0:2, 0:16]` (unit strides only)."""
    _props(op, {"start_indices", "limit_indices", "strides"})
    starts, limits, strides = (
        _dims(op.properties[k])[1:-1].split(", ")
        for k in ("start_indices", "limit_indices", "strides")
    )
    if any(s not in ("1", "") for s in strides):
        raise Unsupported("strided slice")
    ranges = ", ".join(f"{a}:{b}" for a, b in zip(starts, limits, strict=True) if a or b)
    ops = p.operands(op)
    return f"{p.define(op)}{op.name} {ops} [{ranges}]{_attr_dict(op)} : {_functional(op)}"


def _pad(op: Operation, p: _FuncPrinter) -> str:
    _props(op, {"edge_padding_low", "edge_padding_high", "interior_padding"})
    low, high, interior = (
        _dims(op.properties[k])
        for k in ("edge_padding_low", "edge_padding_high", "interior_padding")
    )
    ops = p.operands(op)
    pads = f"low = {low}, high = {high}, interior = {interior}"
    return f"{p.define(op)}{op.name} {ops}, {pads}{_attr_dict(op)} : {_functional(op)}"


def _partition_id(op: Operation, p: _FuncPrinter) -> str:
    _props(op, set())
    if op.operands:
        raise Unsupported(op.name)
    return f"{p.define(op)}{op.name}{_attr_dict(op)} : {op.results[0].type.text}"


def _return(op: Operation, p: _FuncPrinter) -> str:
    if op.properties or op.regions or op.attributes or p.dialect != "func":
        raise Unsupported(op.name)
    if not op.operands:
        return "return"
    return f"return {p.operands(op)} : {', '.join(_types(op.operands))}"


def _call(op: Operation, p: _FuncPrinter) -> str:
    if op.regions or op.properties.keys() != ["callee"]:
        raise Unsupported(op.name)
    callee = str(op.properties["callee"])
    ops = p.operands(op)
    name = "call" if p.dialect == "func" else op.name
    return f"{p.define(op)}{name} {callee}({ops}){_attr_dict(op)} : {_functional(op)}"


def _region_return(op: Operation, p: _FuncPrinter) -> str:
    """`stablehlo.return %a, %b : T, U` (the terminator of a stablehlo op's region)."""
    _no_props(op)
    if op.attributes or op.results:
        raise Unsupported(op.name)
    if not op.operands:
        return op.name
    return f"{op.name} {p.operands(op)} : {', '.join(_types(op.operands))}"


def _chlo_unary(op: Operation, p: _FuncPrinter) -> str:
    """`chlo.square %x attr-dict : T -> T`."""
    _no_props(op)
    if len(op.operands) != 1 or len(op.results) != 1:
        raise Unsupported(op.name)
    ops = p.operands(op)
    types = f"{op.operands[0].type.text} -> {op.results[0].type.text}"
    return f"{p.define(op)}{op.name} {ops}{_attr_dict(op)} : {types}"


_CONV_DIMS = re.compile(r"#stablehlo\.conv<(.*)>$")
_BOOL_LIST = re.compile(r"array<i1(?:: ((?:true|false)(?:, (?:true|false))*))?>$")
_PADDING = re.compile(
    r"dense<(-?\d+|\[\[-?\d+, -?\d+\](?:, \[-?\d+, -?\d+\])*\])> : tensor<(\d+)x2xi64>$"
)
_CONV_OWN = frozenset({"batch_group_count", "feature_group_count", "precision_config"})
# the window's properties, in the order they print, and their labels
_CONV_LABEL = {
    "window_strides": "stride",
    "padding": "pad",
    "lhs_dilation": "lhs_dilate",
    "rhs_dilation": "rhs_dilate",
    "window_reversal": "reverse",
}
_CONV_WINDOW = tuple(_CONV_LABEL)


def _padding(raw: object) -> str:
    """`dense<1> : tensor<2x2xi64>` -> `[[1, 1], [1, 1]]` (non-splat values as written)."""
    m = _PADDING.match(str(raw))
    if m is None:
        raise Unsupported(f"padding {raw}")
    value, rows = m.group(1), int(m.group(2))
    if value.startswith("["):
        return value
    return "[" + ", ".join([f"[{value}, {value}]"] * rows) + "]"


def _convolution(op: Operation, p: _FuncPrinter) -> str:
    """`stablehlo.convolution(%x, %k) dim_numbers = [..]x[..]->[..], window = {stride = [..],
    pad = [[..]], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]} {attrs} : (..) -> ..`
    (the group counts and precision config go into the sorted attribute dictionary)."""
    props = op.properties
    keys = set(props.keys())
    if (
        op.regions
        or op.successors
        or len(op.operands) != 2
        or len(op.results) != 1
        or "dimension_numbers" not in keys
        or not keys <= {"dimension_numbers", *_CONV_WINDOW, *_CONV_OWN}
    ):
        raise Unsupported(op.name)
    m = _CONV_DIMS.match(str(props["dimension_numbers"]))
    if m is None:
        raise Unsupported("convolution dimension numbers")
    window = []
    for key in _CONV_WINDOW:
        if key not in keys:
            continue
        raw = props[key]
        if key == "padding":
            value = _padding(raw)
        elif key == "window_reversal":
            b = _BOOL_LIST.match(str(raw))
            if b is None:
                raise Unsupported(f"window reversal {raw}")
            value = f"[{b.group(1) or ''}]"
        else:
            value = _dims(raw)
        window.append(f"{_CONV_LABEL[key]} = {value}")
    head = f"({p.operands(op)}) dim_numbers = {m.group(1)}"
    if window:
        head += ", window = {" + ", ".join(window) + "}"
    own = {k: str(props[k]) for k in _CONV_OWN if k in keys}
    body = result_sharding_attrs(op)
    items = {**own, **(dict(AttrDict(body).items()) if body else {})}
    attrs = f" {{{AttrDict(items=dict(sorted(items.items()))).body()}}}" if items else ""
    return f"{p.define(op)}{op.name}{head}{attrs} : {_functional(op)}"


# ---------------------------------------------------------------------------------------------
# Ops with regions printed in full. Their nested regions are named after the whole region that
# holds them (MLIR numbers a region's values before those of the regions nested in it), so
# each format names the op's results at its place and returns how to print the rest later.

Later = Callable[[str], str]  # indentation -> the op's lines
RegionFormat = Callable[[Operation, _FuncPrinter], Later]


def _block_lines(
    ops: Sequence[Operation], p: _FuncPrinter, indent: str, out: list[str] | None = None
) -> list[str]:
    """The lines of one block's ops at `indent` (regions nested in them included), appended
    to `out` when given (a function's body: joined into chunks as they come, up to the first
    op whose regions are printed later)."""
    lines: list[str] = [] if out is None else out
    first = len(lines)
    later: list[tuple[int, Later]] = []
    for op in ops:
        if out is not None and not later and len(lines) - first > FOLD_LINES:
            # lines joined into one chunk as they come: a line's object header costs as much
            # as its text, and the module's lines would all be alive until the final join
            lines[first:] = ["\n".join(lines[first:])]
            first += 1
        nested = _REGION_OPS.get(op.name)
        if nested is not None:
            one_line = _OPS.get(op.name)
            if one_line is not None:
                try:
                    lines.append(indent + one_line(op, p))
                    continue
                except Unsupported:
                    pass  # (not the one-line form: the regions are printed)
            later.append((len(lines), nested(op, p)))
            lines.append("")
            continue
        fmt = _OPS.get(op.name)
        if fmt is None:
            raise Unsupported(op.name)
        lines.append(indent + fmt(op, p))
    for i, rest in later:
        lines[i] = indent + rest(indent)
    return lines


def _single_block(op: Operation, n: int) -> list:
    if len(op.regions) != n or op.successors or any(len(r.blocks) != 1 for r in op.regions):
        raise Unsupported(op.name)
    return [r.blocks[0] for r in op.regions]


def _while(op: Operation, p: _FuncPrinter) -> Later:
    """`stablehlo.while(%iterArg = %x, ..) : T, .. attributes {..}` then its `cond` and `do`
    regions (their arguments named `iterArg`, `iterArg_N`, as StableHLO's printer asks)."""
    cond, body = _single_block(op, 2)
    if op.properties or not op.operands:
        raise Unsupported(op.name)
    types = _types(op.operands)
    for block in (cond, body):
        if block.label not in (None, "bb0") or _types(block.args) != types:
            raise Unsupported("while region arguments")
    attrs = _attr_dict(op)
    if attrs:
        attrs = " attributes" + attrs
    head = p.define(op)

    def rest(indent: str) -> str:
        inner = indent + "  "
        parts = []
        arg_names: list[str] = []
        for block in (cond, body):
            q = p.fork()
            arg_names = []
            for a in block.args:
                arg_names.append("%" + q.unique("iterArg"))
                q.names[a] = arg_names[-1]
            parts.append("\n".join(_block_lines(block.ops, q, inner)))
        pairs = ", ".join(f"{a} = {p.name(v)}" for a, v in zip(arg_names, op.operands, strict=True))
        return (
            f"{head}{op.name}({pairs}) : {', '.join(types)}{attrs}\n{indent}cond {{\n"
            f"{parts[0]}\n{indent}}} do {{\n{parts[1]}\n{indent}}}"
        )

    return rest


def _reduce_regions(op: Operation, p: _FuncPrinter) -> Later:
    """`stablehlo.reduce(%x init: %i), (..) across dimensions = [..] {..} : (..) -> (..)` then
    ` reducer(%a: T, %b: T) (..)  {` and the body (a reduce that is not one binary op)."""
    (block,) = _single_block(op, 1)
    keys = op.properties.keys()
    n = len(op.operands) // 2
    if keys != ["dimensions"] or not n or len(op.operands) % 2 or len(block.args) != 2 * n:
        raise Unsupported(op.name)
    if block.label not in (None, "bb0"):
        raise Unsupported("reduce block")
    inputs, inits = op.operands[:n], op.operands[n:]
    pairs = ", ".join(
        f"({p.name(x)} init: {p.name(i)})" for x, i in zip(inputs, inits, strict=True)
    )
    dims = _dims(op.properties["dimensions"])
    tail = f" across dimensions = {dims}{_attr_dict(op)} : {_functional(op)}"
    head = p.define(op)

    def rest(indent: str) -> str:
        q = p.fork()
        names = []
        for a in block.args:
            names.append("%" + q.unique(f"arg{q.next_argument}"))
            q.next_argument += 1
            q.names[a] = names[-1]
        args = " ".join(
            f"({names[i]}: {block.args[i].type.text}, {names[n + i]}: {block.args[n + i].type.text})"
            for i in range(n)
        )
        lines = "\n".join(_block_lines(block.ops, q, indent + "  "))
        return f"{head}{op.name}{pairs}{tail}\n{indent} reducer{args}  {{\n{lines}\n{indent}}}"

    return rest


_REGION_OPS: dict[str, RegionFormat] = {
    "stablehlo.while": _while,
    "stablehlo.reduce": _reduce_regions,
}


_COMMUTATIVE = frozenset(
    f"stablehlo.{n}" for n in ("add", "multiply", "maximum", "minimum", "and", "or", "xor")
)
# the element-wise ops whose pretty form is `op %a, %b : T` (the pretty parser reads the same)
ELEMENTWISE_FORM = (
    "abs add and atan2 cbrt ceil convert cosine count_leading_zeros divide exponential "
    "exponential_minus_one floor log log_plus_one logistic maximum minimum multiply negate not "
    "or popcnt power remainder round_nearest_afz round_nearest_even rsqrt shift_left "
    "shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor"
).split()

# op name -> its format (ops in func bodies); every other op raises `Unsupported`
_OPS: dict[str, OpFormat] = {
    **{f"stablehlo.{n}": _elementwise for n in ELEMENTWISE_FORM},
    "stablehlo.reshape": _functional_type_op,
    "stablehlo.constant": _constant,
    "stablehlo.broadcast_in_dim": _dims_op("broadcast_dimensions"),
    "stablehlo.transpose": _dims_op("permutation"),
    "stablehlo.dot_general": _dot_general,
    "stablehlo.reduce": _reduce,
    "stablehlo.compare": _compare,
    "stablehlo.select": _select,
    "stablehlo.iota": _iota,
    "stablehlo.slice": _slice,
    "stablehlo.concatenate": _dims_op("dimension", "dim", _i64),
    "stablehlo.pad": _pad,
    "stablehlo.reverse": _dims_op("dimensions", type_of=_same_type),
    "stablehlo.dynamic_slice": _dims_op("slice_sizes", "sizes"),
    "stablehlo.dynamic_update_slice": _functional_type_op,
    "stablehlo.convolution": _convolution,
    "stablehlo.return": _region_return,
    "chlo.square": _chlo_unary,
    "stablehlo.partition_id": _partition_id,
    "sdy.sharding_constraint": _sdy_sharding_op,
    "sdy.reshard": _sdy_sharding_op,
    "func.return": _return,
    "func.call": _call,
}


# ---------------------------------------------------------------------------------------------
# Module, meshes, functions


def print_pretty(module: Module, release: bool = False) -> str:
    """`module` in MLIR's pretty form, as jaxlib prints it without locations; raises
    `Unsupported` for anything outside the table above. `release`: the module is emptied
    (`Module.release`) once printed, before its lines are joined, so the IR and the whole text
    are never alive together."""
    top = module.op
    out: list[str] = []
    props = top.properties
    if not props.keys() <= ["sym_name"] or top.successors or len(top.regions) != 1:
        raise Unsupported("module")
    head = "module"
    if "sym_name" in props:
        head += " @" + _symbol(str(props["sym_name"]))
    if top.attributes:
        head += f" attributes {{{_sorted_body(top.attributes)}}}"
    out.append(head + " {")
    body = module.body
    if len(top.regions[0].blocks) != 1 or body.args:
        raise Unsupported("module body")
    for op in body.ops:
        if op.name == "sdy.mesh":
            out.append("  " + _mesh(op))
        elif op.name == "func.func" and isinstance(op, FuncOp):
            _func(op, out)
        else:
            raise Unsupported(op.name)
    out.append("}")
    out.append("")  # the final newline, without copying the whole text once more
    if release:
        module.release()
    return "\n".join(out)


def _symbol(raw: str) -> str:
    """`"name"` -> `name` when MLIR prints it bare, else raise."""
    if not (raw.startswith('"') and raw.endswith('"')):
        raise Unsupported(f"symbol {raw}")
    name = raw[1:-1]
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        raise Unsupported(f"symbol {raw}")
    return name


def _mesh(op: Operation) -> str:
    if (
        op.operands
        or op.results
        or op.regions
        or sorted(op.properties.keys()) != ["mesh", "sym_name"]
    ):
        raise Unsupported("sdy.mesh")
    mesh = _strip_prefix(str(op.properties["mesh"]), "#sdy.mesh")
    attrs = f" {{{_sorted_body(op.attributes)}}}" if op.attributes else ""
    return f"sdy.mesh @{_symbol(str(op.properties['sym_name']))} = {mesh}{attrs}"


_FUNC_PROPS = {"sym_name", "function_type", "arg_attrs", "res_attrs", "sym_visibility"}


def _func(func: FuncOp, out: list[str]) -> None:
    props = func_properties(func)
    keys = set(props.keys())
    if not keys <= _FUNC_PROPS or func.attributes or func.operands or func.results:
        raise Unsupported("func.func")
    if len(func.regions) != 1 or len(func.regions[0].blocks) != 1:
        raise Unsupported("func.func body")
    entry = func.regions[0].entry
    if entry.label not in (None, "bb0"):
        raise Unsupported("func.func block label")
    ins, outs = split_function_type(str(props["function_type"]))
    arg_attrs = _dict_list(props.get("arg_attrs"), len(ins))
    res_attrs = _dict_list(props.get("res_attrs"), len(outs))
    if len(entry.args) != len(ins) or any(
        a.type.text != t for a, t in zip(entry.args, ins, strict=True)
    ):
        raise Unsupported("func.func arguments")
    p = _FuncPrinter()
    args = []
    for i, (a, d) in enumerate(zip(entry.args, arg_attrs, strict=True)):
        name = f"%arg{i}"
        p.names[a] = name
        args.append(f"{name}: {a.type.text}" + (f" {{{d}}}" if d else ""))
    vis = props.get("sym_visibility")
    head = "func.func " + (str(vis).strip('"') + " " if vis is not None else "")
    head += f"@{_symbol(str(props['sym_name']))}({', '.join(args)})"
    if outs:
        results = [t + (f" {{{d}}}" if d else "") for t, d in zip(outs, res_attrs, strict=True)]
        parens = len(outs) > 1 or res_attrs[0] or outs[0].startswith("(")
        head += " -> " + (f"({', '.join(results)})" if parens else results[0])
    out.append("  " + head + " {")
    p.next_argument = len(entry.args)
    _block_lines(entry.ops, p, "    ", out)
    out.append("  }")


def _dict_list(raw: object, n: int) -> list[str]:
    """The bodies of a func's `arg_attrs`/`res_attrs` entries (sorted), `n` of them."""
    if raw is None:
        return [""] * n
    attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
    if not isinstance(attrs, AttrList) or len(attrs.items) != n:
        raise Unsupported("argument attributes")
    return [_sorted_body(d) for d in attrs.items]
