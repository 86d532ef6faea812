"""The arguments automatic sharding decides, and how they are tied to one another.

Auto chooses the layout of every entry argument that carries no sharding (JAX's lowering with
`in_shardings=None`, an argument a script left unannotated); propagation then lays out the rest
of the program from them, as XLA's own propagation does from jax.jit's `in_shardings`. Arguments
are grouped into classes that get one layout each:

- a state leaf that is both an argument and a result, paired by donation (`tf.aliasing_output`,
  or `jax.buffer_donor` with the first unpaired result of its type) or by the same pytree path
  in the arguments and the results (`params['w']` and `result[0]['w']`), gets one layout in and
  out: a training loop that feeds the results back calls the same program again;
- an optimizer moment whose path ends with a parameter's (`opt_state[1][0].mu['w']` and
  `params['w']`) takes its parameter's layout (the update reads them element by element);
- repeated layers (paths that differ only in an index that takes at least `MIN_REPEATS` values:
  `['layers'][7]['wq']`, `['Block_7']['Dense_0']`) share one decision; an index with fewer
  values names a role (`params[0]`, `params[1]` of a 3-layer MLP) and is kept apart.

Names are JAX's: an argument's location names its path, a result's `jax.result_info` attribute
its own. A class is a `state` (paired with a result), a `param` (an argument of a pytree of
several leaves that nothing returns) or an `input` (the data: what the batch dims split).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from shardc.dialect.ir import Block, Module, Operation, Value, func_body, parse_dict_list
from shardc.dialect.op_views import Func
from shardc.dialect.shardings import TensorSharding
from shardc.dialect.types import TensorType

# an index that takes at least this many values across arguments of one shape is a layer index
MIN_REPEATS = 4

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
_RESULT = re.compile(r"^result(\[\d+\])?")
_TOKEN = re.compile(r"\[[^\]]*\]|\.[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"\d+")


@dataclass
class ArgClass:
    """Arguments that get one layout: their indices in the entry func, the results paired with
    them (argument index -> result index), and their role."""

    name: str
    type: TensorType
    args: list[int]
    results: dict[int, int] = field(default_factory=dict)
    role: str = "param"  # "state", "param" or "input"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape


@dataclass
class Arguments:
    """The entry func's free arguments in classes, and every argument/result pair."""

    func: str
    classes: list[ArgClass]
    pairs: dict[int, int]  # argument index -> result index
    donated: set[int]  # argument indices whose buffers are donated
    names: list[str | None]  # per argument: its path, where the module names it

    def class_of(self, arg: int) -> int | None:
        for k, c in enumerate(self.classes):
            if arg in c.args:
                return k
        return None


def free_arguments(
    module: Module, func_name: str, is_free: Callable[[Value], bool] | None = None
) -> Arguments:
    """The arguments of entry func `func_name` that carry no sharding (or that `is_free`
    says auto decides), in classes."""
    func = module.funcs[func_name]
    body = func_body(func)
    assert body is not None
    names = [argument_name(module, a.loc) for a in body.args]
    results = result_names(func)
    donated, aliasing = _donation(func, len(body.args))
    pairs = _pairs(body, names, results, donated, aliasing)
    free = [
        i
        for i, a in enumerate(body.args)
        if (a.sharding is None if is_free is None else is_free(a))
        and isinstance(a.type, TensorType)
        and a.type.rank > 0
        and all(d > 0 for d in a.type.shape)
    ]
    classes = _classes(body, free, names, pairs)
    return Arguments(func_name, classes, pairs, donated, names)


def argument_name(module: Module, loc: str | None) -> str | None:
    """The pytree path JAX names an argument with (`params['w']`), or None."""
    text = module.resolve_loc(loc)
    if not text or not _NAME.match(text) or ":" in text.split("[", 1)[0]:
        return None
    return text


def result_names(func: Operation) -> list[str | None]:
    """Each result's `jax.result_info` path (`result[0]['w']`), or None."""
    n = Func(func).num_results
    raw = func.properties.get("res_attrs")
    if raw is None:
        return [None] * n
    attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
    out: list[str | None] = []
    for d in list(getattr(attrs, "items", []))[:n]:
        v = d.get("jax.result_info") if hasattr(d, "get") else None
        out.append(str(v).strip('"') if v is not None else None)
    return out + [None] * (n - len(out))


def _donation(func: Operation, n: int) -> tuple[set[int], dict[int, int]]:
    raw = func.properties.get("arg_attrs")
    donated: set[int] = set()
    aliasing: dict[int, int] = {}
    if raw is None:
        return donated, aliasing
    attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
    for i, d in enumerate(list(getattr(attrs, "items", []))[:n]):
        if not hasattr(d, "get"):
            continue
        alias = d.get("tf.aliasing_output")
        if alias is not None:
            m = _NUMBER.search(str(alias))
            if m:
                aliasing[i] = int(m.group(0))
                donated.add(i)
        if "jax.buffer_donor" in str(d):
            donated.add(i)
    return donated, aliasing


def _split(name: str | None, result: bool = False) -> tuple[str, str] | None:
    """(top, rest) of a path: `params['w']` -> ("params", "['w']"); `result[0]['w']` ->
    ("[0]", "['w']")."""
    if name is None:
        return None
    m = (_RESULT if result else _NAME).match(name)
    if m is None:
        return None
    top = m.group(1) or "" if result else m.group(0)
    return top, name[m.end() :]


def _pairs(
    body: Block,
    names: list[str | None],
    results: list[str | None],
    donated: set[int],
    aliasing: dict[int, int],
) -> dict[int, int]:
    """Argument index -> result index of every argument that is also returned."""
    ret = body.terminator
    if ret is None:
        return {}
    types = [str(v.type) for v in ret.operands]
    pairs = {i: j for i, j in aliasing.items() if j < len(types)}
    taken = set(pairs.values())
    res_tokens = {}
    for j, r in enumerate(results):
        s = _split(r, result=True)
        if s is not None and j not in taken and s[1]:
            res_tokens[j] = _tokens((s[0] or "") + s[1])
    for i, a in enumerate(body.args):
        s = _split(names[i])
        if i in pairs or s is None or not s[1]:
            continue
        mine = _tokens(s[1])
        # the result whose path and the argument's agree on the most trailing keys, one of
        # them ending the other (`state[0]['w']` and `result[0][0]['w']`: the argument's
        # position in a tuple of arguments, or the result's in a tuple of results, may lead)
        best: list[int] = []
        best_len = 0
        for j, toks in res_tokens.items():
            if j in taken or types[j] != str(a.type):
                continue
            n = _common_suffix(mine, toks)
            if n < min(len(mine), len(toks)) or n == 0:
                continue
            if n > best_len:
                best, best_len = [j], n
            elif n == best_len:
                best.append(j)
        if len(best) == 1:
            pairs[i] = best[0]
            taken.add(best[0])
    for i in sorted(donated - set(pairs)):
        for j, t in enumerate(types):
            if j not in taken and t == str(body.args[i].type):
                pairs[i] = j
                taken.add(j)
                break
    return pairs


def _common_suffix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _tokens(rest: str) -> list[str]:
    return _TOKEN.findall(rest)


def _layer_key(tokens: list[str], layer_positions: set[int]) -> str:
    """The path with its layer indices written `#`."""
    out = []
    for k, t in enumerate(tokens):
        out.append(_NUMBER.sub("#", t) if k in layer_positions else t)
    return "".join(out)


def _classes(
    body: Block, free: list[int], names: list[str | None], pairs: dict[int, int]
) -> list[ArgClass]:
    """The free arguments grouped (see the module docstring), in argument order."""
    rests: dict[int, str] = {}
    tops: dict[int, str] = {}
    for i in free:
        s = _split(names[i])
        if s is not None:
            tops[i], rests[i] = s
    # optimizer moments: an argument whose path ends with another's takes that one's class
    owner: dict[int, int] = {}
    by_rest = {(rests[i], str(body.args[i].type)): i for i in free if i in rests and rests[i]}
    for i in free:
        r = rests.get(i)
        if not r:
            continue
        toks = _tokens(r)
        for k in range(1, len(toks)):
            j = by_rest.get(("".join(toks[k:]), str(body.args[i].type)))
            if j is not None and j != i:
                owner[i] = j
                break
    roots = [i for i in free if i not in owner]
    key: dict[int, str] = {}
    # repeated layers: positions whose number takes >= MIN_REPEATS values among paths alike
    shapes: dict[tuple[str, str, int], list[int]] = {}
    for i in roots:
        if i in rests:
            shapes.setdefault((str(body.args[i].type), tops[i], len(_tokens(rests[i]))), []).append(i)
    for members in shapes.values():
        paths = {i: _tokens(rests[i]) for i in members}
        layer: set[int] = set()
        width = len(next(iter(paths.values())))
        for pos in range(width):
            skeletons = {_NUMBER.sub("#", paths[i][pos]) for i in members}
            values = {paths[i][pos] for i in members}
            if len(skeletons) == 1 and len(values) >= MIN_REPEATS and "#" in next(iter(skeletons)):
                layer.add(pos)
        for i in members:
            key[i] = tops[i] + _layer_key(paths[i], layer)
    for i in roots:
        if i not in key:
            key[i] = names[i] or f"%arg{i}"
    _structural_ties(body, [i for i in roots if i not in rests], key)
    classes: dict[tuple[str, str], ArgClass] = {}
    for i in roots:
        ck = (key[i], str(body.args[i].type))
        c = classes.get(ck)
        if c is None:
            c = classes[ck] = ArgClass(key[i], body.args[i].type, [])  # type: ignore[arg-type]
        c.args.append(i)
    for i, j in owner.items():
        while j in owner:
            j = owner[j]
        c = classes[(key[j], str(body.args[j].type))]
        c.args.append(i)
    out = sorted(classes.values(), key=lambda c: min(c.args))
    for c in out:
        c.args.sort()
        c.results = {i: pairs[i] for i in c.args if i in pairs}
    _roles(out, tops)
    return out


def _structural_ties(body: Block, unnamed: list[int], key: dict[int, str]) -> None:
    """Unnamed arguments of one type whose readers look alike (op names two levels down) and
    that repeat at least `MIN_REPEATS` times share a key."""
    sig: dict[int, str] = {}
    for i in unnamed:
        a = body.args[i]
        parts = []
        for user, idx in a.uses:
            below = sorted(u.name for r in user.results for u, _ in r.uses)
            parts.append(f"{user.name}#{idx}:{','.join(below)}")
        sig[i] = f"{a.type}|{'|'.join(sorted(parts))}"
    groups: dict[str, list[int]] = {}
    for i, s in sig.items():
        groups.setdefault(s, []).append(i)
    for members in groups.values():
        if len(members) >= MIN_REPEATS:
            for i in members:
                key[i] = f"%arg{members[0]}..."


def _roles(classes: list[ArgClass], tops: dict[int, str]) -> None:
    """`state` for a class with a returned member; of the others, `input` for the data: an
    argument of its own (not a leaf of a pytree of parameters) or, unnamed, one whose leading
    dim is the leading dim most unreturned arguments share."""
    leaves: dict[str, int] = {}
    for t in tops.values():
        leaves[t] = leaves.get(t, 0) + 1
    rest = [c for c in classes if not c.results]
    for c in classes:
        if c.results:
            c.role = "state"
    named = [c for c in rest if c.args[0] in tops]
    if named:
        biggest = max(leaves[tops[c.args[0]]] for c in named)
        for c in named:
            n = leaves[tops[c.args[0]]]
            c.role = "input" if n <= 2 and (n < biggest or len(named) == 1) else "param"
    unnamed = [c for c in rest if c.args[0] not in tops]
    if unnamed:
        lead: dict[int, int] = {}
        for c in unnamed:
            lead[c.shape[0]] = lead.get(c.shape[0], 0) + len(c.args)
        batch = max(sorted(lead), key=lambda d: lead[d])
        for c in unnamed:
            c.role = "input" if c.shape[0] == batch and (lead[batch] > 1 or len(unnamed) == 1) else "param"


def sharding_key(s: TensorSharding | None) -> tuple[tuple[str, ...], ...]:
    """A layout as the axis names per dim (for caches and reports)."""
    if s is None:
        return ()
    return tuple(tuple(str(a) for a in d.axes) for d in s.dims)
