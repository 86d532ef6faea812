"""Propagation as text: `explain` lines from recorded origins and per-round dumps.

Values are named as MLIR's printer names them in the exported module (`%arg0`, `%3`, `%3#1`,
`%cst_0`, `%iterArg`), with the op and its source location, so a line can be matched with the
output by eye:

    %2 = stablehlo.dot_general (f.py:12:3) dim 0 {"x"} <- %arg0 (annotation, p0, op-priority 2)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from shardc.dialect.axis_types import explicit_axes
from shardc.dialect.ir import BlockArgument, Module, Operation, OpResult
from shardc.dialect.op_views import Func
from shardc.dialect.value_names import SPLIT_COPY, func_value_names

from .origins import Origin, OriginRecorder
from .units import as_value


class Namer:
    """Names holders for humans: `%3 = stablehlo.add (f.py:3:8)`, `%arg0`, `@main result 0`."""

    def __init__(self, module: Module):
        self.module = module
        self.names: dict[int, str] = {}
        self.funcs: list[tuple[str, list[int]]] = []  # per func, its values in program order
        # every func numbers its values from zero: a private func's values say whose they are
        self.func_of: dict[int, str] = {}
        for fname, func in module.funcs.items():
            names = func_value_names(func)
            self.names.update(names)
            self.funcs.append((fname, list(names)))
            if Func(func).is_private:
                self.func_of.update(dict.fromkeys(names, fname))

    def short(self, holder: Any) -> str:
        holder = as_value(holder)
        name = self.names.get(id(holder))
        if name is None:
            return str(getattr(holder, "name", "?"))
        fname = self.func_of.get(id(holder))
        return f"{name} in @{fname}" if fname is not None else name

    def long(self, holder: Any) -> str:
        holder = as_value(holder)
        name = self.names.get(id(holder))
        if name is None:
            return self.short(holder)
        fname = self.func_of.get(id(holder))
        where = f" in @{fname}" if fname is not None else ""
        if isinstance(holder, OpResult):
            return f"{name} = {holder.owner.name}{self.loc(holder.owner)}{where}"
        region = holder.block.parent if isinstance(holder, BlockArgument) else None
        owner = region.parent if region is not None else None
        if region is not None and owner is not None and owner.name != "func.func":
            r = owner.regions.index(region)
            return f"{name} (region {r} arg of {owner.name}{self.loc(owner)}){where}"
        return name + where

    def loc(self, op: Operation | None) -> str:
        where = self.module.resolve_loc(op.loc) if op is not None else None
        return f" ({where})" if where else ""

    def in_program_order(self, holders: dict[int, Any]) -> Iterator[Any]:
        """The named values among `holders` in program order, each func's results after its
        values, then any others."""
        results: dict[str, list[Any]] = {}
        others: list[Any] = []
        # one use's copy of a constant is folded into its original: not a value of the output
        holders = {k: h for k, h in holders.items() if not is_split_copy(h)}
        for key, h in holders.items():
            if key not in self.names:
                fname = str(getattr(h, "name", "")).partition(" result ")[0].lstrip("@")
                (results.setdefault(fname, []) if fname in self.module.funcs else others).append(h)
        for fname, keys in self.funcs:
            for key in keys:
                if key in holders:
                    yield holders[key]
            yield from results.get(fname, ())
        yield from others


def is_split_copy(holder: Any) -> bool:
    """Whether `holder` is a result of a constant's per-use copy (`split-constants`)."""
    v = as_value(holder)
    return isinstance(v, OpResult) and SPLIT_COPY in v.owner.attributes


def _axes(o: Origin) -> str:
    return "{" + ", ".join(str(a) for a in o.axes) + "}"


def _round(r: str) -> str:
    return r.replace(" op-priority", ", op-priority")


def explain_lines(module: Module, recorder: OriginRecorder) -> list[str]:
    """One line per dim that propagation decided: its axes, the annotation they trace back to,
    the round, and the op that wrote them when that is not the value's own op."""
    namer = Namer(module)
    explicit = explicit_axes(module)
    out: list[str] = []
    for h in namer.in_program_order(recorder.holders):
        dims = recorder.origins.get(id(h), {})
        for d in sorted(dims):
            o = dims[d]
            if o.is_annotation:
                continue
            root = "?" if o.root is None else namer.short(o.root)
            line = f"{namer.long(h)} dim {d} {_axes(o)} <- {root} (annotation, {_round(o.round)})"
            if explicit and o.root is not None and {a.name for a in o.axes} <= explicit:
                line = f"{namer.long(h)} dim {d} {_axes(o)} <- {_type_source(namer, o.root)}"
            via = getattr(o.via, "op", None)
            own = h.owner if isinstance(h, OpResult) else None
            if via is None or via is not own:
                line += f" via {o.via.op_name}{namer.loc(via)}"
            out.append(line)
    return out


def type_setter(root: Any) -> Operation | None:
    """The op whose result type set an Explicit axis: JAX writes a value's type as the
    constraint `root` after the op that makes it (None: `root` is an argument)."""
    value = as_value(root)
    setter = value.owner if isinstance(value, OpResult) else None
    if setter is not None and setter.name == "sdy.sharding_constraint" and setter.operands:
        source = setter.operands[0]
        if isinstance(source, OpResult):
            setter = source.owner
    return setter


def _type_source(namer: Namer, root: Any) -> str:
    """Where an Explicit axis comes from: the type of a value, which JAX wrote as the
    constraint `root` after the op that set it (named with its source line)."""
    setter = type_setter(root)
    if setter is None:
        return f"the type of {namer.short(root)} (Explicit axes)"
    return f"the type {setter.name}{namer.loc(setter)} gave its result (Explicit axes)"


def dump_lines(namer: Namer, holders: list[Any], title: str) -> list[str]:
    """Every sharding after one round, one value a line (`PropagationOptions.dump_rounds`)."""
    out = [f"after {title}:"]
    seen: set[int] = set()
    for h in namer.in_program_order({id(as_value(h)): h for h in holders}):
        if id(h) in seen or h.sharding is None:
            continue
        seen.add(id(h))
        out.append(f"  {namer.long(h)}: {h.sharding.body()}")
    return out
