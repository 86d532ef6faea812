"""Each call site sees its own copy of the callee during propagation, as in Shardy.

Shardy inlines every `func.call` as a named computation, so two call sites of one function
propagate independently (reference G32). shardc writes its answer on the input's own ops, so it
clones a callee per extra call site for the duration of the propagation, then removes the clones:
the original callee keeps the shardings of its first call site, and every call result keeps its
own.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardc.dialect.ir import Module, Operation, callee_name, symbol_name, symbol_ref


@dataclass(frozen=True)
class CallSiteCopy:
    call: Operation
    original: str
    clone: Operation


def split_call_sites(module: Module) -> list[CallSiteCopy]:
    """Give every call site but the first of each callee a private clone of it."""
    funcs = module.funcs
    taken = set(funcs)
    copies: list[CallSiteCopy] = []
    seen: set[str] = set()
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
        clone = func.clone()
        k = 0
        while f"{name}__site{k}" in taken:
            k += 1
        new_name = f"{name}__site{k}"
        taken.add(new_name)
        clone.properties["sym_name"] = f'"{new_name}"'
        body = module.body
        body.insert(body.ops.index(func) + 1, clone)
        funcs[new_name] = clone
        call.properties["callee"] = symbol_ref(new_name)
        copies.append(CallSiteCopy(call, name, clone))
        pending.extend(op for op in clone.walk() if op.name == "func.call")
    return copies


def merge_call_sites(module: Module, copies: list[CallSiteCopy]) -> None:
    """Point the calls back at their original callees and drop the clones."""
    for copy in reversed(copies):
        copy.call.properties["callee"] = symbol_ref(copy.original)
        module.body.ops.remove(copy.clone)
        copy.clone.parent = None
    assert all(symbol_name(op) for op in module.body.ops if op.name == "func.func")
