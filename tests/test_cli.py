"""The command line: one-line errors, no traceback, no half-written output; help everywhere."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "mlp.mlir")


def shardc(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardc.tools.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
    )


def test_version_and_help() -> None:
    assert shardc("--version").stdout.startswith("shardc ")
    top = shardc("--help")
    assert top.returncode == 0 and "opt" in top.stdout
    from shardc.tools.cli import SUBCOMMANDS, build_parser

    build_parser()
    for name in SUBCOMMANDS:
        r = shardc(name, "--help")
        assert r.returncode == 0 and "usage: shardc " + name in r.stdout, name


def test_opt_round_trips_the_example(tmp_path) -> None:
    out = tmp_path / "out.mlir"
    r = shardc("opt", EXAMPLE, "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert 'sdy.mesh @mesh = <["data"=4, "model"=2]>' in text
    assert '#sdy.sharding<@mesh, [{"data"}, {}]>' in text
    again = shardc("opt", "-", stdin=text)
    assert again.stdout == text


def test_output_into_a_missing_directory_names_the_users_path(tmp_path) -> None:
    out = tmp_path / "no_such_dir" / "out.mlir"
    r = shardc("opt", EXAMPLE, "-o", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (f"error: cannot write {out}: directory {out.parent} does not exist; "
                                "create the directory first, or give -o a path in an existing one")
    assert not out.parent.exists()


def test_generic_format() -> None:
    r = shardc("opt", EXAMPLE, "--format", "generic")
    assert r.returncode == 0 and '"stablehlo.dot_general"' in r.stdout


BAD_INPUTS = {
    "syntax": ("module {\n  func.func @f( {\n}\n", "<stdin>:2:"),
    "empty": ("", "empty input"),
    "unknown_mesh": (
        'module {\n  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nomesh, [{"x"}]>}) -> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n',
        "unknown mesh: @nomesh",
    ),
    "unknown_axis": (
        'module {\n  sdy.mesh @mesh = <["x"=4]>\n  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}]>}) -> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n',
        'unknown axis name: "q"',
    ),
    "rank_mismatch": (
        'module {\n  sdy.mesh @mesh = <["x"=4]>\n  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8x8xf32> {\n    return %arg0 : tensor<8x8xf32>\n  }\n}\n',
        "sharding doesn't match tensor rank: 1 != 2",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_and_writes_nothing(case: str, tmp_path) -> None:
    text, expected = BAD_INPUTS[case]
    out = tmp_path / "out.mlir"
    r = shardc("opt", "-", "-o", str(out), stdin=text)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert expected in lines[0]
    assert "Traceback" not in r.stderr
    assert not out.exists()
    assert not list(tmp_path.iterdir())


def test_missing_file() -> None:
    r = shardc("opt", "does/not/exist.mlir")
    assert r.returncode != 0 and r.stderr.strip() == "error: no such file: does/not/exist.mlir"


def test_timing_reports_every_step_and_leaves_the_output_alone() -> None:
    plain = shardc("propagate", EXAMPLE)
    timed = shardc("propagate", EXAMPLE, "--timing")
    assert timed.returncode == 0, timed.stderr
    assert timed.stdout == plain.stdout and plain.stderr == ""
    report = timed.stderr
    assert "Execution time report" in report and "Total Execution Time:" in report
    names = [ln.split(")", 1)[1].strip() for ln in report.splitlines() if "%)" in ln]
    # text to IR, every pass in pipeline order, IR to text, then the total
    assert names[0] == "parse" and names[-2:] == ["print", "Total"]
    assert names.index("verify") < names.index("propagate") < names.index("export")
    total = float(report.split("Total Execution Time:")[1].split()[0])
    steps = [float(ln.split()[0]) for ln in report.splitlines() if "%)" in ln][:-1]
    assert abs(sum(steps) - total) < 1e-3 * len(steps)
    opt = shardc("opt", EXAMPLE, "--timing")
    opt_names = [ln.split(")", 1)[1].strip() for ln in opt.stderr.splitlines() if "%)" in ln]
    assert opt_names[0] == "parse" and "verify" in opt_names and "propagate" not in opt_names



@pytest.mark.parametrize("command", [("plan",), ("propagate", "--explicit")])
def test_plan_and_explicit_honour_the_pipeline_flags(command: tuple[str, ...]) -> None:
    plain = shardc(*command, EXAMPLE)
    timed = shardc(*command, EXAMPLE, "--timing", "--dump-after", "propagate")
    assert timed.returncode == 0, timed.stderr
    assert timed.stdout == plain.stdout
    names = [ln.split(")", 1)[1].strip() for ln in timed.stderr.splitlines() if "%)" in ln]
    assert names[0] == "parse" and names[-1] == "Total"
    assert names.index("propagate") < names.index("plan")
    assert ("print" in names) == ("--explicit" in command)
    dump = timed.stderr.split("// -----// IR Dump After propagate //----- //\n")[1]
    assert "sdy.sharding_per_value" in dump.split("Execution time report")[0]
    # a pass left out is not run: without propagation the plan sees the input's open dims
    skipped = shardc(*command, EXAMPLE, "--disable-pass", "propagate", "--timing")
    assert skipped.returncode == 0, skipped.stderr
    assert "propagate" not in [
        ln.split(")", 1)[1].strip() for ln in skipped.stderr.splitlines() if "%)" in ln
    ]
    assert skipped.stdout != plain.stdout

SPLIT_INPUT = """sdy.mesh @mesh = <["x"=4]>
func.func @first(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = stablehlo.negate %arg0 : tensor<16xf32>
  return %0 : tensor<16xf32>
}
// -----
func.func @broken(
// -----
sdy.mesh @mesh = <["x"=4]>
func.func @second(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = stablehlo.abs %arg0 : tensor<16xf32>
  return %0 : tensor<16xf32>
}
"""


@pytest.mark.parametrize(
    ("command", "first", "second"),
    [
        (("plan",), "all-gather {x} 64 B: %0 at <stdin>:3 of func.return in @first", "in @second"),
        (("propagate", "--explicit"), "sdy.all_gather", "func.func @second"),
        (("rules",), "stablehlo.negate: #sdy.op_sharding_rule", "stablehlo.abs: "),
    ],
)
def test_split_input_file_runs_each_chunk(
    command: tuple[str, ...], first: str, second: str
) -> None:
    # each chunk is its own module (both declare @mesh); the broken one is reported with its
    # line in the file and the others still run, their outputs joined by `// -----`
    r = shardc(*command, "--split-input-file", "-", stdin=SPLIT_INPUT)
    assert r.returncode == 1
    assert r.stderr.startswith("error: <stdin>:7:") and r.stderr.count("error:") == 1, r.stderr
    chunks = r.stdout.split("// -----\n")
    assert len(chunks) == 2, r.stdout
    assert first in chunks[0] and second in chunks[1] and second not in chunks[0], r.stdout
