"""Each call site sees its own copy of the callee during propagation, as in Shardy.

Shardy inlines every `func.call` as a named computation, so two call sites of one function
propagate independently (reference G32). shardc clones a callee for every call site but the first
and marks each clone with `shardc.call_site_copy_of`. The export decides what stays: `annotate`
(the `propagate` contract: the input's own ops) points the calls back at the original, which keeps
its first call site's shardings, and drops the clones; `pin` (what XLA compiles) keeps them, so
every call site runs the layout propagation chose for it.
"""

from __future__ import annotations

from shardc.dialect.ir import Module, callee_name, symbol_name, symbol_ref

MARK = "shardc.call_site_copy_of"


def split_call_sites(module: Module) -> int:
    """Give every call site but the first of each callee a private, marked clone of it."""
    funcs = module.funcs
    seen: set[str] = set()
    made = 0
    pending = [op for op in module.walk() if op.name == "func.call"]
    while pending:
        call = pending.pop(0)
        name = callee_name(call)
        func = funcs.get(name)
        if func is None or not func.regions or not func.regions[0].blocks:
            continue
        if name not in seen:
            seen.add(name)
            continue
        k = 0
        while f"{name}_{k}" in funcs:
            k += 1
        new_name = f"{name}_{k}"
        clone = func.clone()
        clone.properties["sym_name"] = f'"{new_name}"'
        clone.properties["sym_visibility"] = '"private"'
        clone.attributes[MARK] = f'"{name}"'
        module.body.insert(module.body.ops.index(func) + 1, clone)
        funcs[new_name] = clone
        call.properties["callee"] = symbol_ref(new_name)
        made += 1
        pending.extend(op for op in clone.walk() if op.name == "func.call")
    return made


def _copies(module: Module) -> dict[str, str]:
    out = {}
    for op in module.body.ops:
        if op.name == "func.func" and MARK in op.attributes:
            out[symbol_name(op)] = str(op.attributes[MARK]).strip('"')
    return out


def merge_call_sites(module: Module) -> None:
    """Point calls of the copies back at their originals and drop the copies."""
    copies = _copies(module)
    if not copies:
        return
    for op in module.walk():
        if op.name == "func.call":
            name = callee_name(op)
            while name in copies:
                name = copies[name]
            op.properties["callee"] = symbol_ref(name)
    module.body.ops = [
        op for op in module.body.ops if not (op.name == "func.func" and symbol_name(op) in copies)
    ]


def keep_call_sites(module: Module) -> None:
    """Keep the copies as ordinary private functions (drop the marks)."""
    for op in module.body.ops:
        if op.name == "func.func":
            op.attributes.pop(MARK)
