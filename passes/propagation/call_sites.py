"""Each call site sees its own copy of the callee during propagation, as in Shardy.

Shardy inlines every `func.call` as a named computation, so two call sites of one function propagate
independently (docs/propagation.md §7.6). shardc clones a callee for every call site but the first
and marks each clone with `shardc.call_site_copy_of`. The export decides what stays: `annotate` (the
`propagate` contract: every input func keeps its ops, new funcs may be added) keeps a copy per
distinct layout, as Shardy's outlining does: a clone whose exported layout equals its original's (or
an earlier kept clone's) is dropped and its calls point there; `pin` (what XLA compiles) keeps every
clone, so every call site runs the layout propagation chose for it.
"""

from __future__ import annotations

from shardc.dialect.data_flow import CALL
from shardc.dialect.ir import (
    FuncOp,
    Module,
    Operation,
    callee_name,
    func_body,
    symbol_name,
    symbol_ref,
)

MARK = "shardc.call_site_copy_of"


def split_call_sites(
    module: Module, ops: list[Operation] | None = None, calls: list[Operation] | None = None
) -> int:
    """Give every call site but the first of each callee a private, marked clone of it;
    returns how many clones were made (`ops`: `list(module.walk())`, when the caller has it;
    `calls`, when given, gets every `func.call` of the module after the split)."""
    funcs = module.funcs
    seen: set[str] = set()
    made = 0
    pending = _calls_callees_first(
        [op for op in (module.walk() if ops is None else ops) if op.name == CALL]
    )
    if calls is not None:
        calls.extend(pending)
    calls_in: dict[str, bool] = {}  # callee -> whether it calls (its clones' calls are split)
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
        has_calls = calls_in.get(name)
        if has_calls is None:
            has_calls = calls_in[name] = any(op.name == CALL for op in func.walk())
        if has_calls:
            inner = [op for op in clone.walk() if op.name == CALL]
            pending.extend(inner)
            if calls is not None:
                calls.extend(inner)
    return made


def _calls_callees_first(calls: list[Operation]) -> list[Operation]:
    """`calls` (in walk order) with the calls of each func before those of its callers, as
    Shardy's call-graph flattening meets them: the first call of a callee met keeps it, later
    ones get copies."""
    by_func: dict[str, list[Operation]] = {}
    for call in calls:
        func = _enclosing_func(call)
        by_func.setdefault(symbol_name(func) if func is not None else "", []).append(call)
    if len(by_func) < 2:
        return calls
    callees = {name: [callee_name(c) for c in cs] for name, cs in by_func.items()}
    return [call for name in call_graph_post_order(callees) for call in by_func.get(name, ())]


def call_graph_post_order(calls: dict[str, list[str]]) -> list[str]:
    """The funcs of `calls` (func -> the callees of its calls, in call order) in post-order of
    the call graph, depth first from the funcs in `calls`' order: every callee before its
    callers, in the order Shardy's call-graph walks meet them."""
    post: list[str] = []
    seen: set[str] = set()
    for root in calls:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(calls[root]))]
        while stack:
            name, pending = stack[-1]
            for callee in pending:
                if callee in calls and callee not in seen:
                    seen.add(callee)
                    stack.append((callee, iter(calls[callee])))
                    break
            else:
                stack.pop()
                post.append(name)
    return post


def _enclosing_func(op: Operation) -> Operation | None:
    cur = op.parent_op
    while cur is not None and cur.name != "func.func":
        cur = cur.parent_op
    return cur


def _copies(module: Module) -> dict[str, str]:
    out = {}
    for op in module.body.ops:
        if op.name == "func.func" and MARK in op.attributes:
            out[symbol_name(op)] = str(op.attributes[MARK]).strip('"')
    return out


def keep_call_sites(module: Module) -> None:
    """Keep the copies as ordinary private functions (drop the marks)."""
    for op in module.body.ops:
        if op.name == "func.func":
            op.attributes.pop(MARK)


def dedupe_call_sites(module: Module) -> int:
    """Keep one func per distinct layout of each callee: the input's own func where it has
    that layout, else the first copy; calls of the others point there. Returns copies kept.

    Run on exported shardings (closed, no priorities), so two layouts that XLA reads the same
    way count as one. A caller's layout names its callees by their layout class, so nested
    copies merge level by level.
    """
    copies = _copies(module)
    if not copies:
        return 0
    funcs = module.funcs

    def root(name: str) -> str:
        while name in copies:
            name = copies[name]
        return name

    # a func's layout names its callees by their layout class, so callees are classed first;
    # a func that is no copy and has none is a class of its own (its layout is not needed)
    copied = set(copies) | {root(name) for name in copies}
    klass: dict[str, int] = {}
    classes: dict[tuple[object, ...], int] = {}
    for name in _callees_first(module):
        key: tuple[object, ...]
        if name in copied:
            key = (root(name), _layout(funcs[name], klass))
        else:
            key = (name,)
        klass[name] = classes.setdefault(key, len(classes))
    # each class keeps one func: the input's own where it is in the class, else the first copy
    keeper: dict[int, str] = {}
    for name in funcs:
        k = klass[name]
        if k not in keeper or (keeper[k] in copies and name not in copies):
            keeper[k] = name
    target = {name: keeper[klass[name]] for name in funcs if keeper[klass[name]] != name}
    for op in module.walk():
        if op.name == CALL and callee_name(op) in target:
            op.properties["callee"] = symbol_ref(target[callee_name(op)])
    module.body.ops = [
        op for op in module.body.ops if not (op.name == "func.func" and symbol_name(op) in target)
    ]
    keep_call_sites(module)
    return len(copies) - len(target)


def _callees_first(module: Module) -> list[str]:
    """Func names, every callee before its callers (call graphs are acyclic: verified)."""
    funcs = module.funcs
    order: list[str] = []
    state: dict[str, int] = {}  # 1: visiting, 2: done
    for start in funcs:
        if state.get(start):
            continue
        stack: list[tuple[str, list[str]]] = [(start, _called(funcs[start]))]
        state[start] = 1
        while stack:
            name, todo = stack[-1]
            while todo and (todo[-1] not in funcs or state.get(todo[-1])):
                todo.pop()
            if todo:
                nxt = todo.pop()
                state[nxt] = 1
                stack.append((nxt, _called(funcs[nxt])))
                continue
            stack.pop()
            state[name] = 2
            order.append(name)
    return order


def _called(func: Operation) -> list[str]:
    return [callee_name(op) for op in func.walk() if op.name == CALL]


def _layout(func: Operation, klass: dict[str, int]) -> tuple[object, ...]:
    """Everything of `func` that differs between two call-site copies: shardings of its
    arguments, results, op results and block arguments, op properties, and the layout classes
    (`klass`) of the funcs it calls.

    Shardings are compared as values (frozen, hashable) and attribute dictionaries by their
    text: no string is built for what was not changed since parsing."""
    out: list[object] = []
    body = func_body(func)
    if body is not None:
        out.append(tuple([a.sharding for a in body.args]))
    if isinstance(func, FuncOp):
        out.append(tuple(func.result_shardings))
    append = out.append
    for op in func.walk():
        if op is func:
            continue
        name = op.name
        props = klass.get(callee_name(op)) if name == CALL else op.properties.body()
        args = (
            tuple([a.sharding for r in op.regions for b in r.blocks for a in b.args])
            if op.regions
            else ()
        )
        results = tuple([r.sharding for r in op.results])
        append((name, props, op.attributes.body(), results, args))
    return tuple(out)
