"""Text forms of op sharding rules: `#sdy.op_sharding_rule<...>` (parse + print) and the
einsum-like custom-rule syntax `... i j, ... j k -> ... i k` (one lark grammar, `rule.lark`).

Parses are cached by text: a module repeats the same few rule attributes many times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedInput

from ..errors import ParseError, ShardcError, syntax_error, unknown_name
from .model import KIND_CLAUSES, FactorKind, OpShardingRule, factor_symbol

_KIND_OF_CLAUSE = dict(KIND_CLAUSES)
_SYMBOL = re.compile(r"[i-y]|z(?:_[1-9][0-9]*)?")


@cache
def _parser(start: str) -> Lark:
    grammar = resources.files(__package__).joinpath("rule.lark").read_text()
    return Lark(grammar, parser="lalr", start=start, maybe_placeholders=True)


# ---------------------------------------------------------------------------------------------
# factor symbols


def symbol_index(symbol: str) -> int:
    if symbol.startswith("z_"):
        return 17 + int(symbol[2:])
    return ord(symbol) - ord("i")


def _split_symbols(text: str) -> list[int]:
    return [symbol_index(m.group(0)) for m in _SYMBOL.finditer(text)]


# ---------------------------------------------------------------------------------------------
# parsing #sdy.op_sharding_rule


def _err(text: str, what: str) -> ParseError:
    return ParseError(f"invalid op sharding rule {text!r}: {what}")


@lru_cache(maxsize=4096)
def parse_rule(text: str) -> OpShardingRule:
    """Parse `#sdy.op_sharding_rule<...>`; checks what Shardy's parser and verifier check."""
    try:
        tree: Any = _parser("rule").parse(text.strip())
    except UnexpectedInput as e:
        col = getattr(e, "column", "?")
        raise _err(text, f"unexpected input at column {col}") from None
    except LarkError as e:
        raise _err(text, str(e).splitlines()[0]) from None
    operand_t, result_t, sizes_t, *rest = tree.children
    custom = rest[-1] is not None
    clauses = [c for c in rest[:-1] if c is not None]

    def maps(t: Any) -> tuple[tuple[tuple[int, ...], ...], ...]:
        out = []
        for tmap in t.children:
            if tmap is None:
                continue
            dims = [c for c in tmap.children if c is not None]
            out.append(tuple(tuple(_split_symbols(str(d))) for d in dims))
        return tuple(out)

    operand_dims = maps(operand_t)
    result_dims = maps(result_t)
    sizes: list[int] = []
    if sizes_t is not None:
        for expected, size in enumerate(sizes_t.children):
            sym, value = str(size.children[0]), int(size.children[1])
            if _split_symbols(sym) != [expected]:
                raise _err(
                    text,
                    "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. "
                    f"{{i=#, j=#, ...}}). Expecting factor index symbol "
                    f"'{factor_symbol(expected)}', received: '{sym}'",
                )
            sizes.append(value)
    kinds = [FactorKind.PASS_THROUGH] * len(sizes)
    blocked: set[int] = set()
    for clause in clauses:
        name = str(clause.children[0])
        members = [i for tok in clause.children[1:] for i in _split_symbols(str(tok))]
        for f in members:
            if f >= len(sizes):
                raise _err(text, f"{name} names factor '{factor_symbol(f)}' that has no size")
            if name == "blocked_propagation":
                blocked.add(f)
                continue
            if kinds[f] is not FactorKind.PASS_THROUGH:
                raise _err(
                    text,
                    "a factor can only be in one of the reduction, need replication, or "
                    "permutation factor sets",
                )
            kinds[f] = _KIND_OF_CLAUSE[name]
    rule = OpShardingRule(
        tuple(sizes), operand_dims, result_dims, tuple(kinds), frozenset(blocked), custom
    )
    problem = check_rule(rule)
    if problem:
        raise _err(text, problem)
    return rule


def check_rule(rule: OpShardingRule, shapes: Iterable[Sequence[int]] | None = None) -> str | None:
    """What is structurally wrong with `rule` (Shardy's verifier checks), or None."""
    used: set[int] = set()
    for side, maps in (("operand", rule.operand_dims), ("result", rule.result_dims)):
        for m in maps:
            seen: set[int] = set()
            for dim in m:
                for f in dim:
                    if f >= rule.num_factors:
                        return f"{side} uses factor '{factor_symbol(f)}' that has no size"
                    if f in seen:
                        return f"{side} - cannot reuse factors for the same tensor value"
                    if len(dim) > 1 and rule.factor_sizes[f] == 1:
                        return (
                            f"{side} - dim mapping can't have a factor of size 1 if there are "
                            "multiple factors"
                        )
                    if side == "result" and rule.kinds[f] is FactorKind.REDUCTION:
                        return "reduction factor cannot be in result mappings"
                    seen.add(f)
            used |= seen
    for f, size in enumerate(rule.factor_sizes):
        if f not in used:
            return f"has factor {factor_symbol(f)}={size} that isn't used in operand and result mappings"
    if shapes is not None:
        all_maps = list(rule.operand_dims) + list(rule.result_dims)
        for n, (m, shape) in enumerate(zip(all_maps, list(shapes), strict=False)):
            if len(m) != len(shape):
                return f"tensor {n} - mapping rank must match: {len(m)} != {len(shape)}"
    return None


# ---------------------------------------------------------------------------------------------
# the einsum-like custom rule syntax


@lru_cache(maxsize=1024)
def _parse_einsum(spec: str) -> tuple[tuple[tuple[tuple[str, ...], ...], ...], ...]:
    """`... i j, ... j k -> ... i k` as (operands, results) of tensors of dims of factor names.

    `...` is the name `...`; a size-1 dim written `1` is the name `1`.
    """
    try:
        tree: Any = _parser("einsum").parse(spec)
    except UnexpectedInput as e:
        raise syntax_error(
            "sharding rule spec", spec, getattr(e, "column", 0) or 0,
            hint="write it like '... i j, ... j k -> ... i k'",
        ) from None
    except LarkError as e:
        raise ParseError(f"invalid sharding rule spec {spec!r}: {e}") from None
    sides = []
    for terms in tree.children:
        tensors = []
        for term in terms.children:
            dims: list[tuple[str, ...]] = []
            for d in term.children:
                if d.data == "ellipsis":
                    dims.append(("...",))
                elif d.data == "unit":
                    if str(d.children[0]) != "1":
                        raise ParseError(
                            f"invalid sharding rule spec {spec!r}: a number dim must be 1, "
                            f"got {d.children[0]}"
                        )
                    dims.append(("1",))
                else:
                    dims.append(tuple(str(t) for t in d.children if isinstance(t, Token)))
            if sum(1 for x in dims if x == ("...",)) > 1 or (
                ("...",) in dims and dims[0] != ("...",)
            ):
                raise ParseError(
                    f"invalid sharding rule spec {spec!r}: '...' may appear once per tensor, first"
                )
            tensors.append(tuple(dims))
        sides.append(tuple(tensors))
    return tuple(sides)


def rule_from_einsum(
    spec: str,
    operand_shapes: Sequence[Sequence[int]],
    result_shapes: Sequence[Sequence[int]],
    *,
    reduction: Iterable[str] = (),
    need_replication: Iterable[str] = (),
    permutation: Iterable[str] = (),
    blocked: Iterable[str] = (),
    factor_sizes: Mapping[str, int] | None = None,
) -> OpShardingRule:
    """Turn `... i j, ... j k -> ... i k` into a custom `OpShardingRule` for the given shapes.

    Factor order: the `...` (batch) factors first, then named factors by first appearance. The
    `...` of every tensor is right-aligned against the longest one. A compound dim `(a b)` needs
    the size of all but one of its factors in `factor_sizes`. Raises `ShardcError` naming the spec.
    """
    operands, results = _parse_einsum(spec)
    shapes = [tuple(s) for s in operand_shapes] + [tuple(s) for s in result_shapes]
    tensors = list(operands) + list(results)
    if len(operands) != len(operand_shapes) or len(results) != len(result_shapes):
        raise ShardcError(
            f"sharding rule spec {spec!r} has {len(operands)} operands and {len(results)} "
            f"results, but the op has {len(operand_shapes)} and {len(result_shapes)}"
        )
    # how many dims each `...` stands for
    n_ellipsis = []
    for n, (dims, shape) in enumerate(zip(tensors, shapes, strict=True)):
        explicit = sum(1 for d in dims if d != ("...",))
        if ("...",) in dims:
            if len(shape) < explicit:
                raise ShardcError(
                    f"sharding rule spec {spec!r}: tensor {n} of shape {list(shape)} has rank "
                    f"{len(shape)}, fewer than its {explicit} named dims"
                )
            n_ellipsis.append(len(shape) - explicit)
        else:
            if len(shape) != explicit:
                raise ShardcError(
                    f"sharding rule spec {spec!r}: tensor {n} of shape {list(shape)} has rank "
                    f"{len(shape)}, but the spec names {explicit} dims"
                )
            n_ellipsis.append(0)
    batch = max(n_ellipsis, default=0)
    names: dict[str, int] = {f"...{b}": b for b in range(batch)}
    sizes: dict[str, int] = dict(factor_sizes or {})
    mapped: list[list[list[str]]] = []
    unit = 0
    for dims, ne in zip(tensors, n_ellipsis, strict=True):
        m: list[list[str]] = []
        pos = 0
        for d in dims:
            if d == ("...",):
                for e in range(ne):
                    m.append([f"...{batch - ne + e}"])
                pos += ne
                continue
            if d == ("1",):
                m.append([f"1#{unit}"])
                sizes[f"1#{unit}"] = 1
                unit += 1
            else:
                m.append(list(d))
            pos += 1
        mapped.append(m)
    for m in mapped:
        for dim in m:
            for name in dim:
                names.setdefault(name, len(names))
    # sizes: plain dims give theirs; compound dims infer at most one unknown factor
    for n, (m, shape) in enumerate(zip(mapped, shapes, strict=True)):
        for dim_index, (dim, size) in enumerate(zip(m, shape, strict=True)):
            unknown = [f for f in dim if f not in sizes]
            known = 1
            for f in dim:
                known *= sizes.get(f, 1)
            if len(unknown) > 1:
                raise ShardcError(
                    f"sharding rule spec {spec!r}: dim {dim_index} of tensor {n} is compound "
                    f"({' '.join(dim)}); give the sizes of all but one of its factors "
                    "in factor_sizes"
                )
            if unknown:
                if size % known:
                    raise ShardcError(
                        f"sharding rule spec {spec!r}: dim {dim_index} of tensor {n} has size {size}, "
                        f"not divisible by {known}"
                    )
                sizes[unknown[0]] = size // known
            elif known != size:
                what = " ".join(f.split("#")[0].replace("...", "...") for f in dim)
                raise ShardcError(
                    f"sharding rule spec {spec!r}: factor {what} has size {known}, but dim {dim_index} "
                    f"of tensor {n} (shape {list(shape)}) has size {size}"
                )
    order = sorted(names, key=names.__getitem__)
    kinds = [FactorKind.PASS_THROUGH] * len(order)
    for group, kind in (
        (reduction, FactorKind.REDUCTION),
        (need_replication, FactorKind.NEED_REPLICATION),
        (permutation, FactorKind.PERMUTATION),
    ):
        for name in group:
            if name not in names:
                raise unknown_name(
                    "factor", name, list(names), where=f"sharding rule spec {spec!r}"
                )
            kinds[names[name]] = kind
    blocked_set = set()
    for name in blocked:
        if name not in names:
            raise unknown_name("factor", name, list(names), where=f"sharding rule spec {spec!r}")
        blocked_set.add(names[name])

    def idx(m: list[list[str]]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(names[f] for f in dim) for dim in m)

    rule = OpShardingRule(
        tuple(sizes[n] for n in order),
        tuple(idx(m) for m in mapped[: len(operands)]),
        tuple(idx(m) for m in mapped[len(operands) :]),
        tuple(kinds),
        frozenset(blocked_set),
        True,
    )
    problem = check_rule(rule)
    if problem:
        raise ShardcError(f"sharding rule spec {spec!r}: {problem}")
    return rule


def einsum_rule(
    spec: str,
    *,
    reduction: Iterable[str] = (),
    need_replication: Iterable[str] = (),
    permutation: Iterable[str] = (),
    blocked: Iterable[str] = (),
    factor_sizes: Mapping[str, int] | None = None,
) -> Any:
    """A rule function (op -> `OpShardingRule`) from an einsum-like spec, for `register_rule` or
    `register_custom_call_rule`: `einsum_rule("... i j, ... j k -> ... i k", reduction="j")`.

    A single factor name may be given as a plain string."""
    kinds = {
        "reduction": _names(reduction),
        "need_replication": _names(need_replication),
        "permutation": _names(permutation),
        "blocked": _names(blocked),
    }
    _parse_einsum(spec)  # a bad spec fails here, at registration, not at the first op

    def rule(op: Any) -> OpShardingRule:
        def shape(v: Any) -> tuple[int, ...]:
            return tuple(getattr(v.type, "shape", ()))

        return rule_from_einsum(
            spec,
            [shape(v) for v in op.operands],
            [shape(r) for r in op.results],
            factor_sizes=factor_sizes,
            **kinds,
        )

    rule.__name__ = f"einsum_rule({spec!r})"
    return rule


def _names(names: Iterable[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)
