"""The CLI decides the arguments left without a layout: `shardc compile --auto` those the script
left unannotated, `shardc propagate --auto` those without a sharding in the module; an argument
with one, replicated included, stays as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from .test_auto_pass import _arg_shardings, _run

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "auto_cli_step.py")


def _main_args(text: str) -> list[str]:
    head = next(line for line in text.splitlines() if "func.func public @main" in line)
    return re.findall(r"sdy\.sharding = #sdy\.sharding<(@mesh, \[[^>]*\])>", head.split(") ->")[0])


def _compile(*flags: str) -> list[str]:
    r = subprocess.run([sys.executable, "-m", "shardc.tools.cli", "compile", SCRIPT, *flags],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return _main_args(r.stdout)


def test_compile_auto_decides_the_unannotated_arguments_only() -> None:
    plain = _compile()
    assert plain[1] == plain[2] == plain[3] == "@mesh, [{}, {}]"
    # replicated w1 and w2 alone are 256 KiB per device: over the budget
    auto = _compile("--auto", "--memory-budget", "200KiB")
    assert auto[0] == '@mesh, [{"x"}, {}]'
    assert auto[1] != "@mesh, [{}, {}]" and auto[2] != "@mesh, [{}, {}]"
    assert auto[3] == "@mesh, [{}, {}]"  # written replicated: stays


PROPAGATE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<128x256xf32>,
                %arg2: tensor<256x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    -> tensor<16x128xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
    : (tensor<16x128xf32>, tensor<128x256xf32>) -> tensor<16x256xf32>
  %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0]
    : (tensor<16x256xf32>, tensor<256x128xf32>) -> tensor<16x128xf32>
  return %1 : tensor<16x128xf32>
}
"""


def test_propagate_auto_keeps_a_written_replicated_argument() -> None:
    module, report = _run(PROPAGATE, memory_budget="240KiB")
    args = _arg_shardings(module)
    assert args[0] == '<@mesh, [{"x"}, {}]>'
    assert args[1] != "<@mesh, [{}, {}]>"  # no sharding in the input: auto's
    assert args[2] == "<@mesh, [{}, {}]>"  # written replicated: stays
    assert report.auto.planned_memory <= 240 * 1024  # type: ignore[attr-defined]
