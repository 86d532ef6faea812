"""Parse the sdy text forms of meshes and shardings (one lark grammar, `sdy.lark`).

Printing is `str()` of the attribute classes. Parses are cached by text: real modules repeat
the same few shardings thousands of times.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput

from .errors import ParseError, ShardcError, bad_priority, syntax_error
from .shardings import (
    AxisRef,
    DimSharding,
    ManualAxes,
    Mesh,
    MeshAxis,
    ShardingPerValue,
    TensorSharding,
)


@cache
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("sdy.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=True)


def _unquote(tok: str) -> str:
    return tok[1:-1].encode().decode("unicode_escape") if "\\" in tok else tok[1:-1]


@v_args(inline=True)
class _ToAttr(Transformer):
    def tensor_sharding(self, body: TensorSharding) -> TensorSharding:
        return body

    def per_value(self, lst: tuple[TensorSharding, ...]) -> ShardingPerValue:
        return ShardingPerValue(lst)

    def stripped_list(self, *items: TensorSharding | None) -> tuple[TensorSharding, ...]:
        return tuple(i for i in items if i is not None)

    def sharding_body(self, mesh, *rest):  # type: ignore[no-untyped-def]
        dims: list[DimSharding] = []
        replicated: tuple[AxisRef, ...] = ()
        unreduced: tuple[AxisRef, ...] = ()
        for item in rest:
            if item is None:
                continue
            if isinstance(item, DimSharding):
                dims.append(item)
            elif item[0] == "replicated":
                replicated = item[1]
            else:
                unreduced = item[1]
        return TensorSharding(mesh, tuple(dims), replicated, unreduced)

    def mesh_ref(self, tok: Token) -> str:
        return str(tok)[1:]

    def inline_mesh(self, mesh: Mesh) -> Mesh:
        return mesh

    def clause(self, kw: Token, axes: tuple[AxisRef, ...]) -> tuple[str, tuple[AxisRef, ...]]:
        return (str(kw), axes)

    def mesh_attr(self, mesh: Mesh) -> Mesh:
        return mesh

    def mesh_body(self, *items):  # type: ignore[no-untyped-def]
        axes = tuple(i for i in items if isinstance(i, MeshAxis))
        ids = next((i for i in items if isinstance(i, tuple)), None)
        return Mesh(axes, ids)

    def device_ids(self, *ids: Token | None) -> tuple[int, ...]:
        return tuple(int(i) for i in ids if i is not None)

    def mesh_axis(self, name: Token, size: Token) -> MeshAxis:
        return MeshAxis(_unquote(name), int(size))

    def manual_axes(self, *names: Token | None) -> ManualAxes:
        return ManualAxes(tuple(_unquote(n) for n in names if n is not None))

    def dim(self, *items):  # type: ignore[no-untyped-def]
        *entries, prio = items
        entries = [e for e in entries if e is not None]
        closed = True
        if entries and isinstance(entries[-1], Token):
            closed = False
            entries.pop()
        if any(isinstance(e, Token) for e in entries):
            raise ParseError("'?' must be the last entry of a dim sharding: expected '}'")
        p = None
        if prio is not None:
            text = str(prio)[1:]
            if len(text) > 1 and text[0] == "0":
                raise bad_priority(str(prio))
            p = int(text)
        return DimSharding(tuple(entries), closed, p)

    def axis_list(self, *refs: AxisRef) -> tuple[AxisRef, ...]:
        return refs

    def axis_ref(self, name: Token, pre: Token | None, size: Token | None) -> AxisRef:
        if pre is None:
            return AxisRef(_unquote(name))
        return AxisRef(_unquote(name), (int(pre), int(size)))  # type: ignore[arg-type]


_TRANSFORMER = _ToAttr()


@lru_cache(maxsize=65536)
def parse_attr(text: str) -> TensorSharding | ShardingPerValue | Mesh | ManualAxes | tuple:
    """Parse any sdy sharding-family attribute text; raises `ParseError` with a caret."""
    try:
        tree = _parser().parse(text)
        return _TRANSFORMER.transform(tree)
    except UnexpectedInput as e:
        raise syntax_error("sharding syntax", text, getattr(e, "column", 0) or 0) from None
    except LarkError as e:
        inner = getattr(e, "orig_exc", None)
        if isinstance(inner, ShardcError):
            raise inner from None
        raise ParseError(f"invalid sharding syntax: {text}") from None


def _expect(text: str, kind: type, what: str):  # type: ignore[no-untyped-def]
    value = parse_attr(text.strip())
    if not isinstance(value, kind):
        raise ParseError(f"expected {what}, got: {text}")
    return value


def parse_tensor_sharding(text: str) -> TensorSharding:
    """`#sdy.sharding<@mesh, [...]>` or the stripped `<@mesh, [...]>`."""
    return _expect(text, TensorSharding, "a tensor sharding")


def parse_sharding_per_value(text: str) -> ShardingPerValue:
    return _expect(text, ShardingPerValue, "#sdy.sharding_per_value<[...]>")


def parse_sharding_list(text: str) -> tuple[TensorSharding, ...]:
    """A bracketed list of stripped shardings, `[<@mesh, [...]>, ...]`."""
    return _expect(text, tuple, "a list of shardings")


def parse_mesh(text: str) -> Mesh:
    return _expect(text, Mesh, "a mesh")


def parse_manual_axes(text: str) -> ManualAxes:
    return _expect(text, ManualAxes, '#sdy<manual_axes{"x", ...}>')
