"""The rules of the plan's memory model (passes/plan/memory.py) against XLA itself: a small
module per case is planned and its pin export compiled on 8 virtual CPU devices, and the
plan's peak of temporaries must be XLA's `temp_size_in_bytes`. Each test first checks that XLA still behaves as the rule says (so a newer
XLA, or another backend, that decides otherwise fails naming the rule), then the plan."""

from __future__ import annotations

import shardc

from . import harness as H

MESH = 'sdy.mesh @mesh = <["x"=8]>\n'
R2 = "#sdy.sharding<@mesh, [{}, {}]>"
R3 = "#sdy.sharding<@mesh, [{}, {}, {}]>"


def _measure(text: str) -> tuple[int, int]:
    """(the plan's peak of temporaries, XLA's temp size) of `text`."""
    plan = shardc.plan(text)
    exe = H.compile_mlir(shardc.propagate(text, mode="pin"), 8)
    return plan.memory.peak, int(exe.get_compiled_memory_stats().temp_size_in_bytes)


def test_a_temporary_takes_the_allocation_of_a_result_computed_after_it() -> None:
    # %t (16 KiB) dies at the second dot, before the result (16 KiB) is computed: it takes the
    # result's allocation; %u, live when the result is computed, is a temporary
    text = (
        MESH
        + f"""func.func @main(%arg0: tensor<64x64xf32> {{sdy.sharding = {R2}}})
    -> (tensor<64x64xf32> {{sdy.sharding = {R2}}}) {{
  %t = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %u = stablehlo.dot_general %t, %arg0, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = stablehlo.exponential %u : tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}}
"""
    )
    planned, temp = _measure(text)
    assert temp < 2 * 64 * 64 * 4, (
        f"XLA no longer places the first dot's result in the result's allocation (temp {temp} "
        "B): passes/plan/memory.py `output_reuse` no longer holds"
    )
    assert abs(planned - temp) <= 64, f"planned peak {planned} B, XLA's temp {temp} B"


def _dot_then_gelu_like(lhs: str, out: str, dims: str) -> str:
    """A dot whose result an element-wise chain reads twice, then a second dot."""
    w1, w2 = "tensor<32x64xf32>", "tensor<64x32xf32>"
    back = out.replace("64xf32", "32xf32")
    s = R3 if out.count("x") == 3 else R2
    return (
        MESH
        + f"""func.func @main(%arg0: {lhs} {{sdy.sharding = {s}}},
    %arg1: {w1} {{sdy.sharding = {R2}}}, %arg2: {w2} {{sdy.sharding = {R2}}})
    -> ({back} {{sdy.sharding = {s}}}) {{
  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [{dims}] x [0] : ({lhs}, {w1}) -> {out}
  %e = stablehlo.tanh %d : {out}
  %f = stablehlo.multiply %e, %d : {out}
  %r = stablehlo.dot_general %f, %arg2, contracting_dims = [{dims}] x [0] : ({out}, {w2}) -> {back}
  return %r : {back}
}}
"""
    )


def test_an_elementwise_op_is_computed_in_place_of_a_2d_dot() -> None:
    text = _dot_then_gelu_like("tensor<64x32xf32>", "tensor<64x64xf32>", "1")
    planned, temp = _measure(text)
    assert temp < 2 * 64 * 64 * 4, (
        f"XLA no longer computes the element-wise fusion in place of the 2-D dot (temp {temp} B)"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def test_an_elementwise_op_is_not_computed_in_place_of_a_reshaped_dot() -> None:
    # [4, 16, 32] x [32, 64]: XLA's CPU dot runs on [64, 32] x [32, 64] and the fusion reading
    # its result goes through a bitcast (passes/plan/memory.py `_reshaped_dot`)
    text = _dot_then_gelu_like("tensor<4x16x32xf32>", "tensor<4x16x64xf32>", "2")
    planned, temp = _measure(text)
    assert temp >= 2 * 64 * 64 * 4, (
        f"XLA now computes the fusion in place of the reshaped dot (temp {temp} B): "
        "passes/plan/memory.py `_reshaped_dot` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def _gathered_weight(prep: str = "") -> str:
    """A chain of two dots, then a dot that reads `%w` (split on x over the dim it contracts,
    its other operand keeping x on its rows: XLA gathers it), or `prep` of `%w`."""
    t = "tensor<64x64xf32>"
    sx = '#sdy.sharding<@mesh, [{"x"}, {}]>'
    made = f"  %n = {prep} %w : {t}\n" if prep else ""
    return (
        MESH
        + f"""func.func @main(%arg0: {t} {{sdy.sharding = {sx}}},
    %arg1: {t} {{sdy.sharding = {R2}}},
    %w: {t} {{sdy.sharding = {sx}}}) -> ({t} {{sdy.sharding = {sx}}}) {{
{made}  %t = stablehlo.dot_general %arg1, %arg1, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  %e = stablehlo.exponential %t : {t}
  %u = stablehlo.dot_general %arg0, %e, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  %v = stablehlo.sine %u : {t}
  %r = stablehlo.dot_general %v, {"%n" if prep else "%w"}, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  return %r : {t}
}}
"""
    )


def test_an_arguments_all_gather_lives_from_the_start() -> None:
    # XLA gathers %w (16 KiB) first, so it lives across %t (16 KiB)
    planned, temp = _measure(_gathered_weight())
    assert temp >= 2 * 64 * 64 * 4, (
        f"XLA no longer runs the argument's all-gather first (temp {temp} B): "
        "passes/plan/memory.py `is_argument_of` no longer holds"
    )
    # (XLA puts the first sine's operand, 2 KiB, in the result's allocation and the sine's
    # result on the heap; the plan keeps the two as one buffer, in place: within 10%)
    assert abs(planned - temp) <= 0.1 * temp, f"planned peak {planned} B, XLA's temp {temp} B"


def _two_reductions(n: int) -> str:
    """An element-wise sum two reductions read (over rows, over columns) of `n` x `n`."""
    t = f"tensor<{n}x{n}xf32>"
    return (
        MESH
        + f"""func.func @main(%arg0: {t} {{sdy.sharding = {R2}}}, %arg1: {t} {{sdy.sharding = {R2}}})
    -> (tensor<{n}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}]>}}) {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %a = stablehlo.add %arg0, %arg1 : {t}
  %r0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : ({t}, tensor<f32>) -> tensor<{n}xf32>
  %r1 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> tensor<{n}xf32>
  %r = stablehlo.multiply %r0, %r1 : tensor<{n}xf32>
  return %r : tensor<{n}xf32>
}}
"""
    )


def test_a_library_reduce_reads_its_input_from_memory() -> None:
    # 64 x 64 = 4096 elements: XLA's CPU backend runs both reductions as library calls
    # (YNNPACK), which read the sum from a buffer (16 KiB; passes/plan/memory.py
    # `_library_reduce`); at 32 x 32 they are loop fusions that each recompute the sum
    planned, temp = _measure(_two_reductions(64))
    assert temp >= 64 * 64 * 4, (
        f"XLA no longer materializes a library reduce's input (temp {temp} B): "
        "passes/plan/memory.py `_library_reduce` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"
    planned, temp = _measure(_two_reductions(32))
    assert temp < 32 * 32 * 4, (
        f"XLA now materializes a small reduce's input too (temp {temp} B): "
        "passes/plan/memory.py `_LIBRARY_MIN_ELEMENTS` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def _conv(kernel: str, kernel_type: str) -> str:
    """A 3x3 convolution of an argument by an argument kernel laid out as `kernel`."""
    x, y = "tensor<1x8x8x32xf32>", "tensor<1x8x8x32xf32>"
    r4 = "#sdy.sharding<@mesh, [{}, {}, {}, {}]>"
    return (
        MESH
        + f"""func.func @main(%arg0: {x} {{sdy.sharding = {r4}}}, %arg1: {kernel_type} {{sdy.sharding = {r4}}})
    -> ({y} {{sdy.sharding = {r4}}}) {{
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[{kernel}]->[b, 0, 1, f], window = {{stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({x}, {kernel_type}) -> {y}
  return %c : {y}
}}
"""
    )


def test_a_convolution_copies_a_kernel_out_of_order() -> None:
    # the kernel as [spatial, out, in] (a backward convolution's): XLA's CPU backend transposes
    # it into [spatial, in, out] first, a copy of 36 KiB (passes/plan/memory.py `_conv_copies`);
    # in that order it reads the kernel as it is
    kernel = 3 * 3 * 32 * 32 * 4
    planned, temp = _measure(_conv("0, 1, o, i", "tensor<3x3x32x32xf32>"))
    assert temp >= kernel, (
        f"XLA no longer copies a kernel out of [spatial, in, out] order (temp {temp} B): "
        "passes/plan/memory.py `_conv_copies` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"
    planned, temp = _measure(_conv("0, 1, i, o", "tensor<3x3x32x32xf32>"))
    assert temp < kernel, f"XLA copies a kernel in [spatial, in, out] order (temp {temp} B)"
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def test_a_kernel_gathered_along_an_inner_dim_is_copied_for_a_convolution() -> None:
    # the batch is split on x and so is the kernel's output dim: XLA gathers the kernel
    # (18 KiB) along dim 3 into a layout with that dim outermost and copies it into the
    # row-major order the convolution reads (passes/plan/plan.py `gather_copy`)
    x, k, y = "tensor<8x8x8x16xf32>", "tensor<3x3x16x32xf32>", "tensor<8x8x8x32xf32>"
    b = '#sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>'
    ko = '#sdy.sharding<@mesh, [{}, {}, {}, {"x"}]>'
    text = (
        MESH
        + f"""func.func @main(%arg0: {x} {{sdy.sharding = {b}}}, %arg1: {k} {{sdy.sharding = {ko}}})
    -> ({y} {{sdy.sharding = {b}}}) {{
  %c = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({x}, {k}) -> {y}
  return %c : {y}
}}
"""
    )
    kernel = 3 * 3 * 16 * 32 * 4
    planned, temp = _measure(text)
    assert temp >= 2 * kernel, (
        f"XLA no longer copies a kernel gathered along an inner dim (temp {temp} B): "
        "passes/plan/plan.py `gather_copy` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def test_the_gather_of_what_the_arguments_alone_make_runs_first() -> None:
    # as above, with the weight negated before the dot reads it: XLA gathers the negated
    # weight at the start too (passes/plan/memory.py `is_argument_of`)
    planned, temp = _measure(_gathered_weight("stablehlo.negate"))
    assert temp >= 2 * 64 * 64 * 4, (
        f"XLA no longer gathers the negated argument first (temp {temp} B): "
        "passes/plan/memory.py `is_argument_of` no longer holds"
    )
    # (as above, and the plan holds the negated local shard, 2 KiB, until the dot where XLA
    # frees it at the gather: within 15%)
    assert abs(planned - temp) <= 0.15 * temp, f"planned peak {planned} B, XLA's temp {temp} B"


T64 = "tensor<64x64xf32>"
V64 = "tensor<64xf32>"


def _chain_then(late: str, first: str = "%arg1", start: str = "") -> str:
    """`start`, a chain of two dots (16 KiB values), then `late`, which reads what `start`
    made; the result is a small vector (its allocation takes no temporary)."""
    return (
        MESH
        + f"""func.func @main(%arg0: {T64} {{sdy.sharding = {R2}}}, %arg1: {T64} {{sdy.sharding = {R2}}})
    -> ({V64} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}]>}}) {{
  %z = stablehlo.constant dense<1.0> : tensor<f32>
{start}  %d1 = stablehlo.dot_general {first}, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %e1 = stablehlo.exponential %d1 : {T64}
  %d2 = stablehlo.dot_general %e1, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %s1 = stablehlo.sine %d2 : {T64}
{late}  return %r : {V64}
}}
"""
    )


def _prod(out: str, v: str) -> str:
    """`out` = the product of `v`'s rows (a reduce XLA runs as a loop fusion)."""
    return (
        f"  {out} = stablehlo.reduce({v} init: %z) applies stablehlo.multiply across "
        f"dimensions = [1] : ({T64}, tensor<f32>) -> {V64}\n"
    )


def test_identical_ops_are_one_buffer() -> None:
    # %a and %b compute the same difference: XLA's CSE keeps %a, whose buffer (16 KiB) then
    # lives across the chain to %b's reader (passes/plan/memory.py `cse_twins`)
    start = (
        f"  %a = stablehlo.subtract %arg0, %arg1 : {T64}\n"
        f"  %d0 = stablehlo.dot_general %a, %arg0, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}\n"
    )
    late = (
        _prod("%t", "%s1")
        + f"  %b = stablehlo.subtract %arg0, %arg1 : {T64}\n"
        + f"  %p = stablehlo.dot_general %b, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}\n"
        + _prod("%u", "%p")
        + f"  %r = stablehlo.add %t, %u : {V64}\n"
    )
    planned, temp = _measure(_chain_then(late, "%d0", start))
    assert temp >= 3 * 64 * 64 * 4, (
        f"XLA no longer merges the two subtracts (temp {temp} B): passes/plan/memory.py "
        "`cse_twins` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def test_a_fused_op_reads_its_inputs_where_its_readers_run() -> None:
    # %m = %d0 * %d0 is fused into the reduce at the end: %d0 (16 KiB) lives until there,
    # across the chain (passes/plan/memory.py `_Reads.last_read`)
    start = (
        f"  %d0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}\n"
        f"  %m = stablehlo.multiply %d0, %d0 : {T64}\n"
    )
    late = f"  %q = stablehlo.add %s1, %m : {T64}\n" + _prod("%r", "%q")
    planned, temp = _measure(_chain_then(late, start=start))
    assert temp >= 3 * 64 * 64 * 4, (
        f"XLA no longer keeps a fused op's input until its reader (temp {temp} B): "
        "passes/plan/memory.py `_Reads.last_read` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def test_a_slice_of_a_fused_value_is_its_only_buffer() -> None:
    # %e is read split on x by the last dot: XLA fuses the exponential into the dynamic slice,
    # so only the slice (2 KiB) lives across the chain, not %e (16 KiB)
    # (passes/plan/memory.py `Buffers.sliced`)
    sx = '#sdy.sharding<@mesh, [{"x"}, {}]>'
    text = (
        MESH
        + f"""func.func @main(%arg0: {T64} {{sdy.sharding = {R2}}}, %arg1: {T64} {{sdy.sharding = {R2}}})
    -> ({T64} {{sdy.sharding = {sx}}}) {{
  %d0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %e = stablehlo.exponential %d0 : {T64}
  %d1 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %e1 = stablehlo.sine %d1 : {T64}
  %d2 = stablehlo.dot_general %e1, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %s1 = stablehlo.cosine %d2 : {T64}
  %c = sdy.sharding_constraint %e <@mesh, [{{"x"}}, {{}}]> : {T64}
  %p = stablehlo.dot_general %c, %s1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  return %p : {T64}
}}
"""
    )
    planned, temp = _measure(text)
    whole = 64 * 64 * 4
    assert 2 * whole < temp < 3 * whole, (
        f"XLA no longer holds only the slice of the fused value (temp {temp} B): "
        "passes/plan/memory.py `Buffers.sliced` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def test_a_value_only_a_library_reduce_reads_is_computed_again_by_its_other_readers() -> None:
    # %s = %d0 - %arg2 (32 KiB) is read by a library reduce before the chain and by a loop
    # fusion after it, which reads %d0 too: XLA materializes %s for the library call only and
    # the late fusion computes it again from %d0, so %s dies at the reduce and only %d0 lives
    # across the chain (passes/plan/memory.py `_Reads.recomputed`)
    a, w, v = "tensor<128x64xf32>", T64, V64
    r1 = "#sdy.sharding<@mesh, [{}]>"
    text = (
        MESH
        + f"""func.func @main(%arg0: {a} {{sdy.sharding = {R2}}}, %arg1: {w} {{sdy.sharding = {R2}}},
    %arg2: {v} {{sdy.sharding = {r1}}}, %arg3: {w} {{sdy.sharding = {R2}}})
    -> ({v} {{sdy.sharding = {r1}}}) {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %d0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : ({a}, {w}) -> {a}
  %mb = stablehlo.broadcast_in_dim %arg2, dims = [1] : ({v}) -> {a}
  %s = stablehlo.subtract %d0, %mb : {a}
  %l = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : ({a}, tensor<f32>) -> {v}
  %d1 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [1] x [0] : ({a}, {w}) -> {a}
  %lb = stablehlo.broadcast_in_dim %l, dims = [1] : ({v}) -> {a}
  %d1b = stablehlo.add %d1, %lb : {a}
  %e1 = stablehlo.exponential %d1b : {a}
  %d2 = stablehlo.dot_general %e1, %arg1, contracting_dims = [1] x [0] : ({a}, {w}) -> {a}
  %s1 = stablehlo.sine %d2 : {a}
  %q0 = stablehlo.add %s1, %s : {a}
  %q = stablehlo.add %q0, %d0 : {a}
  %p = stablehlo.reduce(%q init: %z) applies stablehlo.multiply across dimensions = [0] : ({a}, tensor<f32>) -> {v}
  return %p : {v}
}}
"""
    )
    planned, temp = _measure(text)
    value = 128 * 64 * 4
    assert temp < 4 * value, (
        f"XLA's late fusion no longer computes the library reduce's input again (temp {temp} "
        "B): passes/plan/memory.py `_Reads.recomputed` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def _dot_across_dims(contracting: str) -> str:
    """A chain of two dots, then a dot of its result (read as [64, 4, 16]) and the argument
    `%w` [4, 16, 64], contracting the [4, 16] dims in the order `contracting` gives."""
    x, w = "tensor<64x4x16xf32>", "tensor<4x16x64xf32>"
    r3 = "#sdy.sharding<@mesh, [{}, {}, {}]>"
    return (
        MESH
        + f"""func.func @main(%arg0: {T64} {{sdy.sharding = {R2}}}, %arg1: {T64} {{sdy.sharding = {R2}}},
    %w: {w} {{sdy.sharding = {r3}}}) -> ({T64} {{sdy.sharding = {R2}}}) {{
  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %e = stablehlo.exponential %d : {T64}
  %d2 = stablehlo.dot_general %e, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %x = stablehlo.reshape %d2 : ({T64}) -> {x}
  %r = stablehlo.dot_general %x, %w, contracting_dims = {contracting} : ({x}, {w}) -> {T64}
  return %r : {T64}
}}
"""
    )


def test_a_dot_copies_operands_whose_contracting_dims_are_out_of_order() -> None:
    # contracting [4, 16] as (16, 4): XLA's dot decomposer transposes both operands so that
    # the merged dim reads in that order, a copy of %d2 (16 KiB) at the dot and of the
    # argument %w (16 KiB), made early as what the arguments alone make
    # (passes/plan/memory.py `_dot_copies`); in memory order it reads both as they are
    value = 64 * 64 * 4
    planned, temp = _measure(_dot_across_dims("[2, 1] x [1, 0]"))
    assert temp >= 3 * value, (
        f"XLA no longer copies a dot's operands out of order (temp {temp} B): "
        "passes/plan/memory.py `_dot_copies` no longer holds"
    )
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"
    planned, temp = _measure(_dot_across_dims("[1, 2] x [0, 1]"))
    assert temp < 2 * value, f"XLA copies a dot's operands in memory order (temp {temp} B)"
    assert abs(planned - temp) <= 128, f"planned peak {planned} B, XLA's temp {temp} B"


def _sibling_reduces(n: int) -> str:
    """A dot's result (16 KiB) that `n` selects read, each summed by a library reduce (4096
    elements); the sums are added into the result, a small vector."""
    reads = "".join(
        f"  %k{i} = stablehlo.constant dense<0.{i}> : {T64}\n"
        f"  %c{i} = stablehlo.compare GT, %d, %k{i} : ({T64}, {T64}) -> tensor<64x64xi1>\n"
        f"  %v{i} = stablehlo.select %c{i}, %d, %zero : tensor<64x64xi1>, {T64}\n"
        f"  %r{i} = stablehlo.reduce(%v{i} init: %z) applies stablehlo.add across "
        f"dimensions = [0] : ({T64}, tensor<f32>) -> {V64}\n"
        for i in range(1, n + 1)
    )
    total = "%r1"
    for i in range(2, n + 1):
        reads += f"  %s{i} = stablehlo.add {total}, %r{i} : {V64}\n"
        total = f"%s{i}"
    return (
        MESH
        + f"""func.func @main(%arg0: {T64} {{sdy.sharding = {R2}}}, %arg1: {T64} {{sdy.sharding = {R2}}})
    -> ({V64} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}]>}}) {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : {T64}
  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
{reads}  return {total} : {V64}
}}
"""
    )


def test_sibling_fusions_all_run_before_their_readers() -> None:
    # XLA's CPU scheduler is breadth-first: the three selects (16 KiB each) all read only %d,
    # so all three run before any reduce, the last in place of %d (passes/plan/memory.py
    # `xla_schedule`); in program order one select would be live at a time
    planned, temp = _measure(_sibling_reduces(3))
    value = 64 * 64 * 4
    assert temp >= 3 * value, (
        f"XLA no longer runs the sibling fusions before their reduces (temp {temp} B): "
        "passes/plan/memory.py `xla_schedule` no longer holds"
    )
    assert abs(planned - temp) <= 512, f"planned peak {planned} B, XLA's temp {temp} B"


def test_a_temporary_takes_a_result_allocation_its_local_bytes_fit() -> None:
    # %t is 32 KiB globally but split on x (4 KiB per device) and dies before the result
    # (16 KiB, replicated) is computed: XLA, which sees only local sizes, puts it in the
    # result's allocation (passes/plan/memory.py `output_reuse` on local sizes)
    sx = '#sdy.sharding<@mesh, [{"x"}, {}]>'
    t, r = "tensor<64x128xf32>", "tensor<32x128xf32>"
    text = (
        MESH
        + f"""func.func @main(%arg0: {T64} {{sdy.sharding = {sx}}}, %arg1: {t} {{sdy.sharding = {R2}}},
    %arg2: {r} {{sdy.sharding = {R2}}}) -> ({r} {{sdy.sharding = {R2}}}) {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %t = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : ({T64}, {t}) -> {t}
  %q = stablehlo.reduce(%t init: %z) applies stablehlo.add across dimensions = [0] : ({t}, tensor<f32>) -> tensor<128xf32>
  %b = stablehlo.broadcast_in_dim %q, dims = [1] : (tensor<128xf32>) -> {r}
  %s = stablehlo.add %b, %arg2 : {r}
  return %s : {r}
}}
"""
    )
    planned, temp = _measure(text)
    assert temp < 8 * 128 * 4, (
        f"XLA no longer puts the split temporary in the result's allocation (temp {temp} B): "
        "passes/plan/memory.py `output_reuse` on local sizes no longer holds"
    )
    # (XLA keeps the partial sums and their all-reduce apart, 512 B each; the plan one buffer)
    assert abs(planned - temp) <= 512, f"planned peak {planned} B, XLA's temp {temp} B"


def test_a_donated_argument_holds_its_result() -> None:
    # %arg0 is a donor (JAX's lowering leaves the pairing to XLA): XLA writes the result of
    # its type into it, so the result is aliased and its allocation takes no temporary
    # (passes/plan/memory.py `_aliased_results`, `Memory.aliased`)
    text = (
        MESH
        + f"""func.func @main(%arg0: {T64} {{jax.buffer_donor = true, sdy.sharding = {R2}}},
    %arg1: {T64} {{sdy.sharding = {R2}}}) -> ({T64} {{sdy.sharding = {R2}}}) {{
  %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : ({T64}, {T64}) -> {T64}
  %e = stablehlo.exponential %d : {T64}
  return %e : {T64}
}}
"""
    )
    memory = shardc.plan(text).memory
    stats = H.compile_mlir(shardc.propagate(text, mode="pin"), 8).get_compiled_memory_stats()
    assert stats.alias_size_in_bytes == 64 * 64 * 4, (
        f"XLA no longer aliases the donor with the result ({stats.alias_size_in_bytes} B): "
        "passes/plan/memory.py `_aliased_results` no longer holds"
    )
    assert memory.aliased == stats.alias_size_in_bytes
    assert memory.peak == stats.temp_size_in_bytes, (memory.peak, stats.temp_size_in_bytes)
    xla = (stats.argument_size_in_bytes + stats.output_size_in_bytes
           + stats.temp_size_in_bytes - stats.alias_size_in_bytes)  # fmt: skip
    assert memory.total == xla, (memory.total, xla)
