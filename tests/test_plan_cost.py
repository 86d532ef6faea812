"""The plan's byte model on plain data: local sizes, reshards, reductions, common axes, memory."""

from __future__ import annotations

from shardc.dialect.layout_math import axes_layout, local_bytes, local_shape
from shardc.dialect.rules.builder import RuleBuilder
from shardc.dialect.rules.model import FactorKind
from shardc.dialect.shardings import AxisRef, Mesh, TensorSharding
from shardc.passes.plan.common_axes import common_axes, compatible_axes
from shardc.passes.plan.cost import (
    peak_live,
    reduction_steps,
    reshard_bytes,
    reshard_steps,
)
from shardc.passes.plan.op_cost import Tensor, op_cost, op_steps, project_tensor

MESH = Mesh.of(x=4, y=2)
X, Y = AxisRef("x"), AxisRef("y")
X1, X2 = AxisRef("x", (1, 2)), AxisRef("x", (2, 2))
SHAPE = (16, 8)  # f32: 512 B global


def L(dims: tuple[tuple[AxisRef, ...], ...], mesh: Mesh = MESH) -> TensorSharding:
    """The layout splitting dim d over `dims[d]`."""
    return axes_layout(mesh, dims)


def kinds(src, dst, shape=SHAPE, style="xla"):  # noqa: ANN001, ANN202 - terse helpers for the table below
    return [(s.kind, s.axes, s.bytes) for s in reshard_steps(shape, 4, L(src), L(dst), MESH, style)]


def test_local_shape_and_bytes_round_up_like_xla_pads() -> None:
    assert local_shape((16, 8), ((X,), (Y,)), MESH) == (4, 4)
    assert local_shape((6, 8), ((X,), ()), MESH) == (2, 8)  # 6/4 padded to 2 rows
    assert local_bytes((16, 8), 2, ((X, Y), ()), MESH) == 2 * 8 * 2
    assert local_bytes((16, 8), 4, ((X1,), ()), MESH) == 8 * 8 * 4


def test_same_sharding_needs_nothing() -> None:
    assert kinds(((X,), ()), ((X,), ())) == []
    assert kinds(((), ()), ((), ())) == []


def test_all_gather_costs_the_gathered_result() -> None:
    assert kinds(((X,), ()), ((), ())) == [("all-gather", (X,), 512)]
    # gathering the minor axis of a dim keeps the major one: result is 16/4 x 8
    assert kinds(((X, Y), ()), ((X,), ())) == [("all-gather", (Y,), 128)]


def test_all_slice_is_free() -> None:
    assert kinds(((), ()), ((X,), ())) == [("all-slice", (X,), 0)]
    # a sub-axis refined to the full axis: slice the minor half
    assert kinds(((X1,), ()), ((X,), ())) == [("all-slice", (X2,), 0)]


def test_all_to_all_moves_an_axis_between_dims() -> None:
    assert kinds(((X,), ()), ((), (X,))) == [("all-to-all", (X,), 128)]
    assert kinds(((X, Y), ()), ((X,), (Y,))) == [("all-to-all", (Y,), 64)]


def test_collective_permute_for_other_blocks_of_the_same_size() -> None:
    mesh = Mesh.of(a=2, b=2)
    a, b = AxisRef("a"), AxisRef("b")
    steps = reshard_steps((8, 8), 4, L(((a,), (b,)), mesh), L(((b,), (a,)), mesh), mesh)
    assert [(s.kind, s.bytes) for s in steps] == [("collective-permute", 4 * 4 * 4)]


def test_aligned_blocks_slice_permute_gather() -> None:
    # y (2 blocks of 8 rows) -> x (4 blocks of 4 rows): slice the major half of x locally,
    # then one collective-permute of the 4-row blocks (XLA: dynamic-slice + permute)
    assert kinds(((Y,), ()), ((X,), ())) == [
        ("all-slice", (X1,), 0),
        ("collective-permute", (X,), 128),
    ]
    # x -> y: both models permute the 4-row blocks into place, then gather half of x (Shardy
    # its minor half, XLA its major half: `ReshardToPartialReplicateWithAllGather`)
    assert kinds(((X,), ()), ((Y,), ()), style="shardy") == [
        ("collective-permute", (Y,), 128),
        ("all-gather", (X2,), 256),
    ]
    assert reshard_bytes(SHAPE, 4, L(((X,), ())), L(((Y,), ())), MESH, "shardy") == 384
    assert kinds(((X,), ()), ((Y,), ())) == [
        ("collective-permute", (X, Y), 128),
        ("all-gather", (X1,), 256),
    ]


def test_unaligned_axes_gather_then_slice() -> None:
    mesh = Mesh.of(a=3, b=2)
    a, b = AxisRef("a"), AxisRef("b")
    steps = reshard_steps((12, 2), 4, L(((a,), ()), mesh), L(((b,), ()), mesh), mesh)
    assert [(s.kind, s.axes, s.bytes) for s in steps] == [
        ("all-gather", (a,), 96),
        ("all-slice", (b,), 0),
    ]


def test_reduction_all_reduce_or_reduce_scatter() -> None:
    # partial sums over x, result replicated: all-reduce of the whole local result
    steps = reduction_steps(SHAPE, 4, L(((), ())), (X,), L(((), ())), MESH)
    assert [(s.kind, s.axes, s.bytes) for s in steps] == [("all-reduce", (X,), 512)]
    # the result keeps x on dim 0: Shardy's reduce-scatter, measured on its (larger) operand;
    # XLA all-reduces the whole partial result and slices it, the same bytes
    steps = reduction_steps(SHAPE, 4, L(((), ())), (X,), L(((X,), ())), MESH, "shardy")
    assert [(s.kind, s.axes, s.bytes) for s in steps] == [("reduce-scatter", (X,), 512)]
    steps = reduction_steps(SHAPE, 4, L(((), ())), (X,), L(((X,), ())), MESH)
    assert [(s.kind, s.axes, s.bytes) for s in steps] == [
        ("all-reduce", (X,), 512),
        ("all-slice", (X,), 0),
    ]
    # over x and y, keeping x: reduce-scatter x, then all-reduce y on the scattered quarter
    steps = reduction_steps(SHAPE, 4, L(((), ())), (X, Y), L(((X,), ())), MESH, "shardy")
    assert [(s.kind, s.axes, s.bytes) for s in steps] == [
        ("reduce-scatter", (X,), 512),
        ("all-reduce", (Y,), 128),
    ]


def test_peak_live() -> None:
    assert peak_live([]) == 0
    assert peak_live([(0, 1, 10), (1, 2, 5), (3, 3, 7)]) == 15
    assert peak_live([(0, 0, 10), (1, 1, 5)]) == 10


def _dot_rule():  # noqa: ANN202
    # [i, k] x [k, j] -> [i, j]
    b = RuleBuilder([2, 2], [2])
    b.add_factor([0, None], 0, 16)
    b.add_factor([None, 1], 1, 8)
    b.add_factor([1, 0], [None], 32, FactorKind.REDUCTION)
    return b.build()


def test_dot_with_sharded_contraction_all_reduces() -> None:
    rule = _dot_rule()
    lhs = Tensor((16, 32), 4, L(((), (X,))))
    rhs = Tensor((32, 8), 4, L(((X,), ())))
    out = Tensor((16, 8), 4, L(((), ())))
    steps = op_steps(rule, [lhs, rhs, out], MESH)
    assert steps.operands == ((), ())
    assert [(s.kind, s.axes, s.bytes) for s in steps.results[0]] == [("all-reduce", (X,), 512)]
    assert op_cost(rule, [lhs, rhs, out], MESH) == 512


def test_dot_conflict_reshards_the_smaller_side() -> None:
    rule = _dot_rule()
    # lhs wants i on x, rhs has k on x: the bigger lhs (16x32) wins, rhs is all-gathered
    lhs = Tensor((16, 32), 4, L(((X,), ())))
    rhs = Tensor((32, 8), 4, L(((X,), ())))
    out = Tensor((16, 8), 4, L(((X,), ())))
    steps = op_steps(rule, [lhs, rhs, out], MESH)
    assert steps.common[0] == (X,) and steps.common[2] == ()
    assert [(s.kind, s.bytes) for s in steps.operands[1]] == [("all-gather", 32 * 8 * 4)]
    assert steps.results == ((),)


def test_common_axes_compatible_and_need_replication() -> None:
    b = RuleBuilder([1], [1])
    b.add_factor(0, 0, 16, FactorKind.NEED_REPLICATION)
    rule = b.build()
    sharded = Tensor((16,), 4, L(((X,),)))
    projs = [project_tensor(sharded, rule.operand_dims[0], rule, MESH)] * 2
    assert compatible_axes(projs, rule, MESH) is None  # a sharded need-replication factor
    assert common_axes(projs, rule, [16, 16], MESH) == [()]
    # element-wise, both sides agree: nothing to do
    pw = RuleBuilder([2], [2]).add_pointwise((16, 8)).build()
    t = Tensor((16, 8), 4, L(((X,), (Y,))))
    p = project_tensor(t, pw.operand_dims[0], pw, MESH)
    assert compatible_axes([p, p], pw, MESH) == [(X,), (Y,)]


def test_elementwise_at_result_layout_or_shardy_choice() -> None:
    pw = RuleBuilder([2, 2], [2]).add_pointwise((16, 8)).build()
    a = Tensor((16, 8), 4, L(((X,), ())))
    b = Tensor((16, 8), 4, L(((Y,), ())))
    out = Tensor((16, 8), 4, L(((), ())))
    # XLA (pinned result replicated): both operands gathered, no result reshard
    xla = op_steps(pw, [a, b, out], MESH, style="xla")
    assert [s.kind for st in xla.operands for s in st] == ["all-gather", "all-gather"]
    assert xla.results == ((),)
    # Shardy: tie on size, the larger axis x wins; b resharded to x, result gathered after
    shardy = op_steps(pw, [a, b, out], MESH, style="shardy")
    assert shardy.common[0] == (X,)
    assert [s.kind for s in shardy.results[0]] == ["all-gather"]


def test_cost_function_on_the_ir() -> None:
    # the API automatic sharding uses: a reshard of a value, an op under given shardings,
    # the memory of a module's layout
    from shardc import import_text
    from shardc.dialect.shardings import DimSharding, TensorSharding
    from shardc.passes.plan.plan import layout_memory, op_cost_of, reshard_cost

    module = import_text(
        'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'
        "func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x32xf32>) -> tensor<8x32xf32> {\n"
        "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]"
        " : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>\n"
        "  return %0 : tensor<8x32xf32>\n}\n"
    )
    main = module.funcs["main"]
    body = main.regions[0].entry
    dot = body.ops[0]

    def s(*dims: tuple[AxisRef, ...]) -> TensorSharding:
        return TensorSharding("mesh", tuple(DimSharding(d) for d in dims))

    lhs = body.args[0]
    assert reshard_cost(lhs, s((X,), ()), None, MESH) == 8 * 16 * 4  # all-gather to replicated
    assert reshard_cost(lhs, None, s((X,), ()), MESH) == 0  # a slice is free
    # contraction on x on both sides, result replicated: all-reduce of the 8x32 f32 result
    assert op_cost_of(dot, [s((), (X,)), s((X,), ())], [s((), ())], MESH) == 8 * 32 * 4
    assert op_cost_of(dot, [s((X,), ()), s((), ())], [s((X,), ())], MESH) == 0
    mem = layout_memory(module)  # nothing sharded: whole tensors
    assert (mem.arguments, mem.results) == (8 * 16 * 4 + 16 * 32 * 4, 8 * 32 * 4)
    lhs.sharding = s((X,), ())
    assert layout_memory(module).arguments == 2 * 16 * 4 + 16 * 32 * 4


def test_halo_rows() -> None:
    from shardc.passes.plan.halo import halo_rows

    # pad 2 rows each side of 16 rows on 4 devices: one row from each neighbour
    assert halo_rows(lambda j: (j - 2, j - 2) if 2 <= j < 18 else None, 16, 20, 4) == [1, 1]
    # the first half of 16 rows on 4 devices: device 3 reads rows 6-7 from device 1
    assert halo_rows(lambda j: (j, j), 16, 8, 4) == [4, 2]
    # a reverse swaps mirror blocks
    assert halo_rows(lambda j: (15 - j, 15 - j), 16, 16, 4) == [4]
    # a slice that keeps every device's own rows moves nothing
    assert halo_rows(lambda j: (j, j), 16, 16, 4) == []


def test_liveness_follows_loop_carries_and_calls() -> None:
    from shardc import import_text
    from shardc.passes.plan.liveness import liveness

    module = import_text(
        """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %x = %a, %y = %b) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %x2 = stablehlo.negate %x : tensor<4xf32>
    %y2 = stablehlo.abs %y : tensor<4xf32>
    stablehlo.return %j, %x2, %y2 : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  %dead = func.call @f(%b) : (tensor<4xf32>) -> tensor<4xf32>
  return %r#1 : tensor<4xf32>
}
func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
    )
    live = liveness(module)
    ops = {op.name: op for op in module.funcs["main"].walk()}
    loop = ops["stablehlo.while"]
    assert live.carry_live(loop, 0) and live.carry_live(loop, 1)  # the counter, the result
    assert not live.carry_live(loop, 2)  # a carry no iteration reads, nothing returns
    assert live.op_live(ops["stablehlo.negate"]) and not live.op_live(ops["stablehlo.abs"])
    assert not live.op_live(ops["func.call"])
    (tanh,) = [op for op in module.funcs["f"].walk() if op.name == "stablehlo.tanh"]
    assert not live.op_live(tanh)
