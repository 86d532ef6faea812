"""shardc's IR: modules, operations, regions, blocks and values with use lists.

Plain slotted classes compared by identity. Every value keeps its uses; operands change only
through `Operation.set_operand`, so users of a value and the producer of an operand are O(1).
Attributes shardc does not interpret stay raw MLIR text (see `AttrDict`) and print back unchanged.
Every value may carry a `sharding` (a `TensorSharding`); on export it becomes the `sdy.sharding`
attribute of the func argument or of the op that defines the value.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .brackets import split_top_level
from .shardings import Mesh, TensorSharding
from .types import Type, split_function_type

# ---------------------------------------------------------------------------------------------
# Attribute dictionaries


class AttrDict:
    """An MLIR attribute dictionary, kept as raw text until an entry is read or written.

    Values are raw attribute text (`str`), `None` for unit attributes, or attribute objects
    (shardings, nested `AttrDict`s, lists) whose `str()` is their MLIR text. Reading parses the
    text into a dict shared by every `AttrDict` of the same text (a module repeats its
    attribute texts layer after layer); the first write gives this one a dict of its own.
    """

    __slots__ = ("_raw", "_items")

    def __init__(self, raw: str | None = None, items: dict[str, Any] | None = None):
        # `_raw` is the text between the braces while no entry was written (then `_items` is
        # None, or the shared read-only parse of `_raw`); None once this dict owns `_items`
        self._raw = raw
        self._items: dict[str, Any] | None = items if raw is None else None
        if raw is None and items is None:
            self._items = {}

    def _read(self) -> dict[str, Any]:
        """The entries, not to be changed (shared while the text is unchanged)."""
        items = self._items
        if items is None:
            items = self._items = _parsed_entries(self._raw or "")
        return items

    def _own(self) -> dict[str, Any]:
        """The entries, this dict's own (copied from the shared parse on the first write)."""
        if self._raw is not None:
            self._items = dict(self._read())
            self._raw = None
        assert self._items is not None
        return self._items

    def text_key(self) -> str | None:
        """The entries' text while unchanged since parsing ("" when empty), else None: two
        dicts with the same key have the same entries (a cheap memo key)."""
        raw = self._raw
        if raw is not None:
            return raw
        return None if self._items else ""

    def __contains__(self, key: str) -> bool:
        if self._raw is not None and key not in self._raw:
            return False
        return key in self._read()

    def get(self, key: str, default: Any = None) -> Any:
        if self._raw is not None and key not in self._raw:
            return default
        return self._read().get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self._read()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._own()[key] = value

    def pop(self, key: str, default: Any = None) -> Any:
        if self._raw is not None and (key not in self._raw or key not in self._read()):
            return default
        return self._own().pop(key, default)

    def keys(self) -> list[str]:
        return list(self._read().keys())

    def items(self) -> list[tuple[str, Any]]:
        return list(self._read().items())

    def __len__(self) -> int:
        return len(self._read())

    def copy(self) -> AttrDict:
        """An independent copy (nested dicts and lists copied, attribute objects shared)."""
        if self._raw is not None:
            copy = AttrDict(self._raw)
            copy._items = self._items  # (the shared parse, if any)
            return copy
        return AttrDict(items={k: _copy_attr(v) for k, v in (self._items or {}).items()})

    def __bool__(self) -> bool:
        if self._raw is not None:
            return bool(self._raw.strip())
        return bool(self._items)

    def body(self) -> str:
        """The entries without braces."""
        if self._raw is not None:
            return self._raw
        parts = []
        for k, v in (self._items or {}).items():
            key = k if _is_bare_key(k) else f'"{k}"'
            parts.append(key if v is None else f"{key} = {v}")
        return ", ".join(parts)

    def sorted_body(self) -> str:
        """The entries sorted by name, as MLIR's dictionary attributes print (text still raw
        came from jaxlib's print, which is sorted already)."""
        if self._raw is not None:
            return self._raw
        items = self._items or {}
        if list(items) == sorted(items):
            return self.body()
        return AttrDict(items=dict(sorted(items.items()))).body()

    def __str__(self) -> str:
        return "{" + self.body() + "}"

    def __repr__(self) -> str:
        return f"AttrDict({self})"


# raw dictionary text -> its entries, shared read-only by the `AttrDict`s of that text (bounded:
# emptied when full, so a long-lived process keeps at most this many)
_PARSED: dict[str, dict[str, Any]] = {}
_PARSED_MAX = 8192


def _parsed_entries(raw: str) -> dict[str, Any]:
    items = _PARSED.get(raw)
    if items is not None:
        return items
    items = {}
    for entry in split_top_level(raw):
        entry = entry.strip()
        if not entry:
            continue
        key, eq, value = entry.partition(" = ")
        key = key.strip()
        if key.startswith('"') and key.endswith('"'):
            key = key[1:-1]
        items[key] = value.strip() if eq else None  # None: a unit attribute
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[raw] = items
    return items


def _is_bare_key(key: str) -> bool:
    return bool(key) and all(c.isalnum() or c in "_.$" for c in key) and not key[0].isdigit()


class AttrList:
    """An array attribute `[a, b, ...]` whose elements are attribute objects or raw text."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]):
        self.items = items

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"

    __repr__ = __str__


def _copy_attr(value: Any) -> Any:
    if isinstance(value, AttrDict):
        return value.copy()
    if isinstance(value, AttrList):
        return AttrList([_copy_attr(v) for v in value.items])
    return value


def parse_dict_list(text: str) -> AttrList:
    """`[{a = 1}, {}]` (func arg/result attributes) as a list of `AttrDict`s."""
    inner = text.strip()[1:-1]
    return AttrList([AttrDict(e.strip()[1:-1]) for e in split_top_level(inner) if e.strip()])


# ---------------------------------------------------------------------------------------------
# Values


class Value:
    """An SSA value: its type, its uses `(op, operand index)`, and maybe a sharding.

    A value stores only the op of each use (`users`): no use, the one op of its one use (most
    values), or a list with an entry per use; `uses` pairs each op with its operand index when
    asked. A tuple per use and a list per value would be a fifth of a module's IR."""

    __slots__ = ("type", "_users", "sharding")

    def __init__(self, type: Type):
        self.type = type
        self._users: Operation | list[Operation] | None = None
        self.sharding: TensorSharding | None = None

    def _user_list(self) -> list[Operation]:
        users = self._users
        if users is None:
            return []
        if isinstance(users, Operation):
            return [users]
        return users

    def _add_user(self, op: Operation) -> None:
        users = self._users
        if users is None:
            self._users = op
        elif isinstance(users, Operation):
            self._users = [users, op]
        else:
            users.append(op)

    def _remove_user(self, op: Operation) -> None:
        users = self._users
        if isinstance(users, list):
            users.remove(op)
            if len(users) == 1:
                self._users = users[0]
        elif users is op:
            self._users = None
        else:
            raise ValueError(f"{op!r} does not use {self!r}")

    @property
    def uses(self) -> list[tuple[Operation, int]]:
        """`(op, operand index)` per use, in the order the uses were made (an op that reads
        the value twice comes twice, with each index)."""
        users = self._users
        if users is None:
            return []
        if isinstance(users, Operation):
            return [(users, users.operands.index(self))]
        out = []
        after: dict[int, int] = {}  # id(op) -> where to look for its next use of this value
        for op in users:
            i = op.operands.index(self, after.get(id(op), 0))
            after[id(op)] = i + 1
            out.append((op, i))
        return out

    @uses.setter
    def uses(self, uses: list[tuple[Operation, int]]) -> None:
        self._users = None
        for op, _ in uses:
            self._add_user(op)

    @property
    def users(self) -> Iterator[Operation]:
        """The op of each use (an op that reads the value twice comes twice)."""
        return iter(self._user_list())

    @property
    def num_uses(self) -> int:
        users = self._users
        if users is None:
            return 0
        return 1 if isinstance(users, Operation) else len(users)

    def replace_all_uses_with(self, other: Value) -> None:
        for op, idx in self.uses:
            op.set_operand(idx, other)


class OpResult(Value):
    __slots__ = ("owner", "index")

    def __init__(self, type: Type, owner: Operation, index: int):
        # Value's fields set here directly: the parser builds one per op result
        self.type = type
        self._users: Operation | list[Operation] | None = None
        self.sharding: TensorSharding | None = None
        self.owner = owner
        self.index = index

    def __repr__(self) -> str:
        return f"<result {self.index} of {self.owner.name}: {self.type}>"


class BlockArgument(Value):
    __slots__ = ("block", "index", "loc")

    def __init__(self, type: Type, block: Block, index: int, loc: str | None = None):
        super().__init__(type)
        self.block = block
        self.index = index
        self.loc = loc

    def __repr__(self) -> str:
        return f"<block arg {self.index}: {self.type}>"


# ---------------------------------------------------------------------------------------------
# Operations, blocks, regions


class Operation:
    """An op: name, operands, results, properties `<{...}>`, attributes `{...}`, regions."""

    __slots__ = (
        "name",
        "operands",
        "results",
        "properties",
        "attributes",
        "regions",
        "successors",
        "_loc",
        "parent",
    )

    def __init__(
        self,
        name: str,
        operands: list[Value] | None = None,
        result_types: list[Type] | None = None,
        properties: AttrDict | None = None,
        attributes: AttrDict | None = None,
        regions: list[Region] | None = None,
        loc: str | None = None,
        successors: str | None = None,
    ):
        self.name = name
        self.operands: list[Value] = []
        # a tuple: results never change after the op is built, and a tuple is half a list
        self.results: Sequence[OpResult] = tuple(
            [OpResult(t, self, i) for i, t in enumerate(result_types or ())]
        )
        self.properties = properties if properties is not None else AttrDict()
        self.attributes = attributes if attributes is not None else AttrDict()
        self.regions: list[Region] = []
        self.successors = successors
        self._loc: str | int | None = loc
        self.parent: Block | None = None
        for v in operands or ():
            self.add_operand(v)
        for r in regions or ():
            self.add_region(r)

    @classmethod
    def fast(
        cls,
        name: str,
        operands: list[Value],
        properties: AttrDict,
        attributes: AttrDict,
        loc: str | int | None,
    ) -> Operation:
        """Build an op without regions or results (the parser's hot path); an int `loc` N is
        the alias location `loc(#locN)` (see `set_loc_alias`)."""
        op = cls.__new__(cls)
        op.name = name
        op.operands = operands
        for v in operands:  # (Value._add_user, inlined: the parser's hot path)
            users = v._users
            if users is None:
                v._users = op
            elif isinstance(users, Operation):
                v._users = [users, op]
            else:
                users.append(op)
        op.results = ()
        op.properties = properties
        op.attributes = attributes
        op.regions = _NO_REGIONS
        op.successors = None
        op._loc = loc
        op.parent = None
        return op

    @property
    def loc(self) -> str | None:
        """The op's location text, `loc(...)` (None: unknown)."""
        loc = self._loc
        return f"loc(#loc{loc})" if type(loc) is int else loc  # type: ignore[return-value]

    @loc.setter
    def loc(self, loc: str | None) -> None:
        if loc is not None and loc.startswith("loc(#loc") and loc[8:-1].isdigit():
            self._loc = int(loc[8:-1])  # an alias: stored as its number (see set_loc_alias)
        else:
            self._loc = loc

    def set_loc_alias(self, number: int) -> None:
        """Set the location to `loc(#loc<number>)`, stored as the number (the parser: nearly
        every op's location is an alias, and a module has a distinct one per op)."""
        self._loc = number

    def clone(self, mapping: dict[int, Value] | None = None) -> Operation:
        """A deep copy of this op and its regions; `mapping` maps old value ids to new values
        (operands defined outside the op and not in `mapping` are shared)."""
        mapping = {} if mapping is None else mapping
        new = type(self).fast(
            self.name,
            [mapping.get(id(v), v) for v in self.operands],
            self.properties.copy(),
            self.attributes.copy(),
            self.loc,
        )
        new.successors = self.successors
        if isinstance(self, FuncOp):
            assert isinstance(new, FuncOp)
            new.result_shardings = list(self.result_shardings)
        new.results = tuple([OpResult(r.type, new, i) for i, r in enumerate(self.results)])
        for old, res in zip(self.results, new.results, strict=True):
            res.sharding = old.sharding
            mapping[id(old)] = res
        for region in self.regions:
            copy = Region()
            for block in region.blocks:
                nb = copy.add_block(Block(label=block.label))
                for a in block.args:
                    na = nb.add_arg(a.type, a.loc)
                    na.sharding = a.sharding
                    mapping[id(a)] = na
            for block, nb in zip(region.blocks, copy.blocks, strict=True):
                for op in block.ops:
                    nb.append(op.clone(mapping))
            new.add_region(copy)
        return new

    # operands ---------------------------------------------------------------------------
    def add_operand(self, value: Value) -> None:
        value._add_user(self)
        self.operands.append(value)

    def set_operand(self, index: int, value: Value) -> None:
        """The one way to change an operand: keeps both use lists right."""
        old = self.operands[index]
        old._remove_user(self)
        value._add_user(self)
        self.operands[index] = value

    def drop_operands(self) -> None:
        for v in self.operands:
            v._remove_user(self)
        self.operands = []

    # regions ----------------------------------------------------------------------------
    def add_region(self, region: Region) -> None:
        region.parent = self
        if self.regions:
            self.regions.append(region)
        else:
            self.regions = [region]  # never append to the shared `_NO_REGIONS`

    # attributes -------------------------------------------------------------------------
    def attr(self, key: str, default: Any = None) -> Any:
        """A property or, failing that, a discardable attribute."""
        value = self.properties.get(key, None)
        if value is None and key not in self.properties:
            return self.attributes.get(key, default)
        return value

    # structure --------------------------------------------------------------------------
    @property
    def parent_op(self) -> Operation | None:
        block = self.parent
        if block is None or block.parent is None:
            return None
        return block.parent.parent

    def walk(self) -> Iterator[Operation]:
        """This op and every op nested in it, pre-order."""
        stack: list[Operation] = [self]
        while stack:
            op = stack.pop()
            yield op
            for region in reversed(op.regions):
                for block in reversed(region.blocks):
                    stack.extend(reversed(block.ops))

    def erase(self) -> None:
        """Remove this op from its block; its results must have no uses."""
        for r in self.results:
            if r._users is not None:
                raise ValueError(f"erasing {self.name} whose result still has uses")
        self.drop_operands()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def __repr__(self) -> str:
        return f"<op {self.name} at {self.loc}>"


# The `regions` of every op built without regions (most ops): one shared empty tuple instead of
# an empty list per op; `add_region` replaces it, and appending to it fails loudly.
_NO_REGIONS: list[Region] = ()  # type: ignore[assignment]


class FuncOp(Operation):
    """A `func.func`: an op that also holds its results' shardings (`result_shardings[i]`, as
    its entry block's arguments hold theirs); read and write them through `op_views.Func`."""

    __slots__ = ("result_shardings",)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.result_shardings: list[TensorSharding | None] = []

    @classmethod
    def fast(
        cls,
        name: str,
        operands: list[Value],
        properties: AttrDict,
        attributes: AttrDict,
        loc: str | int | None,
    ) -> Operation:
        op = super().fast(name, operands, properties, attributes, loc)
        assert isinstance(op, FuncOp)
        op.result_shardings = []
        return op


class Block:
    """A list of ops with block arguments."""

    __slots__ = ("args", "ops", "parent", "label")

    def __init__(self, arg_types: list[Type] | None = None, label: str | None = None):
        self.args: list[BlockArgument] = [
            BlockArgument(t, self, i) for i, t in enumerate(arg_types or ())
        ]
        self.ops: list[Operation] = []
        self.parent: Region | None = None
        self.label = label

    def add_arg(self, type: Type, loc: str | None = None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), loc)
        self.args.append(arg)
        return arg

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


class Region:
    __slots__ = ("blocks", "parent")

    def __init__(self, blocks: list[Block] | None = None):
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks or ():
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def entry(self) -> Block:
        return self.blocks[0]


# ---------------------------------------------------------------------------------------------
# Module


class Module:
    """A `builtin.module` op plus what shardc looks up often: meshes, funcs, location aliases."""

    __slots__ = ("op", "_loc_aliases", "_loc_alias_text", "source_name")

    def __init__(
        self, op: Operation, loc_aliases: dict[str, str] | None = None, loc_alias_text: str = ""
    ):
        self.op = op
        # `#loc12 = loc(...)` lines as printed, parsed into `loc_aliases` on first use (only
        # messages and printing with locations read them: most runs never do)
        # (`copy`, not `dict()`: a table that reads its aliases on demand stays one)
        self._loc_aliases: dict[str, str] | None = loc_aliases.copy() if loc_aliases else None
        self._loc_alias_text = loc_alias_text if loc_aliases is None else ""
        self.source_name: str | None = None

    @property
    def loc_aliases(self) -> dict[str, str]:
        """Location alias (`#loc12`) -> its `loc(...)` text, in the order they were printed."""
        if self._loc_aliases is None:
            aliases: dict[str, str] = {}
            for line in self._loc_alias_text.split("\n"):
                alias, eq, value = line.partition(" = ")
                if eq:
                    aliases[alias] = value
            self._loc_aliases = aliases
            self._loc_alias_text = ""
        return self._loc_aliases

    @loc_aliases.setter
    def loc_aliases(self, aliases: dict[str, str]) -> None:
        self._loc_aliases = aliases
        self._loc_alias_text = ""

    @property
    def loc_alias_order(self) -> list[str]:
        """The aliases in the order they are printed."""
        return list(self.loc_aliases)

    def clone(self) -> Module:
        """An independent deep copy (attributes copied, immutable shardings shared)."""
        copy = Module(self.op.clone(), self._loc_aliases, self._loc_alias_text)
        copy.source_name = self.source_name
        return copy

    def release(self) -> None:
        """Empty this module, breaking the IR's reference cycles (op <-> result, value <-> use,
        block <-> op) so that reference counting frees it at once: a module dropped whole would
        otherwise wait for a full cyclic-GC traversal (a third of a propagate call's time).
        Ops detached earlier (erased, replaced) are not reached."""
        ops = list(self.op.walk())
        for op in ops:
            for r in op.results:
                r._users = None
            for region in op.regions:
                region.parent = None
                for block in region.blocks:
                    for a in block.args:
                        a._users = None
                    block.args = []
                    block.ops = []
                    block.parent = None
                region.blocks = []
            op.results = ()
            op.operands = []
            op.regions = []
            op.parent = None

    @property
    def body(self) -> Block:
        return self.op.regions[0].entry

    @property
    def meshes(self) -> dict[str, Mesh]:
        """Mesh symbol name -> `Mesh` (parsed at import), in module order."""
        return {
            symbol_name(op): op.properties["mesh"] for op in self.body.ops if op.name == "sdy.mesh"
        }

    @property
    def funcs(self) -> dict[str, Operation]:
        return {symbol_name(op): op for op in self.body.ops if op.name == "func.func"}

    def walk(self) -> Iterator[Operation]:
        return self.op.walk()

    def ops_named(self, name: str) -> Iterator[Operation]:
        """The ops named `name`, in no promised order: a scan of each block's op names, without
        a walk's stack entry per op (cheaper where few ops match, as in a pass's "is there
        any" check)."""
        stack = [self.op]
        while stack:
            for region in stack.pop().regions:
                for block in region.blocks:
                    for op in block.ops:
                        if op.name == name:
                            yield op
                        if op.regions:
                            stack.append(op)

    def resolve_loc(self, loc: str | None) -> str | None:
        """`loc(#loc3)` -> `file.py:3:4`: the innermost file location, for messages."""
        if not loc:
            return None
        seen = 0
        text = loc
        while "#loc" in text and seen < 8:
            seen += 1
            start = text.index("#loc")
            end = start + 4
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            alias = text[start:end]
            repl = self.loc_aliases.get(alias)
            if repl is None:
                break
            text = text[:start] + repl + text[end:]
        return _file_line_col(text, self.source_name)


def _file_line_col(loc: str, source_name: str | None) -> str | None:
    """Pick the first `"file":L:C` out of an MLIR location text."""
    import re

    m = re.search(r'"([^"]*)":(\d+):(\d+)', loc)
    if not m:
        m2 = re.search(r'loc\("([^"]+)"\)', loc)
        return m2.group(1) if m2 else None
    fname = m.group(1)
    if fname == "-" and source_name:
        fname = source_name
    return f"{fname}:{m.group(2)}:{m.group(3)}"


def symbol_name(op: Operation) -> str:
    """The `sym_name` of a symbol op, without quotes."""
    raw = op.properties.get("sym_name")
    if raw is None:
        raw = op.attributes.get("sym_name", '""')
    return str(raw).strip('"')


def callee_name(call: Operation) -> str:
    """The function a `func.call` calls, without `@` or quotes (`@"<lambda>"` -> `<lambda>`)."""
    raw = str(call.attr("callee", "")).strip().lstrip("@")
    return raw[1:-1] if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"' else raw


def symbol_ref(name: str) -> str:
    """`@name`, quoted when the name is not a bare identifier (`@"<lambda>"`)."""
    return f"@{name}" if _is_bare_key(name) else f'@"{name}"'


# ---------------------------------------------------------------------------------------------
# func.func helpers


def func_body(func: Operation) -> Block | None:
    if not func.regions or not func.regions[0].blocks:
        return None
    return func.regions[0].entry


def func_num_results(func: Operation) -> int:
    body = func_body(func)
    if body is not None and body.terminator is not None:
        return len(body.terminator.operands)

    _, results = split_function_type(str(func.properties["function_type"]))
    return len(results)
