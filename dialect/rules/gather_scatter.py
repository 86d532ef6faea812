"""gather and scatter (one shared walk over the slices dims, as Shardy does)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir import BlockArgument, Operation, OpResult
from ..types import TensorType
from .attrs import attr_text, struct_fields
from .builder import NR, PT, R, RuleBuilder, shape_of
from .model import FactorKind, OpShardingRule
from .registry import register_rule

# (input dim, indices dim, slices dim, size, kind, blocked); None = absent
AddFn = Callable[[int | None, int | None, int | None, int, FactorKind, bool], None]

# the associative and commutative ops a scatter body may combine updates with (as one reduction)
_REDUCING_BODY_OPS = frozenset(f"stablehlo.{n}" for n in ("add", "multiply", "maximum", "minimum"))
# logical ones, for i1 elements only
_LOGICAL_BODY_OPS = frozenset({"stablehlo.and", "stablehlo.or"})


def _walk(
    input_shape: Sequence[int],
    slices_shape: Sequence[int],
    indices_shape: Sequence[int],
    index_vector_dim: int,
    offset_dims: Sequence[int],
    collapsed: Sequence[int],
    input_batching: Sequence[int],
    indices_batching: Sequence[int],
    is_scatter: bool,
    implicit_batch_kind: FactorKind,
    add: AddFn,
) -> None:
    input_dim = 0
    batch_pos = 0
    for slices_dim, slices_size in enumerate(slices_shape):
        if slices_dim in offset_dims:
            while input_dim in collapsed or input_dim in input_batching:
                input_dim += 1
            input_size = input_shape[input_dim]
            if input_size == slices_size:
                add(input_dim, None, slices_dim, input_size, PT, False)
            elif is_scatter:
                add(input_dim, None, None, input_size, NR, False)
                add(None, None, slices_dim, slices_size, NR, False)
            elif slices_size == 1:
                add(input_dim, None, None, input_size, R, False)
                add(None, None, slices_dim, slices_size, NR, False)
            else:
                add(input_dim, None, slices_dim, input_size, NR, True)
            input_dim += 1
        else:
            indices_dim = batch_pos if batch_pos < index_vector_dim else batch_pos + 1
            if indices_dim in indices_batching:
                in_batch = input_batching[list(indices_batching).index(indices_dim)]
                add(in_batch, indices_dim, slices_dim, slices_size, PT, False)
            else:
                add(None, indices_dim, slices_dim, slices_size, implicit_batch_kind, False)
            batch_pos += 1
    for d in collapsed:
        size = input_shape[d]
        if is_scatter:
            add(d, None, None, size, PT, False)
        else:
            add(d, None, None, size, NR if size == 1 else R, False)
    if index_vector_dim < len(indices_shape):
        add(None, index_vector_dim, None, indices_shape[index_vector_dim], NR, False)


@register_rule("stablehlo.gather")
def gather(op: Operation) -> OpShardingRule:
    f = struct_fields(attr_text(op, "dimension_numbers"))
    input_shape, indices_shape = shape_of(op.operands[0]), shape_of(op.operands[1])
    b = RuleBuilder.for_op(op)

    def add(i, x, s, size, kind, blocked):  # type: ignore[no-untyped-def]
        b.add_factor([i, x], s, size, kind, blocked)

    _walk(
        input_shape,
        shape_of(op.results[0]),
        indices_shape,
        f.get("index_vector_dim", len(indices_shape)),
        f.get("offset_dims", ()),
        f.get("collapsed_slice_dims", ()),
        f.get("operand_batching_dims", ()),
        f.get("start_indices_batching_dims", ()),
        False,
        PT,
        add,
    )
    return b.build()


def _reducing_body(op: Operation) -> bool:
    """Whether the scatter's body combines each input's old value and update with one binary
    reduction, the same for every input (what lets the updates be scattered per device and the
    results all-reduced)."""
    n = len(op.results)
    if not op.regions or not op.regions[0].blocks:
        return False
    block = op.regions[0].blocks[0]
    ret = block.terminator
    if len(block.args) != 2 * n or ret is None or len(ret.operands) != n:
        return False
    names = set()
    for i, v in enumerate(ret.operands):
        if not isinstance(v, OpResult) or len(v.owner.operands) != 2:
            return False
        combine = v.owner
        logical = isinstance(v.type, TensorType) and v.type.element_type == "i1"
        if combine.name not in _REDUCING_BODY_OPS and not (
            logical and combine.name in _LOGICAL_BODY_OPS
        ):
            return False
        names.add(combine.name)
        args = {_arg_index(x, block) for x in combine.operands}
        if args != {i, i + n}:
            return False
    return len(names) == 1


def _arg_index(v: object, block: object) -> int | None:
    return v.index if isinstance(v, BlockArgument) and v.block is block else None


@register_rule("stablehlo.scatter")
def scatter(op: Operation) -> OpShardingRule:
    f = struct_fields(attr_text(op, "scatter_dimension_numbers"))
    n = len(op.results)
    input_shape = shape_of(op.operands[0])
    indices_shape = shape_of(op.operands[n])
    b = RuleBuilder.for_op(op)

    def add(i, x, s, size, kind, blocked):  # type: ignore[no-untyped-def]
        b.add_factor([i] * n + [x] + [s] * n, i, size, kind, blocked)

    _walk(
        input_shape,
        shape_of(op.operands[n + 1]),
        indices_shape,
        f.get("index_vector_dim", len(indices_shape)),
        f.get("update_window_dims", ()),
        f.get("inserted_window_dims", ()),
        f.get("input_batching_dims", ()),
        f.get("scatter_indices_batching_dims", ()),
        True,
        R if _reducing_body(op) else NR,
        add,
    )
    return b.build()
