"""Value names as MLIR's printer gives them (`%arg0`, `%3`, `%3#1`, `%cst_0`, `%c`, `%iterArg`),
so that messages, listings and explanations name values exactly as the printed module does."""

from __future__ import annotations

from .ir import Block, Module, Operation, func_body
from .types import TensorType

_CONSTANTS = frozenset({"stablehlo.constant", "sdy.constant"})

# the unit attribute of a constant's per-use copy (passes/import_steps/constants.py): the copy
# is folded into its original (the nearest op before it without the mark) before anything is
# printed, so its results are named as the original's and number nothing
SPLIT_COPY = "shardc.split_copy"


class _Scope:
    """MLIR's SSA numbering state; a nested region starts from a copy and leaves it unchanged."""

    __slots__ = ("next_value", "next_arg", "next_conflict", "used")

    def __init__(self) -> None:
        self.next_value = 0
        self.next_arg = 0
        self.next_conflict = 0
        self.used: set[str] = set()

    def copy(self) -> _Scope:
        s = _Scope()
        s.next_value, s.next_arg, s.next_conflict = (
            self.next_value,
            self.next_arg,
            self.next_conflict,
        )
        s.used = set(self.used)
        return s

    def unique(self, hint: str) -> str:
        name = hint
        while name in self.used:
            name = f"{hint}_{self.next_conflict}"
            self.next_conflict += 1
        self.used.add(name)
        return "%" + name


def value_names(module: Module) -> dict[int, str]:
    """`id(value) -> "%3"` for every value of every func, in program order."""
    names: dict[int, str] = {}
    for func in module.funcs.values():
        names.update(func_value_names(func))
    return names


def func_value_names(func: Operation) -> dict[int, str]:
    """`id(value) -> "%3"` for the values of one `func.func` (each func numbers from zero)."""
    names: dict[int, str] = {}
    _name_func(func, names)
    return names


def _name_func(func: Operation, names: dict[int, str]) -> None:
    body = func_body(func)
    if body is None:
        return
    scope = _Scope()
    for a in body.args:
        names[id(a)] = scope.unique(f"arg{scope.next_arg}")
        scope.next_arg += 1
    _name_block(body, scope, names, args_named=True)


def _name_block(block: Block, scope: _Scope, names: dict[int, str], args_named: bool) -> None:
    # a worklist of (block, its scope, args named): nesting depth is the input's to choose;
    # each region gets a copy of the scope as it stood at its op, so the order does not matter
    work = [(block, scope, args_named)]
    while work:
        block, scope, args_named = work.pop()
        if not args_named:
            for a in block.args:
                names[id(a)] = scope.unique(f"arg{scope.next_arg}")
                scope.next_arg += 1
        original: Operation | None = None
        for op in block.ops:
            if SPLIT_COPY in op.attributes and original is not None:
                for r, o in zip(op.results, original.results, strict=False):
                    if id(o) in names:
                        names[id(r)] = names[id(o)]
                continue
            original = op
            if op.name in _CONSTANTS and len(op.results) == 1:
                t = op.results[0].type
                integral = isinstance(t, TensorType) and t.element_type[:1] in ("i", "u")
                names[id(op.results[0])] = scope.unique("c" if integral else "cst")
            elif op.results:
                n = str(scope.next_value)
                scope.next_value += 1
                scope.used.add(n)
                if len(op.results) == 1:
                    names[id(op.results[0])] = "%" + n
                else:
                    for r in op.results:
                        names[id(r)] = f"%{n}#{r.index}"
            for region in op.regions:
                inner = scope.copy()
                for b in reversed(region.blocks):  # popped in order: they share `inner`
                    if op.name == "stablehlo.while" and b is region.blocks[0]:
                        for a in b.args:
                            names[id(a)] = inner.unique("iterArg")
                        work.append((b, inner, True))
                    else:
                        work.append((b, inner, False))
