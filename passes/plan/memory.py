"""Per-device memory of a layout, in the sense of XLA's `memory_analysis()`.

`arguments`: the local bytes of the entry funcs' arguments; `results`: of their results (as
declared, else as returned, cut as the export cuts I/O shardings; several results add XLA's
output tuple, 8 bytes per result); `peak`: XLA's temporaries, the most bytes of intermediate
buffers alive at once, walking each entry func in program order.

An intermediate gets a buffer of its own only where XLA's fusion leaves one: element-wise ops,
broadcasts, transposes, slices, pads and concatenates fuse into their consumers, so only the
values an unfusible op makes (dots, collectives, loops, calls, custom calls, sorts, scatters)
or reduces, the values an unfusible op reads, and the values an expensive element-wise op
(`exp`, `tanh`, a division) hands to several consumers take memory; reshapes and sharding
constraints are the buffer they read. A buffer lives from its op to its last use; returned
values and constants are not temporaries. A planned collective adds its buffer at its op (an
all-gather's gathered value), an op with regions the peak of its regions, a call its callee's.

XLA's buffer assignment gives each result of the entry computation an allocation of its own
and then lets a temporary reuse one (the smallest that holds it) wherever the temporary's live
range ends before that result is computed: such a temporary is not in XLA's temp size
(`output_reuse`). A train step whose gradients and activations are all gone before the new
parameters are written has almost no temp memory at all.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from shardc.dialect.data_flow import CALL, CONTROL_FLOW_OPS, WHILE
from shardc.dialect.ir import (
    Block,
    BlockArgument,
    Module,
    Operation,
    Value,
    callee_name,
    func_body,
    parse_dict_list,
)
from shardc.dialect.layout_math import axes_layout, dim_axes, local_shape, sharded_local_bytes
from shardc.dialect.rules.attrs import attr_text, conv_dims, struct_fields
from shardc.dialect.shardings import Mesh, TensorSharding
from shardc.dialect.types import TensorType, element_bytes

from . import layout
from .cost import peak_live
from .liveness import Liveness
from .op_cost import Tensor
from .report import Memory

POINTER = 8  # bytes of one pointer in an XLA tuple

MeshOf = Callable[[TensorSharding | None], Mesh | None]
_NO_MESH = Mesh(())  # (the mesh of a value without a sharding: the byte models never read it)


def tensor_of(v: Value, sharding: TensorSharding | None = None) -> Tensor | None:
    """A value as the byte model sees it (None for tokens, tuples, dynamic shapes): its
    sharding's axes per dim as a closed layout; replicated where it has no sharding of its
    rank (on an empty mesh where it has none at all)."""
    t = v.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.shape):
        return None
    s = sharding if sharding is not None else layout.value_sharding(v)
    rank = t.rank
    if s is None or len(s.dims) != rank:
        mesh = s.mesh if s is not None else _NO_MESH
        return Tensor(t.shape, element_bytes(t.element_type), axes_layout(mesh, [()] * rank))
    return Tensor(
        t.shape,
        element_bytes(t.element_type),
        axes_layout(s.mesh, (d.axes for d in s.dims)),
        s.unreduced,
    )


def value_bytes(v: Value, mesh_of: MeshOf, sharding: TensorSharding | None = None) -> int:
    """Local bytes of a value under its sharding (or `sharding`)."""
    t = tensor_of(v, sharding)
    if t is None:
        return 0
    s = sharding if sharding is not None else layout.value_sharding(v)
    mesh = mesh_of(s)
    if mesh is None:
        return t.elem_bytes * t.num_elements
    return sharded_local_bytes(t.shape, t.elem_bytes, t.sharding, mesh)


@dataclass
class Buffers:
    """The collectives' buffers: bytes at each op (by id), the values collectives read (by
    id), and the later ops that reuse a reshard made at an op (its result lives until them)."""

    at: dict[int, int] = field(default_factory=dict)
    read: set[int] = field(default_factory=set)
    reused: dict[int, list[Operation]] = field(default_factory=dict)
    kept: dict[int, int] = field(default_factory=dict)  # of those bytes, what the reuses read
    # of those bytes, the reshards of the entry func's arguments (`is_argument_of`): XLA runs
    # them first, so their results live from the start of the program
    early: dict[int, int] = field(default_factory=dict)
    # the copies XLA makes at an op of the values gathered for it (`plan.gather_copy`), and
    # the (op, value) ids they are of (a convolution reads that copy, `_conv_copies`)
    copies: dict[int, int] = field(default_factory=dict)
    copied: set[tuple[int, int]] = field(default_factory=set)
    # per op, the values an op XLA fuses makes that the op reads sliced (its reshard only
    # slices) and the slice's bytes: XLA fuses the producer into the dynamic slice, so the
    # value takes no buffer and the slice lives from the producer to the op
    sliced: dict[int, list[tuple[Value, int]]] = field(default_factory=dict)


def memory_estimate(
    module: Module,
    entries: list[Operation],
    mesh_of: MeshOf,
    live: Liveness | None = None,
    buffers: Buffers | None = None,
) -> Memory:
    """The memory of the layout of `entries` (the funcs nothing calls); with `live`, ops that
    do not run hold nothing; `buffers` are the collectives' (see `Buffers`)."""
    funcs = module.funcs
    args = results = peak = aliased = 0
    memo: dict[str, int] = {}
    for func in entries:
        body = func_body(func)
        if body is None:
            continue
        args += sum(value_bytes(a, mesh_of) for a in body.args)
        ret = body.terminator
        if ret is not None:
            results += sum(result_bytes(func, i, v, mesh_of) for i, v in enumerate(ret.operands))
            aliased += sum(
                result_bytes(func, i, ret.operands[i], mesh_of)
                for i in _aliased_results(func, mesh_of)
                if i < len(ret.operands)
            )
            if len(ret.operands) > 1:
                results += POINTER * len(ret.operands)  # XLA's output tuple: one pointer each
        found = block_buffers(
            body, mesh_of, funcs, live, buffers or Buffers(), memo, set(), outputs=func
        )
        peak = max(peak, found.peak())
    return Memory(args, results, peak, aliased)


# ops that are the buffer they read (a row-major reshape is a bitcast)
_TRANSPARENT = frozenset(
    {"sdy.sharding_constraint", "sdy.reshard", "stablehlo.reshape", "stablehlo.bitcast_convert"}
)
# the ops that reshard their operand (a collective or a slice where the layout changes)
_RESHARDS = frozenset({"sdy.sharding_constraint", "sdy.reshard"})
# expensive element-wise ops: fused into one consumer, not duplicated into several
_EXPENSIVE = frozenset(
    {
        "stablehlo.exponential",
        "stablehlo.exponential_minus_one",
        "stablehlo.log",
        "stablehlo.log_plus_one",
        "stablehlo.logistic",
        "stablehlo.tanh",
        "stablehlo.sine",
        "stablehlo.cosine",
        "stablehlo.tan",
        "stablehlo.sqrt",
        "stablehlo.rsqrt",
        "stablehlo.cbrt",
        "stablehlo.divide",
        "stablehlo.remainder",
        "stablehlo.power",
        "stablehlo.atan2",
        "chlo.erf",
    }
)
# cheap ops XLA fuses into their consumers (duplicated into each one)
_CHEAP = frozenset(
    {
        "stablehlo.broadcast_in_dim",
        "stablehlo.transpose",
        "stablehlo.slice",
        "stablehlo.dynamic_slice",
        "stablehlo.pad",
        "stablehlo.concatenate",
        "stablehlo.reverse",
        "stablehlo.iota",
        "stablehlo.gather",
        "stablehlo.dynamic_update_slice",
        "stablehlo.convert",
        "stablehlo.select",
        "stablehlo.compare",
        "stablehlo.clamp",
        "stablehlo.add",
        "stablehlo.subtract",
        "stablehlo.multiply",
        "stablehlo.negate",
        "stablehlo.abs",
        "stablehlo.maximum",
        "stablehlo.minimum",
        "stablehlo.and",
        "stablehlo.or",
        "stablehlo.xor",
        "stablehlo.not",
        "stablehlo.sign",
        "stablehlo.floor",
        "stablehlo.ceil",
        "stablehlo.round_nearest_even",
        "stablehlo.round_nearest_afz",
        "stablehlo.is_finite",
        "stablehlo.shift_left",
        "stablehlo.shift_right_logical",
        "stablehlo.shift_right_arithmetic",
        "stablehlo.real",
        "stablehlo.imag",
        "stablehlo.complex",
        "chlo.square",
    }
)
# ops XLA fuses into their consumers
_FUSIBLE = _CHEAP | _EXPENSIVE

# ops that take their producers into their own fusion but whose result is a buffer
_FUSION_ROOTS = frozenset({"stablehlo.reduce", "stablehlo.reduce_window"})
# XLA's CPU backend hands a reduce to its library (YNNPACK: `_library_reduce`) where it or its
# input has at least this many elements; the library fusion takes in the element-wise ops it
# supports of at least as many elements, and nothing else
LIBRARY_MIN_ELEMENTS = 4096
_LIBRARY_REDUCERS = frozenset({"stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"})
_LIBRARY_ELEMENTWISE = frozenset(
    {
        "stablehlo.abs", "stablehlo.ceil", "stablehlo.convert", "stablehlo.cosine",
        "chlo.erf", "stablehlo.exponential", "stablehlo.exponential_minus_one",
        "stablehlo.floor", "stablehlo.log", "stablehlo.log_plus_one", "stablehlo.logistic",
        "stablehlo.negate", "stablehlo.round_nearest_even", "stablehlo.rsqrt",
        "stablehlo.sign", "stablehlo.sine", "stablehlo.sqrt", "stablehlo.tanh", "stablehlo.tan",
        "stablehlo.add", "stablehlo.divide", "stablehlo.maximum", "stablehlo.minimum",
        "stablehlo.multiply", "stablehlo.power", "stablehlo.subtract",
        "chlo.square",  # (XLA's import writes it as a multiply of the value by itself)
    }
)  # fmt: skip
_LIBRARY_TYPES = frozenset({"f32", "f64", "bf16"})
_CONSTANTS = frozenset({"stablehlo.constant", "sdy.constant"})
# XLA's CPU buffer assignment starts every temporary buffer on a 64-byte boundary
_ALIGN = 64
# the ops XLA runs on a tuple of their operands and results (one pointer per element): control
# flow
_TUPLED = CONTROL_FLOW_OPS


def aligned(n: int) -> int:
    """`n` bytes rounded up to XLA's CPU buffer alignment (0 stays 0)."""
    return -(-n // _ALIGN) * _ALIGN if n > 0 else 0


# ops XLA's common-subexpression elimination merges where they compute the same thing: the
# element-wise and layout ops, dots and convolutions, and constants (by their value)
_CSE_OPS = (
    _FUSIBLE
    | _CONSTANTS
    | frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})
)


# discardable attributes that say nothing of what an op computes (its result's sharding is
# compared apart)
_NOT_SEMANTIC = frozenset({"sdy.sharding", "sdy.sharding_origins", "shardc.tag", "mhlo.sharding"})


@dataclass
class Twins:
    """The values of a block that XLA's CSE merges into an earlier one (by id: that one),
    and for each value kept the ones merged into it. JAX's autodiff computes a value again
    where the backward pass needs it (a normalization's `x - mean`, the broadcasts of the
    mean): XLA computes it once, and the one buffer lives until the last reader of any copy."""

    merged: dict[int, Value] = field(default_factory=dict)
    into: dict[int, list[Value]] = field(default_factory=dict)

    def of(self, v: Value) -> list[Value]:
        """The values merged into `v`."""
        return self.into.get(id(v), [])


def cse_twins(block: Block, live: Liveness | None = None) -> Twins:
    """The values of `block`'s ops that compute what an earlier op of the block computes
    (same op, same attributes, same operands after merging, same result types and
    shardings): XLA's CSE keeps the first."""
    out = Twins()
    first: dict[tuple, Operation] = {}
    for op in block.ops:
        if op.name not in _CSE_OPS or op.regions or not op.results:
            continue
        if live is not None and not live.op_live(op):
            continue
        operands = tuple(id(out.merged.get(id(v), v)) for v in op.operands)
        results = tuple((str(r.type), str(layout.value_sharding(r) or "")) for r in op.results)
        attrs = tuple(
            (k, str(v)) for k, v in sorted(op.attributes.items()) if k not in _NOT_SEMANTIC
        )
        key = (op.name, operands, op.properties.sorted_body(), attrs, results)
        kept = first.setdefault(key, op)
        if kept is op:
            continue
        for r, k in zip(op.results, kept.results, strict=True):
            out.merged[id(r)] = k
            out.into.setdefault(id(k), []).append(r)
    return out


def _consumers(v: Value) -> list[Operation]:
    """The ops that read `v`, looking through transparent ones."""
    out: list[Operation] = []
    work = [v]
    while work:
        cur = work.pop()
        for user in cur.users:
            if user.name in _TRANSPARENT and user.results:
                work.extend(user.results)
            else:
                out.append(user)
    return out


def fusible_result(v: Value, funcs: dict[str, Operation]) -> bool:
    """Whether `v` comes out of an op XLA fuses into consumers (a call's result: whatever
    makes the value it returns, as XLA inlines calls)."""
    owner = getattr(v, "owner", None)
    seen = 0
    while owner is not None and owner.name == CALL and seen < 16:
        seen += 1
        callee = funcs.get(callee_name(owner))
        body = func_body(callee) if callee is not None else None
        ret = body.terminator if body is not None else None
        index = getattr(v, "index", 0)
        if ret is None or index >= len(ret.operands):
            return False
        v = ret.operands[index]
        owner = getattr(v, "owner", None)
    if owner is None:
        return True  # an argument passed through
    return owner.name in _FUSIBLE or owner.name in _TRANSPARENT or owner.name in _CONSTANTS


def _own_buffer(
    v: Value,
    live: Liveness | None,
    gathered: set[int],
    funcs: dict[str, Operation],
    twins: Twins | None = None,
) -> bool:
    """Whether XLA gives `v` a buffer of its own (see the module docstring), a library
    reduce's input counted where it is large enough globally (`library_only`)."""
    return _buffer_reason(v, live, gathered, funcs, twins) is not None


def library_only(
    v: Value, live: Liveness | None, gathered: set[int], funcs: dict[str, Operation]
) -> bool:
    """Whether `v` has a buffer only because a library reduce reads it (`_library_reduce`):
    XLA makes that buffer where `v` has at least `LIBRARY_MIN_ELEMENTS` local elements (the
    reduce's input then has as many), so its existence depends on the layout; the plan
    counts it where the layout gives it those elements, auto's rows per choice."""
    return _buffer_reason(v, live, gathered, funcs) == "library"


def _buffer_reason(
    v: Value,
    live: Liveness | None,
    gathered: set[int],
    funcs: dict[str, Operation],
    twins: Twins | None = None,
    sliced: frozenset[tuple[int, int]] = frozenset(),
) -> str | None:
    """Why XLA gives `v` a buffer of its own (None: it is fused into its readers). `sliced`:
    the (op, value) pairs where the op reads the value through a slice-only reshard
    (`Buffers.sliced`): the slice is the buffer that op reads, the value fuses into it."""
    owner = getattr(v, "owner", None)
    if owner is None or owner.name in _CONSTANTS or owner.name in _TRANSPARENT:
        return None
    if not fusible_result(v, funcs):
        return "own"
    same = [v, *(twins.of(v) if twins is not None else ())]
    if any(id(x) in gathered for x in same):
        return "own"  # a collective reads it
    users = {id(u): u for x in same for u in _consumers(x) if live is None or live.op_live(u)}
    if any(
        u.name not in _FUSIBLE and u.name not in _FUSION_ROOTS and u.name != CALL
        for u in users.values()
    ):
        return "own"
    if len(users) > 1 and owner.name in _EXPENSIVE:
        return "own"
    if any(
        _library_reads(u, live, sliced) and not any((id(u), id(x)) in sliced for x in same)
        for u in users.values()
    ) and not (len(users) == 1 and _library_absorbs(owner, live, sliced)):
        return "library"  # a library reduce reads it from memory
    return None


def local_elements(v: Value, mesh_of: MeshOf, sharding: TensorSharding | None = None) -> int:
    """The elements of `v` per device under its sharding (or `sharding`)."""
    t = tensor_of(v, sharding)
    return value_bytes(v, mesh_of, sharding) // t.elem_bytes if t is not None else 0


def _library_reduce(op: Operation) -> bool:
    """Whether XLA's CPU backend runs the reduce `op` as a library call (YNNPACK) rather than
    as a loop fusion: one input, a reducer that is a single add, maximum or minimum, reduced
    dims, a float type, and at least `LIBRARY_MIN_ELEMENTS` local elements in its input (the
    larger; decided here on global sizes, the local count is `library_only`'s). Such a call reads its input from memory: XLA's own fusion runs after the library
    rewrite and does not fuse into it, so the element-wise producers of the input (bar those
    the library takes in itself, `_library_absorbs`) are computed into a buffer."""
    if op.name != "stablehlo.reduce" or len(op.operands) != 2 or len(op.results) != 1:
        return False
    if not re.search(r"\d", attr_text(op, "dimensions") or ""):
        return False  # (no reduced dims)
    body = [b for region in op.regions for b in region.blocks]
    if len(body) != 1 or len(body[0].ops) != 2 or body[0].ops[0].name not in _LIBRARY_REDUCERS:
        return False
    t = op.operands[0].type
    if not isinstance(t, TensorType) or str(t.element_type) not in _LIBRARY_TYPES:
        return False
    return _global_elements(op.operands[0]) >= LIBRARY_MIN_ELEMENTS


def _library_absorbs(
    op: Operation, live: Liveness | None, sliced: frozenset[tuple[int, int]] = frozenset()
) -> bool:
    """Whether the library fusion of a reduce takes in the element-wise `op` (its only
    reader is that fusion): an element-wise op the library supports, of at least
    `LIBRARY_MIN_ELEMENTS` elements (XLA's library fusion takes only ops it prefers)."""
    if op.name not in _LIBRARY_ELEMENTWISE or len(op.results) != 1:
        return False
    r = op.results[0]
    t = r.type
    if not isinstance(t, TensorType) or str(t.element_type) not in _LIBRARY_TYPES:
        return False
    if _global_elements(r) < LIBRARY_MIN_ELEMENTS:
        return False
    users = [u for u in _consumers(r) if live is None or live.op_live(u)]
    return (
        len(users) == 1
        and (id(users[0]), id(r)) not in sliced  # (the reader reads a slice of it)
        and _library_reads(users[0], live, sliced)
    )


def _global_elements(v: Value) -> int:
    """The elements of `v`'s whole tensor (0 for tokens, tuples, dynamic shapes)."""
    t = v.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.shape):
        return 0
    n = 1
    for d in t.shape:
        n *= d
    return n


def _library_reads(
    op: Operation, live: Liveness | None, sliced: frozenset[tuple[int, int]] = frozenset()
) -> bool:
    """Whether `op` is a library reduce or an element-wise op a library reduce takes in: its
    operands are read from memory."""
    if op.name == "stablehlo.reduce":
        return _library_reduce(op)
    return _library_absorbs(op, live, sliced)


@dataclass(frozen=True)
class Buffer:
    """One temporary buffer of a block: live from the op at `start` to the op at `end` (indices
    in the block, inclusive), `nbytes` as laid out now. `kind`: "value" (the buffer of `value`,
    the first of the values computed in place in it), "collective" (the collectives' buffers at
    `op`, `Buffers.at`), "copy" (the copy of `value` XLA makes for the dot `op`,
    `_dot_copies`) or "inner" (the peak of `op`'s regions or callee, or the tuples of a
    control-flow op, with the collectives at `op`)."""

    start: int
    end: int
    nbytes: int
    kind: str
    op: Operation
    value: Value | None = None
    # the local elements `value` needs for the buffer to exist (`library_only`; 0: always)
    min_elements: int = 0


@dataclass
class BlockBuffers:
    """A block's temporary buffers (`Buffer`), and for each value with a buffer (by id) the
    index of the buffer that holds it (values computed in place share their operand's)."""

    buffers: list[Buffer] = field(default_factory=list)
    held: dict[int, int] = field(default_factory=dict)
    # the buffers that may take an allocation of an entry func's result: that result's index
    # (`output_reuse`), and those the layout lets fit there (not temporaries)
    slot_of: dict[int, int] = field(default_factory=dict)
    in_outputs: set[int] = field(default_factory=set)
    # the values XLA's CSE merges (`cse_twins`): a merged one is held in the buffer of the
    # one it is merged into
    twins: Twins = field(default_factory=lambda: Twins())
    # each op's position in XLA's schedule of the block (`xla_schedule`): what the buffers'
    # `start` and `end` count
    index: dict[int, int] = field(default_factory=dict)

    def peak(self) -> int:
        """The most bytes of these buffers live at once, less those in the results'."""
        return peak_live(
            [(b.start, b.end, b.nbytes) for i, b in enumerate(self.buffers)
             if i not in self.in_outputs]
        )  # fmt: skip


class _Reads:
    """Per value of a block: why XLA gives it a buffer (`_buffer_reason`, None: it is fused
    into its readers) and the last op of the block that reads it. A value is read where its
    readers run, and a reader fused into its own readers (no buffer of its own) runs inside
    each of them (XLA's fusion duplicates it there): the values it reads are read there too,
    so they live until the last of those (a normalization's input, read again by the
    backward pass's fusions that recompute the normalized value from it)."""

    def __init__(
        self,
        block: Block,
        index: dict[int, int],
        live: Liveness | None,
        gathered: set[int],
        funcs: dict[str, Operation],
        twins: Twins,
        mesh_of: MeshOf,
        sliced: frozenset[tuple[int, int]] = frozenset(),
    ):
        self.block, self.index, self.live = block, index, live
        self.mesh_of, self.sliced = mesh_of, sliced
        self.gathered, self.funcs, self.twins = gathered, funcs, twins
        self.terminator = block.ops[-1] if block.ops else None
        self._reason: dict[int, str | None] = {}
        self._last: dict[int, int] = {}

    def get(self, v: Value) -> str | None:
        """Why `v` has a buffer (`_buffer_reason`), None where it has none."""
        key = id(v)
        if key not in self._reason:
            self._reason[key] = _buffer_reason(
                v, self.live, self.gathered, self.funcs, self.twins, self.sliced
            )
        return self._reason[key]

    def last_read(self, v: Value) -> int:
        """The index of the last op of the block that reads `v`, through fused readers."""
        got = self._last.get(id(v))
        if got is not None:
            return got
        self._last[id(v)] = -1  # (a cycle: none)
        last = -1
        for user, top in self._readers(v):
            last = max(last, self.index.get(id(top), -1))
            if top is user and self._fused(user):
                for r in user.results:
                    last = max(last, self._recomputed_read(r))
        self._last[id(v)] = last
        return last

    def _recomputed_read(self, r: Value) -> int:
        """The last op that computes the fused value `r` again from its operands: every
        reader, or where `r` is materialized for library reduces alone (`recomputed`), its
        other readers (the library calls read the buffer, not the operands)."""
        if not self.recomputed(r, self.get(r)):
            return self.last_read(r)
        last = -1
        for user, top in self._readers(r):
            if _library_reads(user, self.live, self.sliced):
                continue
            last = max(last, self.index.get(id(top), -1))
            if top is user and self._fused(user):
                for x in user.results:
                    last = max(last, self._recomputed_read(x))
        return last

    def _readers(self, v: Value) -> list[tuple[Operation, Operation]]:
        """The live ops that read `v` or a twin of it, each with the op of the block that
        is it or holds it."""
        out = []
        for x in (v, *self.twins.of(v)):
            for user in _consumers(x):
                if self.live is not None and not self.live.op_live(user):
                    continue
                top = _top_level(user, self.block)
                if top is not None:
                    out.append((user, top))
        return out

    def recomputed(self, v: Value, reason: str | None) -> bool:
        """Whether `v`'s buffer is read by library reduces alone while its other readers
        compute it again from its operands: a cheap element-wise value whose buffer only a
        library reduce needs (`library_only`), where the layout gives it that buffer and no
        reshard reads it (XLA then keeps the one buffer for every reader)."""
        owner = getattr(v, "owner", None)
        return (
            reason == "library"
            and owner is not None
            and owner.name in _CHEAP
            and not any(
                id(x) in self.gathered or any(u.name in _RESHARDS for u in x.users)
                for x in (v, *self.twins.of(v))
            )
            and local_elements(v, self.mesh_of) >= LIBRARY_MIN_ELEMENTS
        )

    def library_last(self, v: Value) -> int:
        """The index of the last op of the block that reads `v` from the buffer a library
        reduce reads (`library_only`): the library reduces that read it and the reduces of
        the element-wise readers they take in. Its other readers compute `v` again from
        its operands (`_fused`)."""
        last = -1
        for user, top in self._readers(v):
            if not _library_reads(user, self.live, self.sliced):
                continue
            last = max(last, self.index.get(id(top), -1))
            if top is user and user.name != "stablehlo.reduce":
                for r in user.results:
                    last = max(last, self.last_read(r))
        return last

    def _fused(self, op: Operation) -> bool:
        """Whether `op` is fused into its readers: an op XLA fuses whose results have no
        buffer of their own whatever the layout (a collective's read, which gives one, is
        not asked: auto's rows state the layout's buffers apart) and are not the block's
        results. A value whose buffer only library reduces read (`library_only`) counts as
        fused too: XLA's library fusion runs first and leaves the op to the loop fusion,
        which duplicates a cheap op into every reader it fuses into and materializes it
        once more for the library call, so its operands are read wherever its readers
        run."""
        if op.name not in _FUSIBLE or op is self.terminator:
            return False
        for r in op.results:
            if id(r) in self.twins.merged:
                return False
            reason = _buffer_reason(r, self.live, set(), self.funcs, self.twins)
            if reason is not None and not self.recomputed(r, reason):
                return False
            if any(u is self.terminator for u in _consumers(r)):
                return False
        return True


def xla_schedule(
    block: Block,
    funcs: dict[str, Operation],
    live: Liveness | None = None,
    twins: Twins | None = None,
) -> list[Operation]:
    """The ops of `block` in the order XLA's CPU backend runs them: its scheduler (the
    concurrency-optimized one, the CPU default) takes the fused program's instructions in
    breadth-first order, each as soon as the last instruction it reads has run (a FIFO of
    ready instructions, parameters first), so sibling fusions that read the same values all
    run before any of their readers. An instruction here is an op that keeps a result of its
    own whatever the layout (an unfusible op, a reduce, an element-wise value XLA gives a
    buffer: `_buffer_reason` without collectives); an op fused into its readers is placed
    right after the last instruction it reads (it runs inside its readers). The collectives a
    layout adds are left out, so the order is the same for every layout (auto's rows use it
    too). The terminator stays last."""
    ops = block.ops
    if len(ops) < 3:
        return list(ops)
    terminator = ops[-1]
    program = {id(op): k for k, op in enumerate(ops)}
    twins = twins if twins is not None else cse_twins(block, live)
    node: dict[int, bool] = {}
    for op in ops[:-1]:
        if op.name in _CONSTANTS or op.name in _TRANSPARENT:
            node[id(op)] = False
        elif op.name in _FUSIBLE:
            node[id(op)] = any(
                _buffer_reason(r, live, set(), funcs, twins) is not None
                or any(u is terminator for u in _consumers(r))
                for r in op.results
            )
        else:
            node[id(op)] = True
    args = {id(a): i for i, a in enumerate(block.args)}
    deps_memo: dict[int, frozenset[int]] = {}

    def recomputed(v: Value) -> bool:
        """A cheap value only library reduces read from memory: its other readers compute
        it again from its operands (`_Reads.recomputed`, as at its full size)."""
        owner = v.owner  # type: ignore[attr-defined]
        return (
            owner.name in _CHEAP
            and _buffer_reason(v, live, set(), funcs, twins) == "library"
            and not any(u.name in _RESHARDS for x in (v, *twins.of(v)) for u in x.users)
        )

    def deps(op: Operation) -> frozenset[int]:
        """The instructions `op` reads (ids of ops of the block, or of its arguments),
        through the fused ops it takes in."""
        got = deps_memo.get(id(op))
        if got is not None:
            return got
        deps_memo[id(op)] = frozenset()  # (a cycle: none)
        found: set[int] = set()
        inside: set[int] = set()
        if op.regions:
            inside = {id(r) for inner in op.walk() for r in inner.results}
            inside |= {id(a) for inner in op.walk() for rg in inner.regions for b in rg.blocks
                       for a in b.args}  # fmt: skip
        for inner in op.walk() if op.regions else (op,):
            for v in inner.operands:
                if id(v) in inside:
                    continue
                if id(v) in args:
                    found.add(id(v))
                    continue
                owner = getattr(v, "owner", None)
                top = _top_level(owner, block) if owner is not None else None
                if top is None or top is op:
                    continue
                if node.get(id(top), False) and not (
                    top is owner and recomputed(v) and not _library_reads(inner, live)
                ):
                    found.add(id(top))
                else:
                    found.update(deps(top))
        out = frozenset(found)
        deps_memo[id(op)] = out
        return out

    nodes = [op for op in ops[:-1] if node[id(op)]]
    pending: dict[int, int] = {}
    users: dict[int, list[Operation]] = {}
    for op in nodes:
        d = deps(op)
        pending[id(op)] = len(d)
        for x in d:
            users.setdefault(x, []).append(op)
    queue: deque[int | Operation] = deque(id(a) for a in block.args)
    queue.extend(op for op in nodes if not pending[id(op)])
    rank: dict[int, int] = {}
    while queue:
        cur = queue.popleft()
        key = cur if isinstance(cur, int) else id(cur)
        rank[key] = len(rank)
        for user in users.get(key, ()):
            pending[id(user)] -= 1
            if not pending[id(user)]:
                queue.append(user)

    def sort_key(op: Operation) -> tuple[int, int, int]:
        if node[id(op)] and id(op) in rank:
            return (rank[id(op)], 0, program[id(op)])
        last = max((rank.get(x, -1) for x in deps(op)), default=-1)
        return (last, 1, program[id(op)])

    return sorted(ops[:-1], key=sort_key) + [terminator]


def _block_peak(
    block: Block,
    mesh_of: MeshOf,
    funcs: dict[str, Operation],
    memo: dict[str, int],
    active: set[str],
    live: Liveness | None,
    buffers: Buffers,
) -> int:
    return block_buffers(block, mesh_of, funcs, live, buffers, memo, active).peak()


def block_buffers(
    block: Block,
    mesh_of: MeshOf,
    funcs: dict[str, Operation],
    live: Liveness | None = None,
    buffers: Buffers | None = None,
    memo: dict[str, int] | None = None,
    active: set[str] | None = None,
    outputs: Operation | None = None,
) -> BlockBuffers:
    """The temporary buffers of `block` in program order, as `memory_estimate` counts them
    (its peak is that of these intervals but those in `in_outputs`): the schedule, fusion and
    in-place reuse of the plan, for the layout the values carry now (`buffers`: the
    collectives', none if not given). `outputs`: the entry func whose body `block` is (its
    results' allocations take temporaries, `output_reuse`)."""
    buffers = buffers or Buffers()
    memo = {} if memo is None else memo
    active = set() if active is None else active
    gathered = buffers.read
    twins = cse_twins(block, live)
    ops = xla_schedule(block, funcs, live, twins)
    index = {id(op): k for k, op in enumerate(ops)}
    terminator = block.ops[-1] if block.ops else None
    sliced = frozenset((at, id(v)) for at, got in buffers.sliced.items() for v, _ in got)
    reasons = _Reads(block, index, live, gathered, funcs, twins, mesh_of, sliced)
    out = BlockBuffers(twins=twins, index=index)
    intervals = out.buffers
    held = out.held  # value id -> its interval (values with a buffer of their own)
    for k, op in enumerate(ops):
        if op.name in _CONSTANTS:
            continue
        if live is not None and not live.op_live(op):
            continue
        for r in op.results:
            kept = twins.merged.get(id(r))
            if kept is not None:  # (XLA computes it once: in `kept`'s buffer)
                if id(kept) in held:
                    held[id(r)] = held[id(kept)]
                continue
            reason = reasons.get(r)
            if reason is None:
                continue
            users = [u for x in (r, *twins.of(r)) for u in _consumers(x)]
            if terminator is not None and any(u is terminator for u in users):
                continue  # a result of the block (an output, a loop's next state)
            if reasons.recomputed(r, reason):
                last = max(k, reasons.library_last(r))  # (its other readers recompute it)
            else:
                last = max(k, reasons.last_read(r))
            size = full = aligned(value_bytes(r, mesh_of))
            least = LIBRARY_MIN_ELEMENTS if reason == "library" else 0
            if local_elements(r, mesh_of) < least:
                size = 0  # (XLA's loop fusion computes it in its reader: `library_only`)
            if op.name in _FUSIBLE:
                # (in place as at its full size: where the layout gives it no buffer, its
                # readers read the operand instead, which then lives as long, whatever the
                # layout; so auto's rows, built on one layout, hold for every one)
                reuse = _dying_operand(op, k, full, held, intervals)
            elif op.name == WHILE and r.index < len(op.operands):
                # a loop updates its carries in place: a result takes the buffer of its
                # initial value where that dies at the loop
                reuse = _dying_operand(op, k, size, held, intervals, [op.operands[r.index]])
            else:
                reuse = None
            if reuse is not None:  # computed in place of an operand that dies here
                intervals[reuse] = dataclasses.replace(intervals[reuse], end=last)
                held[id(r)] = reuse
                continue
            held[id(r)] = len(intervals)
            intervals.append(Buffer(k, last, size, "value", op, r, least))
        own = aligned(buffers.at.get(id(op), 0))
        later = [_top_level(u, block) for u in buffers.reused.get(id(op), ())]
        last = max([index.get(id(t), k) for t in later if t is not None], default=k)
        early = min(own, aligned(buffers.early.get(id(op), 0)))
        if early:  # an argument's reshard: from the start of the program
            intervals.append(Buffer(0, last, early, "collective", op))
            own -= early
        if own and last > k:
            # a reshard later ops reuse: its result lives until them, the rest (an
            # all-to-all's pieces) only at the op
            kept = min(own, max(0, aligned(buffers.kept.get(id(op), own)) - early))
            intervals.append(Buffer(k, last, kept, "collective", op))
            own -= kept
        for v, nbytes in buffers.sliced.get(id(op), ()):
            owner = getattr(v, "owner", None)
            top = _top_level(owner, block) if owner is not None else None
            start = index.get(id(top), k) if top is not None else k
            intervals.append(Buffer(min(start, k), k, aligned(nbytes), "collective", op))
        copy = aligned(buffers.copies.get(id(op), 0))
        if copy:  # a gathered value's copy, live with the gathered buffer at the op
            intervals.append(Buffer(k, k, copy, "collective", op))
        for v in _conv_copies(op, mesh_of, live, gathered, terminator, buffers.copied):
            intervals.append(Buffer(k, k, aligned(value_bytes(v, mesh_of)), "value", op, v))
        sole: list[Value] = []  # (copies of operands the dot alone reads: one at a time)
        for v, alone in _dot_copies(op, mesh_of, live, buffers.copied):
            if alone and not is_argument_of(v, block):
                sole.append(v)
                continue
            # (a copy of what the arguments alone make is made at the start, `is_argument_of`)
            first = 0 if is_argument_of(v, block) else k
            intervals.append(Buffer(first, k, aligned(value_bytes(v, mesh_of)), "copy", op, v))
        if sole:
            v = max(sole, key=lambda x: value_bytes(x, mesh_of))
            intervals.append(Buffer(k, k, aligned(value_bytes(v, mesh_of)), "copy", op, v))
        inner = own
        if op.name in _TUPLED:  # the operand and result tuples (a case's captures as operands)
            n_in = len(op.operands) if op.name == WHILE else len(_captures(op))
            inner += aligned(POINTER * n_in) + aligned(POINTER * len(op.results))
        for region in op.regions:
            for b in region.blocks:
                inner = max(inner, _block_peak(b, mesh_of, funcs, memo, active, live, buffers))
        if op.name == CALL:
            name = callee_name(op)
            if name not in memo and name not in active and name in funcs:
                body = func_body(funcs[name])
                active.add(name)
                memo[name] = (
                    _block_peak(body, mesh_of, funcs, memo, active, live, buffers) if body else 0
                )
                active.discard(name)
            inner = max(inner, memo.get(name, 0))
        if inner:
            intervals.append(Buffer(k, k, inner, "collective" if inner == own else "inner", op))
    if outputs is not None:
        out.slot_of = output_reuse(
            block, out, funcs, live, _aliased_results(outputs, mesh_of), mesh_of=mesh_of
        )
        ret = block.terminator
        assert ret is not None
        out.in_outputs = {
            i for i, r in out.slot_of.items()
            if value_bytes(intervals[i].value, mesh_of)  # type: ignore[arg-type]
            <= result_bytes(outputs, r, ret.operands[r], mesh_of)
        }  # fmt: skip
    return out


def output_reuse(
    block: Block,
    found: BlockBuffers,
    funcs: dict[str, Operation],
    live: Liveness | None = None,
    aliased: frozenset[int] = frozenset(),
    mesh_of: MeshOf | None = None,
) -> dict[int, int]:
    """For the buffers of `found` (an entry func's body, `block`) that may take an allocation
    of one of the func's results, that result's index in the return.

    XLA's buffer assignment gives each result (but one aliased with a donated argument,
    `aliased`: that is the argument's allocation) an allocation of its own, largest first, and
    a temporary reuses the smallest allocation that is large enough and holds nothing live at
    the same time; only the temporaries left over go to the heap whose peak is XLA's temp size.
    A result's allocation is busy from the op that computes it to the end (a result that is an
    argument, a constant or a value of a region is a copy XLA may place anywhere: busy
    throughout); a temporary whose last reader computes the result shares it only where that
    op is element-wise and the sizes are equal (computed in place; not in a dot's result XLA
    reshapes, `_reshaped_dot`).

    The plan makes the assignment on the local sizes of the layout the values carry
    (`mesh_of`: XLA sees only those; a temporary whose global size exceeds a result's often
    fits its local allocation, the conv net's activations in its kernels' updates), on the
    global sizes without it, and a temporary is in its result's allocation where its local
    bytes fit there (exact bytes, as XLA sizes an allocation; `BlockBuffers.in_outputs`).
    The assignment so depends on the layout: auto's memory rows take the one of the layout
    they are built on and state per choice whether the bytes fit (`_fit_terms`). Only the
    values' own buffers and the copies made for dots (`_dot_copies`) are placed (a
    collective's, a region's peak, a value only a collective gives a buffer and a
    library reduce's input, whose buffer depends on the layout, stay temporaries), and not a loop's or a conditional's results: XLA colocates those with the
    loop's own buffers (its operands, its body's), assigned apart."""
    ret = block.terminator
    if ret is None:
        return {}
    index = found.index or {id(op): k for k, op in enumerate(block.ops)}

    def size_of(v: Value) -> int:
        return value_bytes(v, mesh_of) if mesh_of is not None else _global_bytes(v)

    # (global bytes, the first op at which it is busy, whether element-wise, the result index)
    slots: list[tuple[int, int, bool, int]] = []
    seen: set[int] = set()
    for i, v in enumerate(ret.operands):
        size = size_of(v)
        if i in aliased or id(v) in seen or not size:
            continue
        seen.add(id(v))
        src = v
        while getattr(src, "owner", None) is not None and src.owner.name in _TRANSPARENT:
            src = src.owner.operands[0]
        owner = getattr(src, "owner", None)
        if owner is None or owner.name in _CONSTANTS or owner.parent is not block:
            slots.append((size, -1, False, i))
        else:
            slots.append((size, index.get(id(owner), -1), owner.name in _FUSIBLE, i))
    if not slots:
        return {}
    # the allocations in the order XLA makes them (largest first), tried smallest first
    slots.sort(key=lambda s: -s[0])
    busy: list[list[tuple[int, int]]] = [[] for _ in slots]  # the temporaries placed
    sizes = {
        i: size_of(b.value)  # type: ignore[arg-type]
        for i, b in enumerate(found.buffers)
        if (b.kind == "copy" and b.value is not None)
        or b.kind == "value"
        and b.value is not None
        and b.op.name not in _TUPLED
        and not b.min_elements
        and _own_buffer(b.value, live, set(), funcs, found.twins)
    }
    out: dict[int, int] = {}
    for i in sorted(sizes, key=lambda i: (-sizes[i], found.buffers[i].start)):
        b, nbytes = found.buffers[i], sizes[i]
        for j in range(len(slots) - 1, -1, -1):
            size, first, in_place, result = slots[j]
            shares = b.end == first and in_place and nbytes == size and not _reshaped_dot(b.value)
            if size < nbytes or (b.end >= first and not shares):
                continue
            if any(b.start <= e and s <= b.end for s, e in busy[j]):
                continue
            busy[j].append((b.start, b.end))
            out[i] = result
            break
    return out


def result_bytes(func: Operation, i: int, v: Value, mesh_of: MeshOf) -> int:
    """Local bytes of result `i` of entry func `func` (value `v`), as declared, else as
    returned, cut as the export cuts I/O shardings."""
    s = layout.declared_result_sharding(func, i) or layout.value_sharding(v)
    t = v.type
    if s is not None and isinstance(t, TensorType):
        s = layout.io_sharding(s, t.shape, mesh_of(s), is_main=True)
    return value_bytes(v, mesh_of, s)


def _global_bytes(v: Value) -> int:
    n = _global_elements(v)
    return n * element_bytes(v.type.element_type) if n else 0  # type: ignore[attr-defined]


def _aliased_results(func: Operation, mesh_of: MeshOf | None = None) -> frozenset[int]:
    """The results of `func` aliased with a donated argument: XLA writes them into the
    argument's allocation. An argument names its result (`tf.aliasing_output`), or is only a
    donor (`jax.buffer_donor`, JAX's lowering where the pairs are left to XLA): XLA pairs
    each donor, in order, with the first result not yet aliased of the same type and the
    same local bytes (`mesh_of`; where not given, donors are not paired)."""
    raw = func.properties.get("arg_attrs")
    if raw is None:
        return frozenset()
    attrs = parse_dict_list(raw) if isinstance(raw, str) else raw
    out: set[int] = set()
    donors: list[int] = []
    for k, d in enumerate(getattr(attrs, "items", [])):
        alias = d.get("tf.aliasing_output") if hasattr(d, "get") else None
        m = re.search(r"-?\d+", str(alias)) if alias is not None else None
        if m:
            out.add(int(m.group(0)))
        elif hasattr(d, "get") and "true" in str(d.get("jax.buffer_donor", "")).lower():
            donors.append(k)
    body = func_body(func)
    ret = body.terminator if body is not None else None
    if not donors or mesh_of is None or body is None or ret is None:
        return frozenset(out)
    for k in donors:
        if k >= len(body.args):
            continue
        a = body.args[k]
        size = value_bytes(a, mesh_of)
        for i, v in enumerate(ret.operands):
            if i not in out and str(v.type) == str(a.type):
                if result_bytes(func, i, v, mesh_of) == size:
                    out.add(i)
                    break
    return frozenset(out)


def _captures(op: Operation) -> set[int]:
    """The values a case's branches read from outside it (XLA passes them as a tuple)."""
    inside = {id(r) for inner in op.walk() for r in inner.results}
    return {
        id(v)
        for inner in op.walk()
        if inner is not op
        for v in inner.operands
        if id(v) not in inside
    }


def _dying_operand(
    op: Operation,
    k: int,
    size: int,
    held: dict[int, int],
    intervals: list[Buffer],
    candidates: list[Value] | None = None,
) -> int | None:
    """The interval of an operand of `op` (of `candidates` when given) whose buffer ends at
    `op` (position `k`) and is `size` bytes: XLA's buffer assignment lets an element-wise
    fusion write its result there, but not in the result of a dot XLA reshapes
    (`_reshaped_dot`)."""
    for v in op.operands if candidates is None else candidates:
        i = held.get(id(v))
        if i is not None and intervals[i].end == k and intervals[i].nbytes == size:
            if not _reshaped_dot(v):
                return i
    return None


def _reshaped_dot(v: Value) -> bool:
    """Whether `v` is the result of a dot that XLA computes in another shape: its CPU backend
    runs a dot_general as [batch, rows, columns], each operand's free dims (neither batch nor
    contracting) merged into one and dims of size 1 dropped, and reshapes the result back. The element-wise fusion that
    reads such a result reads it through that reshape (a bitcast inside the fusion), and XLA
    computes a fusion in place of an operand only where every use of it inside the fusion is
    element-wise, so the fusion's result takes a buffer of its own while the dot's is still
    live."""
    owner = getattr(v, "owner", None)
    if owner is None or owner.name != "stablehlo.dot_general" or len(owner.operands) != 2:
        return False
    if isinstance(v.type, TensorType) and 1 in v.type.shape:
        return True  # (XLA drops a dot's dims of size 1 and reshapes its result back)
    f = struct_fields(attr_text(owner, "dot_dimension_numbers"))
    for side, (batch, contract) in enumerate(
        (
            (f.get("lhs_batching_dimensions", ()), f.get("lhs_contracting_dimensions", ())),
            (f.get("rhs_batching_dimensions", ()), f.get("rhs_contracting_dimensions", ())),
        )
    ):
        t = owner.operands[side].type
        if isinstance(t, TensorType) and t.rank - len(batch) - len(contract) > 1:
            return True
    return False


def is_argument_of(v: Value, block: Block | None) -> bool:
    """Whether `v` is computed from the arguments of `block` alone: an argument, or what ops
    XLA fuses (a reverse, a transpose, a convert, element-wise ops) or reshapes make of
    arguments and constants. XLA's scheduler runs the all-gathers that read only the entry
    computation's parameters (an FSDP weight's, and the reversed kernel of a backward
    convolution) at the start of the program (seen on its CPU backend: the parameters'
    all-gathers are scheduled first), so that their results live from the start to their
    last reader."""
    work, seen, args = [v], 0, 0
    while work:
        cur = work.pop()
        seen += 1
        if seen > _ARGUMENT_SEARCH:
            return False
        if isinstance(cur, BlockArgument):
            if cur.block is not block:
                return False
            args += 1
            continue
        owner = getattr(cur, "owner", None)
        if owner is None:
            return False
        if owner.name in _CONSTANTS:
            continue
        if owner.name not in _TRANSPARENT and owner.name not in _FUSIBLE:
            return False
        work.extend(owner.operands)
    return args > 0


# the most values `is_argument_of` looks through
_ARGUMENT_SEARCH = 32


def _conv_copies(
    op: Operation,
    mesh_of: MeshOf,
    live: Liveness | None,
    gathered: set[int],
    terminator: Operation | None,
    copied: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
) -> list[Value]:
    """The values XLA's CPU backend makes a transposed copy of for the convolution `op` (none
    for any other op), each a buffer of the value's bytes live at the op: it runs a convolution only on operands in the
    order [batch, spatial..., feature] and [spatial..., input feature, output feature] with
    the result as [batch, spatial..., feature], and elsewhere transposes the operands into that
    order and the result back (the backward convolutions of a train step). A transpose that
    keeps the order of the dims of size > 1 is a bitcast, no copy. An operand's copy replaces
    its buffer where the conv is its only reader and an element-wise op makes it (the
    transpose fuses into that op); the result's copy is extra where the result is kept in its
    own order (a collective, the return or an unfusible op reads it), else the transpose fuses
    into its readers. An operand gathered at the op is read from the copy the gather makes
    (`copied`: `plan.gather_copy`), written in the order the convolution wants."""
    if op.name != "stablehlo.convolution" or len(op.operands) != 2 or len(op.results) != 1:
        return []
    d = conv_dims(attr_text(op, "dimension_numbers") or "")
    lhs, rhs = op.operands
    res = op.results[0]
    n = len(d.input_spatial)
    orders = (
        (lhs, (d.input_batch, *d.input_spatial, d.input_feature)),
        (rhs, (*d.kernel_spatial, d.kernel_input_feature, d.kernel_output_feature)),
        (res, (d.output_batch, *d.output_spatial, d.output_feature)),
    )
    out: list[Value] = []
    for v, order in orders:
        if len(order) != n + 2 or _transpose_is_bitcast(v, order, mesh_of):
            continue
        if (id(op), id(v)) in copied:
            continue
        if v is res:
            users = [u for u in _consumers(res) if live is None or live.op_live(u)]
            kept = id(res) in gathered or any(
                u is terminator
                or (u.name not in _FUSIBLE and u.name not in _FUSION_ROOTS and u.name != CALL)
                for u in users
            )
            if kept:
                out.append(res)
            continue
        owner = getattr(v, "owner", None)
        readers = [u for u in _consumers(v) if live is None or live.op_live(u)]
        if owner is not None and owner.name in _FUSIBLE and readers == [op]:
            continue  # (the transpose fuses into the op that makes the operand)
        out.append(v)
    return out


def _dot_copies(
    op: Operation,
    mesh_of: MeshOf,
    live: Liveness | None,
    copied: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
) -> list[tuple[Value, bool]]:
    """The operands XLA copies for the dot_general `op` (none for any other op), each a
    buffer of the operand's bytes: XLA makes a dot canonical before its CPU backend runs it
    (its dot decomposer), each operand read as [batch, free, contracting] (the lhs) or
    [batch, contracting, free] (the rhs), the batch and contracting dims in the order the
    dimension numbers list them and several free or contracting dims merged into one; an
    operand whose dims are not in that order is transposed into it, a copy where the
    transpose moves data (dims of size > 1 change order; a single free and a single
    contracting dim may come in either order: the backend reads a matrix transposed). The
    copy is extra where the operand has a buffer of its own (an unfusible op's result, an
    argument); where a fusible op makes it for this dot alone, the transpose fuses into that
    op. An operand gathered at the op is read from the gather's copy (`copied`). Per copy:
    whether the dot is the operand's only reader (its buffer dies at its copy, so the
    copies of such operands are made one at a time, each beside one source)."""
    if op.name != "stablehlo.dot_general" or len(op.operands) != 2:
        return []
    f = struct_fields(attr_text(op, "dot_dimension_numbers"))
    out: list[tuple[Value, bool]] = []
    for side, v in enumerate(op.operands):
        t = v.type
        if not isinstance(t, TensorType) or (id(op), id(v)) in copied:
            continue
        prefix = "lhs" if side == 0 else "rhs"
        batch = list(f.get(f"{prefix}_batching_dimensions", ()))
        contract = list(f.get(f"{prefix}_contracting_dimensions", ()))
        free = [d for d in range(t.rank) if d not in batch and d not in contract]
        orders = [batch + free + contract] if side == 0 else [batch + contract + free]
        if len(free) == 1 and len(contract) == 1:
            orders.append(batch + contract + free if side == 0 else batch + free + contract)
        if any(_transpose_is_bitcast(v, tuple(order), mesh_of) for order in orders):
            continue
        src = v
        while getattr(src, "owner", None) is not None and src.owner.name in _TRANSPARENT:
            src = src.owner.operands[0]
        owner = getattr(src, "owner", None)
        readers = [u for u in _consumers(src) if live is None or live.op_live(u)]
        if owner is not None and owner.name in _FUSIBLE and readers == [op]:
            continue  # (the transpose fuses into the op that makes the operand)
        out.append((v, readers == [op]))
    return out


def _transpose_is_bitcast(v: Value, order: tuple[int, ...], mesh_of: MeshOf) -> bool:
    """Whether reading `v`'s dims in `order` is a bitcast of its local (row-major) buffer:
    the dims of size > 1 keep their order."""
    t = v.type
    if not isinstance(t, TensorType) or sorted(order) != list(range(t.rank)):
        return True
    s = layout.value_sharding(v)
    mesh = mesh_of(s)
    shape = t.shape if mesh is None else local_shape(t.shape, dim_axes(s, t.rank), mesh)
    kept = [dim for dim in order if shape[dim] != 1]
    return kept == sorted(kept)


def _top_level(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or holds it in a region."""
    cur: Operation | None = op
    while cur is not None and cur.parent is not block:
        cur = cur.parent_op
    return cur
