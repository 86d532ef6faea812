"""The in-process lit runner (tests/lit_runner.py) runs RUN lines as lit does: checks that fail
fail, `not shardc` goes through the real executable, redirections apply in order, and what it
does not implement is an error rather than a skipped line."""

from __future__ import annotations

import os

import pytest

from tests.lit_runner import LitError, Runner, restored_registries, run_lines, substitute

MODULE = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @opaque(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = stablehlo.negate %arg0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


@pytest.fixture(scope="module")
def runner() -> Runner:
    return Runner()


def _write(tmp_path: os.PathLike, name: str, text: str) -> str:
    path = os.path.join(tmp_path, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def test_matching_checks_pass_and_a_wrong_one_fails(runner: Runner, tmp_path: os.PathLike) -> None:
    good = "// RUN: shardc propagate %s | filecheck %s\n" + MODULE + (
        '// CHECK: stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}\n'
    )
    assert runner.run_file(_write(tmp_path, "good.mlir", good)).passed
    bad = good.replace('[{"x"}]>]>}', '[{}]>]>}')
    result = runner.run_file(_write(tmp_path, "bad.mlir", bad))
    assert not result.passed
    assert any("error: Couldn't match" in line for line in result.transcript)


def test_redirections_apply_in_order(runner: Runner, tmp_path: os.PathLike) -> None:
    # `2>&1 >/dev/null`: the notes reach filecheck, the module does not
    text = (
        "// RUN: shardc propagate %s 2>&1 >/dev/null | filecheck --check-prefix=NOTE %s\n"
        "// RUN: shardc propagate %s 2>%t.err | filecheck --check-prefix=OUT %s\n"
        "// RUN: filecheck --check-prefix=NOTE %s < %t.err\n" + MODULE
        + "// NOTE: note: no sharding rule for stablehlo.custom_call (1 op)\n"
        "// NOTE-NOT: func.func\n"
        "// OUT: func.func @main\n"
        "// OUT-NOT: note:\n"
    )
    result = runner.run_file(_write(tmp_path, "notes.mlir", text))
    assert result.passed, result.transcript
    assert not runner.run_file(
        _write(tmp_path, "swapped.mlir", text.replace("2>&1 >/dev/null", ">/dev/null 2>&1"))
    ).passed  # both to /dev/null: filecheck reads nothing


def test_not_shardc_runs_the_real_executable(
    runner: Runner, tmp_path: os.PathLike, monkeypatch: pytest.MonkeyPatch
) -> None:
    def in_process(*args: object) -> int:
        raise AssertionError("an error case ran in-process")

    monkeypatch.setattr(runner, "shardc_in_process", in_process)
    text = (
        "// RUN: not shardc opt %s 2>&1 | filecheck %s\n"
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  %0 = stablehlo.bogus %arg0 : tensor<8xf32>\n"
        "  return %0 : tensor<8xf32>\n}\n"
        "// CHECK: error: {{.*}}stablehlo.bogus\n"
    )
    assert runner.run_file(_write(tmp_path, "error.mlir", text)).passed
    # a command that succeeds under `not` fails the line
    ok = "// RUN: not shardc opt %s\n" + MODULE
    result = runner.run_file(_write(tmp_path, "not_ok.mlir", ok))
    assert not result.passed and "# exit status 1" in result.transcript


def test_what_the_runner_does_not_implement_is_an_error(
    runner: Runner, tmp_path: os.PathLike
) -> None:
    unknown = runner.run_file(_write(tmp_path, "subst.mlir", "// RUN: shardc opt %q\n"))
    assert not unknown.passed and "unknown substitution '%q'" in unknown.transcript[-1]
    with pytest.raises(LitError, match="XFAIL"):
        run_lines(_write(tmp_path, "xfail.mlir", "// RUN: true\n// XFAIL: *\n"))
    with pytest.raises(LitError, match="no RUN line"):
        run_lines(_write(tmp_path, "none.mlir", MODULE))


def test_continuations_and_substitutions(runner: Runner, tmp_path: os.PathLike) -> None:
    path = _write(
        tmp_path, "cont.mlir", "// RUN: shardc opt \\\n// RUN:   %s | \\\n// RUN: filecheck %s\n"
    )
    (line,) = run_lines(path)
    assert line == "shardc opt %s | filecheck %s"
    assert substitute("a %s %S %t %% %%arg0", "/d/f.mlir", "/t/f.mlir.tmp", runner.config) == (
        "a /d/f.mlir /d /t/f.mlir.tmp % %arg0"
    )


def test_registries_are_restored_after_a_file() -> None:
    import shardc
    from shardc.dialect.rules import registry

    before = dict(registry._RULES)
    with restored_registries():
        shardc.register_rule("test.lit_runner_op")(shardc.einsum_rule("i -> i"))
        shardc.register_rule("stablehlo.negate", override=True)(shardc.einsum_rule("i -> i"))
    assert registry._RULES == before
