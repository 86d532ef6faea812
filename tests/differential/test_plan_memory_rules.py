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


def test_an_arguments_all_gather_lives_from_the_start() -> None:
    # %w is split on x over the dim the last dot contracts, whose other operand keeps x on its
    # rows: XLA gathers %w (16 KiB), first, so it lives across %t (16 KiB)
    sx = '#sdy.sharding<@mesh, [{"x"}, {}]>'
    text = (
        MESH
        + f"""func.func @main(%arg0: tensor<64x64xf32> {{sdy.sharding = {sx}}},
    %arg1: tensor<64x64xf32> {{sdy.sharding = {R2}}},
    %w: tensor<64x64xf32> {{sdy.sharding = {sx}}}) -> (tensor<64x64xf32> {{sdy.sharding = {sx}}}) {{
  %t = stablehlo.dot_general %arg1, %arg1, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = stablehlo.exponential %t : tensor<64x64xf32>
  %u = stablehlo.dot_general %arg0, %e, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %v = stablehlo.sine %u : tensor<64x64xf32>
  %r = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}}
"""
    )
    planned, temp = _measure(text)
    assert temp >= 2 * 64 * 64 * 4, (
        f"XLA no longer runs the argument's all-gather first (temp {temp} B): "
        "passes/plan/memory.py `is_argument_of` no longer holds"
    )
    # (XLA puts the first sine's operand, 2 KiB, in the result's allocation and the sine's
    # result on the heap; the plan keeps the two as one buffer, in place: within 10%)
    assert abs(planned - temp) <= 0.1 * temp, f"planned peak {planned} B, XLA's temp {temp} B"
