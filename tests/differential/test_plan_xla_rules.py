"""Each rule of docs/xla_partitioner.md against XLA itself: a small module per case is planned
and compiled (`shardc.plan(text, check=True)`, XLA on 8 virtual CPU devices) and the planned
collectives (kind, mesh axes, bytes) must be the ones XLA's partitioned HLO has. Nothing here
is a recorded answer: a newer XLA (or another backend) that partitions a case otherwise fails
its test, naming the rule and both sides."""

from __future__ import annotations

from collections import Counter

import pytest

import shardc

from . import harness as H

MESH = '["x"=4, "y"=2]'
X, Y, XY = ("x",), ("y",), ("x", "y")


def _s(dims: tuple[tuple[str, ...], ...]) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims) + "]"


def _module(body: str, ins: list[tuple[str, tuple]], out: tuple[str, tuple], mesh: str) -> str:
    args = ", ".join(
        f"%arg{i}: tensor<{t}> {{sdy.sharding = #sdy.sharding<@mesh, {_s(s)}>}}"
        for i, (t, s) in enumerate(ins)
    )
    return (
        f"sdy.mesh @mesh = <{mesh}>\n"
        f"func.func @main({args}) -> (tensor<{out[0]}> "
        f"{{sdy.sharding = #sdy.sharding<@mesh, {_s(out[1])}>}}) {{\n  {body}\n"
        f"  return %r : tensor<{out[0]}>\n}}\n"
    )


def _compare(rule: str, text: str) -> None:
    check = shardc.plan(text, check=True).check
    planned = Counter((c.kind, c.axes, c.bytes) for c in check.planned if c.kind != "all-slice")
    compiled = Counter((c.kind, c.axes, c.bytes) for c in check.compiled)
    assert planned == compiled, (
        f"XLA partitions this case otherwise than docs/xla_partitioner.md ({rule}) says: "
        f"planned {sorted(planned.elements())}, compiled {sorted(compiled.elements())}"
    )


def _dot(lhs: tuple, rhs: tuple, out: tuple, mesh: str = MESH) -> str:
    body = (
        "%r = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
        "(tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>"
    )
    return _module(body, [("8x16xf32", lhs), ("16x32xf32", rhs)], ("8x32xf32", out), mesh)


DOTS = [
    # one operand shards the contracting dim over part of the mesh: XLA gathers it
    ("rhs contracting on x, output whole", ((), ()), (X, ()), ((), ()), MESH),
    ("lhs contracting on x, output whole", ((), X), ((), ()), ((), ()), MESH),
    # ... over every device, bigger than the result: partial sums and an all-reduce
    ("rhs contracting on all devices", ((), ()), (("x",), ()), ((), ()), '["x"=8]'),
    ("rhs contracting on x and y", ((), ()), (XY, ()), ((), ()), MESH),
    # ... over every device the other dims leave free (the lhs rows take y)
    ("rows on y, contracting on x", (Y, ()), (X, ()), (Y, ()), MESH),
    # ... but smaller than the result: gathered
    ("lhs contracting on all devices, small", ((), ("x",)), ((), ()), ((), ()), '["x"=8]'),
    # the output splits the lhs rows: the lhs is sliced, the rhs gathered
    ("output rows on x", ((), ()), (X, ()), (X, ()), '["x"=8]'),
    # the output splits the rhs columns: the rhs moves its axis there (all-to-all)
    ("output columns on x", ((), ()), (X, ()), ((), X), MESH),
    # both operands shard it alike: an all-reduce, sliced to the result (no reduce-scatter)
    ("both contracting on x", ((), X), (X, ()), ((), ()), MESH),
    ("both contracting on x, rows kept on x", ((), X), (X, ()), (X, ()), MESH),
    # both shard it, differently: both are gathered
    ("contracting on x,y vs y", ((), XY), (Y, ()), ((), ()), MESH),
]


@pytest.mark.parametrize("name,lhs,rhs,out,mesh", DOTS, ids=[d[0] for d in DOTS])
def test_dot_contracting_dims(name: str, lhs: tuple, rhs: tuple, out: tuple, mesh: str) -> None:
    _compare("dot: contracting dims", _dot(lhs, rhs, out, mesh))


MESH3 = '["a"=2, "b"=2, "c"=2]'
AB, ABC = ("a", "b"), ("a", "b", "c")

# both operands split the contracting dim over several axes and the output splits other dims
# on some of them (a weight gradient under FSDP): one all-reduce per such output dim on the
# whole partial sums, then the slice, then the other axes all-reduced on the slice
REDUCED_PER_DIM = [
    ("rows on y", ((), XY), (XY, ()), (Y, ()), MESH),
    ("rows on x", ((), XY), (XY, ()), (X, ()), MESH),
    ("rows on y, columns on x", ((), XY), (XY, ()), (Y, X), MESH),
    ("rows on b, columns on c by the rhs", ((), AB), (AB, ("c",)), (("b",), ("c",)), MESH3),
    ("rows on b and c of three", ((), ABC), (ABC, ()), (("b", "c"), ()), MESH3),
    ("rows on a, columns on c of three", ((), ABC), (ABC, ()), (("a",), ("c",)), MESH3),
]


@pytest.mark.parametrize(
    "name,lhs,rhs,out,mesh", REDUCED_PER_DIM, ids=[d[0] for d in REDUCED_PER_DIM]
)
def test_dot_partial_sums_reduced_per_output_dim(
    name: str, lhs: tuple, rhs: tuple, out: tuple, mesh: str
) -> None:
    _compare("dot: partial sums reduced per output dim", _dot(lhs, rhs, out, mesh))


def _reduce(ins: tuple, dims: list[int], out: tuple) -> str:
    """A sum of a 8x16x4 tensor over `dims`."""
    keep = [n for i, n in enumerate((8, 16, 4)) if i not in dims]
    t = "x".join(map(str, keep)) + "xf32" if keep else "f32"
    body = (
        "%c = stablehlo.constant dense<0.0> : tensor<f32>\n"
        f"  %r = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = "
        f"[{', '.join(map(str, dims))}] : (tensor<8x16x4xf32>, tensor<f32>) -> tensor<{t}>"
    )
    return _module(body, [("8x16x4xf32", ins)], (t, out), MESH)


# partial sums over several split dims: one all-reduce per reduced dim, each on the whole
# partial result (a dim split on two axes is one all-reduce over both)
REDUCES = [
    ("two reduced dims, x and y", (X, Y, ()), [0, 1], ((),)),
    ("every dim reduced", (X, Y, ()), [0, 1, 2], ()),
    ("two reduced dims, the result split on x", (X, Y, ()), [0, 1], (X,)),
    ("one reduced dim on x and y", (XY, (), ()), [0, 1], ((),)),
]


@pytest.mark.parametrize("name,ins,dims,out", REDUCES, ids=[r[0] for r in REDUCES])
def test_reductions_all_reduce_per_reduced_dim(
    name: str, ins: tuple, dims: list, out: tuple
) -> None:
    _compare("reductions", _reduce(ins, dims, out))


def _constraint(a: tuple, b: tuple) -> str:
    body = (
        "%0 = stablehlo.negate %arg0 : tensor<16x32xf32>\n"
        f"  %1 = sdy.sharding_constraint %0 <@mesh, {_s(b)}> : tensor<16x32xf32>\n"
        "  %r = stablehlo.negate %1 : tensor<16x32xf32>"
    )
    return _module(body, [("16x32xf32", a)], ("16x32xf32", b), MESH)


RESHARDS = [
    ("an axis moves to another dim: all-to-all", (X, ()), ((), X)),
    ("the same blocks on other devices: collective-permute", (XY, ()), (("y", "x"), ())),
    ("other axes on another dim: gather, then slice", (X, ()), ((), Y)),
    ("other axes on the same dim: gather, then slice", ((), Y), (X, ())),
    ("part of a dim's axes dropped: gather them", (XY, ()), (X, ())),
    ("a finer split: a local slice", (X, ()), (X, Y)),
    # y moves to the dim x splits, ahead of x: an all-to-all puts it after x, then the blocks
    # go to their devices (collective-permute); no gather
    ("an axis moves ahead of another: all-to-all, permute", (Y, X), ((), ("y", "x"))),
    # from a partial replication to a split of every device: the replicated devices slice the
    # target dim first, the moved axis lands after them, then a permute where the target
    # orders them otherwise
    ("replicated devices slice, y lands after x: permute", ((), Y), (("y", "x"), ())),
    ("replicated devices slice, x lands after y: permute", ((), X), (XY, ())),
    # block counts, not axes, are matched: the minor blocks of a dim move to another with an
    # all-to-all over their devices, then a permute puts each block on its device
    ("the minor blocks of a dim move by count", ((), XY), (X, Y)),
    # a partially replicated value whose dims shift by one: one all-to-all, then a slice
    ("dims shift down, the replicated devices slice the last", ((), X), (X, Y)),
]


@pytest.mark.parametrize("name,a,b", RESHARDS, ids=[r[0] for r in RESHARDS])
def test_reshards(name: str, a: tuple, b: tuple) -> None:
    _compare("reshards", _constraint(a, b))


def _unary(body: str, ins: tuple, out_type: str, out: tuple, in_type: str = "16x8xf32") -> str:
    return _module(body, [(in_type, ins)], (out_type, out), MESH)


PAD = (
    "%c = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.pad %arg0, %c, low = [2, 0], high = [2, 0], interior = [0, 0]"
    " : (tensor<16x8xf32>, tensor<f32>) -> tensor<20x8xf32>"
)
HALOS = [
    ("pad two rows each side", PAD, (X, ()), "20x8xf32", (X, ())),
    (
        "slice the first half",
        "%r = stablehlo.slice %arg0 [0:8, 0:8] : (tensor<16x8xf32>) -> tensor<8x8xf32>",
        (X, ()),
        "8x8xf32",
        (X, ()),
    ),
    # the result split on the moved dim: the operand (not the result) is resharded to the
    # result's layout (an all-to-all), then the halos are exchanged on it
    (
        "slice, the result split on the sliced dim",
        "%r = stablehlo.slice %arg0 [2:14, 0:8] : (tensor<16x8xf32>) -> tensor<12x8xf32>",
        ((), X),
        "12x8xf32",
        (X, ()),
    ),
    ("pad, the result split on the padded dim", PAD, ((), X), "20x8xf32", (X, ())),
    (
        "reverse a split dim",
        "%r = stablehlo.reverse %arg0, dims = [0] : tensor<16x8xf32>",
        (X, ()),
        "16x8xf32",
        (X, ()),
    ),
]


@pytest.mark.parametrize("name,body,ins,out_type,out", HALOS, ids=[h[0] for h in HALOS])
def test_halo_exchanges(name: str, body: str, ins: tuple, out_type: str, out: tuple) -> None:
    _compare("halos", _unary(body, ins, out_type, out))


RESHAPES = [
    # the sharded dim is the major part of the merged dim: nothing moves
    ("merge, major dim split", (X, ()), "16x8xf32", "128xf32", (X,)),
    # the sharded dim becomes the minor part of a merged dim: gathered first
    ("merge, minor dim split", ((), Y), "8x16xf32", "2x64xf32", ((), Y)),
    ("merge, minor dim split, moved", ((), X), "16x8xf32", "128xf32", (X,)),
    ("split a split dim", (("x", "y"),), "128xf32", "16x8xf32", (X, Y)),
]


@pytest.mark.parametrize("name,ins,t_in,t_out,out", RESHAPES, ids=[r[0] for r in RESHAPES])
def test_reshapes(name: str, ins: tuple, t_in: str, t_out: str, out: tuple) -> None:
    body = f"%r = stablehlo.reshape %arg0 : (tensor<{t_in}>) -> tensor<{t_out}>"
    _compare("reshapes", _unary(body, ins, t_out, out, t_in))


GATHER = (
    "%i = stablehlo.reshape %arg1 : (tensor<8xi32>) -> tensor<8x1xi32>\n"
    '  %r = "stablehlo.gather"(%arg0, %i) <{dimension_numbers = #stablehlo.gather<offset_dims'
    " = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, "
    "indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<32x16xf32>, "
    "tensor<8x1xi32>) -> tensor<8x16xf32>"
)


@pytest.mark.parametrize("rows", [X, XY], ids=["rows on x", "rows on x and y"])
def test_gather_on_a_split_indexed_dim_is_masked_and_all_reduced(rows: tuple) -> None:
    text = _module(
        GATHER, [("32x16xf32", (rows, ())), ("8xi32", ((),))], ("8x16xf32", ((), ())), MESH
    )
    _compare("gathers", text)


def _dus(rows: int, start: str, operand: tuple = (X, ()), result: tuple = (X, ())) -> str:
    """A dynamic_update_slice of `rows` rows at `start` (a constant, or `%arg2`: known only at
    run time) into 16x16 rows laid out as `operand` (rows split on x), the result as
    `result`."""
    index = "%arg2" if start == "dynamic" else "%s"
    body = (
        f"%s = stablehlo.constant dense<{0 if start == 'dynamic' else start}> : tensor<i32>\n"
        "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
        f"  %r = stablehlo.dynamic_update_slice %arg0, %arg1, {index}, %c : (tensor<16x16xf32>, "
        f"tensor<{rows}x16xf32>, tensor<i32>, tensor<i32>) -> tensor<16x16xf32>"
    )
    ins = [("16x16xf32", operand), (f"{rows}x16xf32", ((), ())), ("i32", ())]
    return _module(body, ins, ("16x16xf32", result), MESH)


DUS = [
    # in place: one row anywhere, or rows within one block of four at a constant start
    ("one row, start at run time", 1, "dynamic"),
    ("four rows from a block boundary", 4, "4"),
    ("two rows inside a block", 2, "9"),
    # gathered: several rows from a start known at run time, or across a block boundary
    ("four rows, start at run time", 4, "dynamic"),
    ("four rows across a boundary", 4, "3"),
]


@pytest.mark.parametrize("name,rows,start", DUS, ids=[d[0] for d in DUS])
def test_dynamic_update_slice_on_a_split_dim(name: str, rows: int, start: str) -> None:
    _compare("dynamic_update_slice", _dus(rows, start))


# the op is partitioned at its result's layout, whatever the operand's: the split dim that
# decides is the result's
DUS_AT_RESULT = [
    ("operand split on the other dim, result on the sliced dim", 4, (("y",), ()), (X, ())),
    ("operand split on the sliced dim, result on the other", 4, (X, ()), ((), X)),
    ("one row, result on the sliced dim", 1, ((), X), (X, ())),
]


@pytest.mark.parametrize(
    "name,rows,operand,result", DUS_AT_RESULT, ids=[d[0] for d in DUS_AT_RESULT]
)
def test_dynamic_update_slice_at_the_result_layout(
    name: str, rows: int, operand: tuple, result: tuple
) -> None:
    _compare("dynamic_update_slice", _dus(rows, "dynamic", operand, result))


def _dynamic_slice(rows: int, ins: tuple, out: tuple) -> str:
    """`rows` rows of 8 (from a start known at run time) of a 8x16 tensor."""
    body = (
        "%c = stablehlo.constant dense<0> : tensor<i32>\n"
        f"  %r = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [{rows}, 16] : "
        f"(tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<{rows}x16xf32>"
    )
    return _module(body, [("8x16xf32", ins), ("i32", ())], (f"{rows}x16xf32", out), MESH)


DYNAMIC_SLICES = [
    # the operand splits the sliced dim, the result the other: its axis moves (all-to-all)
    ("sliced dim's axis moves to the result's dim", 4, (X, ()), ((), X)),
    # the result splits nothing: the sliced dim is gathered
    ("result whole", 4, (X, ()), ((), ())),
    # the result splits the sliced dim: computed on the whole operand, then sliced locally
    ("result split on the sliced dim", 4, (X, ()), (X, ())),
    ("result split on the sliced dim and another", 4, (X, Y), (X, Y)),
    # every row, from a start known only at run time (clamped to 0): nothing moves
    ("all rows", 8, (X, Y), (X, Y)),
]


@pytest.mark.parametrize("name,rows,ins,out", DYNAMIC_SLICES, ids=[d[0] for d in DYNAMIC_SLICES])
def test_dynamic_slice_is_computed_at_the_result_layout(
    name: str, rows: int, ins: tuple, out: tuple
) -> None:
    _compare("dynamic_slice", _dynamic_slice(rows, ins, out))


LOOP = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%xs: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %init = stablehlo.constant dense<0.0> : tensor<16xf32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %init, %x = %xs) : tensor<i32>, tensor<16xf32>, tensor<8x16xf32>
   cond {
    %n = stablehlo.constant dense<8> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, 16] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<1x16xf32>
    %v = stablehlo.reshape %row : (tensor<1x16xf32>) -> tensor<16xf32>
    %s = stablehlo.add %acc, %v : tensor<16xf32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %s, %x : tensor<i32>, tensor<16xf32>, tensor<8x16xf32>
  }
  return %r#1 : tensor<16xf32>
}
"""


def test_loop_invariant_collective_is_hoisted() -> None:
    # the scanned array is a carry the body passes through: its gather runs once, not 8 times
    _compare("loops", LOOP)


SHARD_MAP = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, FREE, {}]>})
    -> (tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
  %r = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"y"}, FREE, {}]>]
      out_shardings=[<@mesh, [{}, {}, {}]>] manual_axes={"y"} (%a: tensor<2x8x16xf32>) {
    %g = "stablehlo.all_gather"(%a) <{all_gather_dim = 0 : i64, channel_handle =
      #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3],
      [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}>
      : (tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
    sdy.return %g : tensor<4x8x16xf32>
  } : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %r : tensor<4x8x16xf32>
}
"""


@pytest.mark.parametrize("free", ["{}", '{"x"}'], ids=["body whole", "body split on x"])
def test_shard_map_collective_runs_on_the_whole_free_block(free: str) -> None:
    # a collective written in a shard_map body: XLA gathers the free axes (x) of its operand
    # first and moves the body's whole block over the manual axis
    _compare("shard_map collectives", SHARD_MAP.replace("FREE", free))


def test_shard_map_body_result_is_resharded_to_its_out_sharding() -> None:
    # the body's result is split on the free axis x; out_shardings leaves it whole: XLA gathers
    # x at the shard_map's end (and y after it, for the replicated func result)
    text = (
        SHARD_MAP.replace("FREE", '{"x"}')
        .replace('out_shardings=[<@mesh, [{}, {}, {}]>]', 'out_shardings=[<@mesh, [{"y"}, {}, {}]>]')
        .replace('"stablehlo.all_gather"(%a) <{all_gather_dim = 0 : i64, channel_handle =\n'
                 '      #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = '
                 'dense<[[0, 1], [2, 3],\n      [4, 5], [6, 7]]> : tensor<4x2xi64>, '
                 'use_global_device_ids}>\n      : (tensor<2x8x16xf32>) -> tensor<4x8x16xf32>',
                 "stablehlo.negate %a : tensor<2x8x16xf32>")
        .replace("sdy.return %g : tensor<4x8x16xf32>", "sdy.return %g : tensor<2x8x16xf32>")
    )
    assert "stablehlo.negate" in text
    _compare("shard_map collectives", text)


GROUPED_DOTS = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
    %w: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
    %g: tensor<8xNxf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
        tensor<8xMxf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %y = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
  %d = stablehlo.dot_general %g, %w, contracting_dims = [1] x [C] : (tensor<8xNxf32>, tensor<64x128xf32>) -> tensor<8xMxf32>
  return %y, %d : tensor<8x128xf32>, tensor<8xMxf32>
}
"""


@pytest.mark.parametrize(
    "n,m,c", [("128", "64", "1"), ("64", "128", "0")], ids=["grouped otherwise", "grouped alike"]
)
def test_a_reshard_in_a_dot_group_is_reused_only_by_a_dot_grouped_alike(
    n: str, m: str, c: str
) -> None:
    # both dots gather w's x axis within a device group (on y): XLA caches a group's reshards
    # per grouping, so a backward-like dot grouped otherwise gathers it again, one grouped
    # alike reuses the gather
    text = GROUPED_DOTS.replace("N", n).replace("M", m).replace("C", c)
    _compare("dots: reshards within a device group", text)


def test_dead_values_cost_nothing() -> None:
    # the dot's result is never used: Shardy's import and XLA drop it with its all-reduce
    body = (
        "%d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
        "(tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>\n"
        "  %r = stablehlo.negate %arg0 : tensor<8x16xf32>"
    )
    text = _module(
        body, [("8x16xf32", ((), X)), ("16x32xf32", (X, ()))], ("8x16xf32", ((), X)), MESH
    )
    plan = shardc.plan(text, check=True)
    assert plan.dead_ops == 1 and plan.check.planned == [] and plan.check.compiled == []


def test_unused_constraint_decides_no_layout() -> None:
    # the dot and the constraint on it are dead: XLA's dead-code pass drops both before its
    # propagation, so nothing shards %arg1 (no sharding of its own): XLA passes it whole
    text = (
        'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'
        "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, "
        '[{}, {"x"}]>}, %arg1: tensor<16x32xf32>) -> (tensor<8x16xf32> {sdy.sharding = '
        '#sdy.sharding<@mesh, [{}, {"x"}]>}) {\n'
        "  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
        "(tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>\n"
        '  %c = sdy.sharding_constraint %d <@mesh, [{}, {"y"}]> : tensor<8x32xf32>\n'
        "  %r = stablehlo.negate %arg0 : tensor<8x16xf32>\n"
        "  return %r : tensor<8x16xf32>\n}\n"
    )
    planned = shardc.plan(text).memory
    stats = H.compile_mlir(shardc.propagate(text, mode="pin"), 8).get_compiled_memory_stats()
    assert (planned.arguments, planned.results) == (
        stats.argument_size_in_bytes,
        stats.output_size_in_bytes,
    ), "XLA lays out the arguments of a module with a dead constraint otherwise (What runs)"


CALLEE = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %r = func.call @f(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = stablehlo.negate %r : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}
func.func private @f(%a: tensor<8x16xf32>) -> (tensor<8x16xf32>RESULT) {
  %n = stablehlo.negate %a : tensor<8x16xf32>
  return %n : tensor<8x16xf32>
}
"""


@pytest.mark.parametrize(
    "result", ["", ' {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}'], ids=["none", "written"]
)
def test_calls_are_inlined(result: str) -> None:
    # XLA inlines the call: nothing moves at the call itself; a result sharding the callee's
    # author wrote constrains the returned value (an all-to-all there, and one back after)
    _compare("calls", CALLEE.replace("RESULT", result))


def test_all_to_all_temporaries_are_one_piece_per_peer() -> None:
    # XLA's CPU all-to-all runs on the operand cut into one slice per peer and receives one
    # piece per peer, each a buffer of its own: about twice the moved value, not once
    text = (
        'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'
        "func.func @main(%arg0: tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, "
        '[{"x"}, {}]>}) -> (tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, '
        '[{}, {"x"}]>}) {\n'
        "  %e = stablehlo.exponential %arg0 : tensor<16x64xf32>\n"
        '  %c = sdy.sharding_constraint %e <@mesh, [{}, {"x"}]> : tensor<16x64xf32>\n'
        "  %r = stablehlo.negate %c : tensor<16x64xf32>\n"
        "  return %r : tensor<16x64xf32>\n}\n"
    )
    plan = shardc.plan(text)
    assert [c.kind for c in plan.collectives] == ["all-to-all"]
    temp = H.compile_mlir(shardc.propagate(text, mode="pin"), 8).get_compiled_memory_stats()
    assert abs(plan.memory.peak - temp.temp_size_in_bytes) <= 0.2 * temp.temp_size_in_bytes, (
        f"planned temporaries {plan.memory.peak} B, XLA's {temp.temp_size_in_bytes} B (Memory)"
    )


def test_interior_pad_on_a_split_dim_is_computed_whole() -> None:
    # a pad with interior and negative edge padding on a split dim: XLA's partitioner gets it
    # wrong, so the compiled form pins it with that dim whole (passes/pin_hazards.py): the
    # operand is gathered, not exchanged in halos
    body = (
        "%c = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %r = stablehlo.pad %arg0, %c, low = [-2, 0], high = [3, 0], interior = [1, 0] : "
        "(tensor<8x16xf32>, tensor<f32>) -> tensor<16x16xf32>"
    )
    _compare("halos", _module(body, [("8x16xf32", (X, ()))], ("16x16xf32", (X, ())), MESH))
