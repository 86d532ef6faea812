"""The sdy attributes shardc interprets, between their MLIR text and shardc's IR.

On import (`absorb_sharding_attrs`), each is parsed once into the frozen objects of
`shardings.py`: a func's argument and result shardings onto its values, an op's `sdy.sharding`
onto its results, the shardings of sharding ops, meshes and manual computations into their
properties (see `op_views.py` for where each one lives). On print, the values' shardings go back
into the attribute text every printer writes (`result_sharding_attrs`, `func_properties`).
"""

from __future__ import annotations

from ..errors import ParseError, count_mismatch
from ..ir import AttrDict, AttrList, FuncOp, Module, Operation, func_num_results, parse_dict_list
from ..op_views import SDY_COLLECTIVES
from ..sharding_syntax import (
    parse_manual_axes,
    parse_mesh,
    parse_sharding_per_value,
    parse_tensor_sharding,
)
from ..shardings import ShardingPerValue, TensorSharding
from ..types import TensorType


def result_sharding_attrs(op: Operation) -> str:
    """The op's attributes, with `sdy.sharding` rebuilt from its results' shardings."""
    body = op.attributes.body() if op.attributes else ""
    ref = None
    for r in op.results:
        if r.sharding is not None:
            ref = r.sharding
            break
    if ref is None or op.name == "func.func":
        return body
    full = tuple(
        r.sharding if r.sharding is not None else TensorSharding.open(ref.mesh, r.type.rank)
        if isinstance(r.type, TensorType) else TensorSharding.open(ref.mesh, 0)
        for r in op.results
    )
    entry = f"sdy.sharding = {ShardingPerValue(full)}"
    return f"{body}, {entry}" if body else entry




def func_properties(func: FuncOp) -> AttrDict:
    """A func's properties as printed: its argument and result shardings written into
    `arg_attrs` / `res_attrs` (the func itself keeps them on its values and `result_shardings`)."""
    args = func.regions[0].entry.args if func.regions and func.regions[0].blocks else []
    arg_shardings = [a.sharding for a in args]
    res_shardings = func.result_shardings
    if all(s is None for s in arg_shardings) and all(s is None for s in res_shardings):
        return func.properties
    props = func.properties.copy()
    for key, shardings in (("arg_attrs", arg_shardings), ("res_attrs", res_shardings)):
        if all(s is None for s in shardings):
            continue
        raw = props.get(key)
        attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
        n = len(shardings) if key == "arg_attrs" else func_num_results(func)
        if attrs is None:
            attrs = AttrList([AttrDict() for _ in range(n)])
        for s, d in zip(shardings, attrs.items, strict=False):
            if s is not None:
                d["sdy.sharding"] = s
        props[key] = attrs
    return props


def _interpret_manual(op: Operation) -> None:
    props = op.properties
    for key in ("in_shardings", "out_shardings"):
        raw = props.get(key)
        if isinstance(raw, str):
            props[key] = parse_sharding_per_value(raw)
    raw = props.get("manual_axes")
    if isinstance(raw, str):
        props["manual_axes"] = parse_manual_axes(raw)


def _interpret_sharding_prop(op: Operation) -> None:
    raw = op.properties.get("sharding")
    if isinstance(raw, str):
        op.properties["sharding"] = parse_tensor_sharding(raw)


def _interpret_out_sharding(op: Operation) -> None:
    raw = op.properties.get("out_sharding")
    if isinstance(raw, str):
        op.properties["out_sharding"] = parse_tensor_sharding(raw)


def _interpret_mesh(op: Operation) -> None:
    raw = op.properties.get("mesh")
    if isinstance(raw, str):
        op.properties["mesh"] = parse_mesh(raw)


def _interpret_func(func: Operation) -> None:
    """Argument shardings onto the entry block's arguments, result shardings into the FuncOp."""
    assert isinstance(func, FuncOp)
    for key in ("arg_attrs", "res_attrs"):
        raw = func.properties.get(key)
        if raw is None or "sdy.sharding" not in str(raw):
            continue
        attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
        shardings = []
        for d in attrs.items:
            s = d.pop("sdy.sharding")
            shardings.append(parse_tensor_sharding(str(s)) if s is not None else None)
        if key == "arg_attrs":
            if func.regions and func.regions[0].blocks:
                for a, s in zip(func.regions[0].entry.args, shardings, strict=True):
                    a.sharding = s
        else:
            func.result_shardings = shardings
        if all(not d for d in attrs.items):
            func.properties.pop(key)
        else:
            func.properties[key] = attrs


# the sdy attributes shardc interprets, by op: parsed once, at import, into shardings.py objects
INTERPRETED_PROPERTIES = {
    "func.func": _interpret_func,
    "sdy.mesh": _interpret_mesh,
    "sdy.sharding_constraint": _interpret_sharding_prop,
    "sdy.reshard": _interpret_sharding_prop,
    "sdy.manual_computation": _interpret_manual,
    "sdy.named_computation": _interpret_manual,  # (its in/out shardings; it has no manual axes)
    **{name: _interpret_out_sharding for name in SDY_COLLECTIVES},
}


def absorb_sharding_attrs(module: Module) -> None:
    """The import's interpretation step: every sdy attribute shardc reads is parsed once into
    the frozen objects of `shardings.py` (see `op_views.py` for where each one lives); an op's
    `sdy.sharding` moves onto the values it describes. Other attributes stay text."""
    for op in module.walk():
        absorb_op(op)


def absorb_op(op: Operation) -> None:
    """`absorb_sharding_attrs` on one op."""
    step = INTERPRETED_PROPERTIES.get(op.name)
    if step is not None:
        step(op)
        if op.name == "func.func":
            return
    if not op.results:
        # a zero-result op (a side-effecting callback) keeps its one sharding as written:
        # it says which device runs the op, and XLA reads it there
        return
    raw = op.attributes.pop("sdy.sharding")  # a substring test while the text is raw
    if raw is None:
        return
    per_value = parse_sharding_per_value(str(raw))
    if len(per_value.shardings) != len(op.results):
        raise count_mismatch(
            f"'{op.name}' op sdy.sharding", len(per_value.shardings), "shardings",
            len(op.results), "results", cls=ParseError,
        )
    for r, s in zip(op.results, per_value.shardings, strict=True):
        r.sharding = s
