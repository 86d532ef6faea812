"""The fuzzers at a small fixed budget (long runs: `python -m tests.fuzz --count N`).

Seeds are fixed here so the suite is reproducible; a long run takes a fresh seed and prints it.
"""

from __future__ import annotations

import pytest

from tests.fuzz import mutation as M
from tests.fuzz.shrink import shrink_list, shrink_text

MUTATION_SEED = 13
MUTATION_BUDGET = 80


def test_mutation_fuzzer_finds_nothing() -> None:
    res = M.run_campaign(MUTATION_SEED, MUTATION_BUDGET)
    assert res.mutants == MUTATION_BUDGET
    assert res.runs == MUTATION_BUDGET * len(M.COMMANDS)
    # the mutants reach both ends: some still run through, some are refused
    assert res.outputs > 0 and res.clean_errors > 0, res.summary()
    assert not res.failures, res.summary() + "\n" + "\n".join(map(str, res.failures))


def test_mutation_campaign_survives_a_crashing_run(monkeypatch) -> None:
    monkeypatch.setenv("SHARDC_FUZZ_ABORT_AT", "1")
    res = M.run_campaign(MUTATION_SEED, 3, shrink=False)
    assert res.mutants == 3 and len(res.failures) == 1, res.summary()
    f = res.failures[0]
    assert f.index == 1 and f.signature.startswith("worker died"), f
    assert res.runs == 2 * len(M.COMMANDS)  # mutants 0 and 2 ran


def test_mutants_are_reproducible() -> None:
    pool = M.corpus()
    assert len(pool) > 50
    first = [M.mutant(5, i, pool) for i in range(20)]
    assert first == [M.mutant(5, i, pool) for i in range(20)]
    assert len({d for _, d in first}) > 15  # and actually mutated differently


def test_oracle_flags_internal_errors_and_unverifiable_output(monkeypatch) -> None:
    import shardc.tools.cmd_rules as cmd_rules

    def broken(args: object) -> int:
        raise KeyError("bug")

    monkeypatch.setattr(cmd_rules, "run", broken)
    o = M.run_command(("rules",), b"module {}")
    assert not o.ok and o.signature == "exit 3 KeyError"
    assert M.run_command(("propagate",), b"\xff").signature == "error"
    assert M.run_command(("propagate",), b"module {}").signature == "output"

    import shardc.tools.cmd_opt as cmd_opt

    unverifiable = '"builtin.module"() ({\n}) : () -> ()\n'  # a region with no block
    monkeypatch.setattr(cmd_opt, "export_text", lambda *a, **k: unverifiable)
    o = M.run_command(("opt",), b"module {}")
    assert not o.ok and o.signature.startswith("output does not verify")


def test_failures_shrink_to_a_small_reproducer(monkeypatch) -> None:
    import shardc.tools.cmd_rules as cmd_rules
    from shardc.backend.importer import import_text

    def broken_on_abs(args: object) -> int:  # a "bug" that any stablehlo.abs triggers
        from shardc.tools.io import read_input

        text, _ = read_input(args.input)  # type: ignore[attr-defined]
        module = import_text(text)
        if any(op.name == "stablehlo.abs" for op in module.walk()):
            raise ZeroDivisionError
        return 0

    monkeypatch.setattr(cmd_rules, "run", broken_on_abs)
    big = (
        b'sdy.mesh @mesh = <["X"=4, "Y"=2]>\n'
        b"func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {\n"
        b"  %0 = stablehlo.add %a, %b : tensor<8xf32>\n"
        b"  %1 = stablehlo.abs %a : tensor<8xf32>\n"
        b"  %2 = stablehlo.multiply %0, %0 : tensor<8xf32>\n"
        b"  return %2 : tensor<8xf32>\n"
        b"}\n"
    )
    o = M.run_command(("rules",), big)
    assert o.signature == "exit 3 ZeroDivisionError"
    small = M.shrink_failure(("rules",), big, o.signature)
    assert b"stablehlo.abs" in small and len(small) < len(big)
    assert b"sdy.mesh" not in small  # the mesh line plays no part in the failure
    assert M.run_command(("rules",), small).signature == o.signature


def test_shrink_list_and_text() -> None:
    assert shrink_list(list(range(64)), lambda xs: 3 in xs and 60 in xs) == [3, 60]
    assert shrink_text("a\nkeep ME\nb", lambda t: "ME" in t) == "ME"
    with pytest.raises(AssertionError):
        assert shrink_list([1, 2], lambda xs: False) == []


# -- the differential fuzzer ----------------------------------------------------------------------

PROGRAM_SEED = 13
PROGRAM_BUDGET = 6


def test_differential_fuzzer_finds_nothing() -> None:
    from tests.fuzz import differential as D

    stats = D.run_programs(PROGRAM_SEED, PROGRAM_BUDGET)
    report = stats.summary() + "\n" + "\n\n".join(D.describe(r) for r in stats.failures)
    assert stats.programs == PROGRAM_BUDGET
    assert stats.skipped == 0, report  # the generator makes only programs JAX lowers
    assert not stats.failures, report
    assert stats.compared > 100 and stats.agreement >= 0.99, report
    assert stats.more_bytes == 0, report



def test_a_gathers_layout_moves_no_more_than_jax_jit() -> None:
    """A program where shardc and Shardy agree on every value, a gather among them, whose
    result XLA's own propagation lays out as shardc did once nothing else forces it: the
    compiled form moves what jax.jit's program moves."""
    from tests.fuzz import differential as D

    stats = D.run_programs(1313, 1, start=35, shrink=False)
    report = stats.summary()
    assert stats.programs == 1 and not stats.failures, report
    assert stats.agreement == 1.0, report
    assert stats.more_bytes == 0, report


def test_wrong_numbers_are_judged_by_the_op_by_op_run() -> None:
    """A pad whose negative low edge cuts its whole replicated operand away, then split by a
    shard_map: jax.jit's program (XLA's partitioner) computes it wrongly on this jaxlib, the
    pin export's right. The program run op by op decides, so shardc is not blamed."""
    import jax
    import numpy as np

    from tests.differential import harness as H
    from tests.fuzz import differential as D
    from tests.fuzz import programs as G

    prog = G.generate(5150, 125)
    args = G.arguments(prog)
    with jax.disable_jit():
        eager = [np.asarray(o) for o in G.build(prog)(*args)]
    jitted = H.run_executable(H.compile_mlir(G.lower(prog), 8, as_jax_jit=True), args)
    res = D.check_program(prog)
    assert not res.failure, D.describe(res)
    if D._numbers_ok(jitted, eager):  # a newer XLA computes it right: then it is a plain case
        assert res.shardy_numbers_ok, "jax.jit's numbers are right but judged wrong"
    else:
        assert not res.shardy_numbers_ok, "jax.jit's wrong numbers were taken as the reference"


def test_program_campaign_blames_an_xla_abort_on_the_layout_compiled(monkeypatch) -> None:
    from tests.fuzz import differential as D

    monkeypatch.setenv("SHARDC_FUZZ_ABORT_AT", "0:shardc-compile")
    stats = D.run_programs(PROGRAM_SEED, 2, shrink=False)
    assert stats.programs == 2 and len(stats.failures) == 1, stats.summary()
    assert stats.failures[0].prog.index == 0
    assert stats.failures[0].failure.startswith("XLA dies on the pinned output")
    monkeypatch.setenv("SHARDC_FUZZ_ABORT_AT", "0:shardy-compile")
    stats = D.run_programs(PROGRAM_SEED, 1, shrink=False)
    assert stats.skipped == 1 and not stats.failures, stats.summary()


def test_programs_are_reproducible_and_lower() -> None:
    from tests.fuzz import programs as G

    a = [G.generate(3, i) for i in range(10)]
    assert a == [G.generate(3, i) for i in range(10)]
    assert all(5 <= len(p.ops) <= 30 for p in a)
    kinds = {o.kind for p in a for o in p.ops}
    assert {"einsum", "shard_map", "fori", "wsc"} <= kinds, kinds
    text = G.lower(a[0])
    assert "sdy.mesh" in text and "func.func public @main" in text


def test_a_failing_program_shrinks_to_the_op_that_fails(monkeypatch) -> None:
    import shardc
    from tests.fuzz import differential as D
    from tests.fuzz import programs as G

    real = shardc.propagate

    def rejects_pad(text: str, **kw: object) -> str:  # a "bug": any pad is refused
        if "stablehlo.pad" in text:
            raise shardc.ShardcError("pad refused")
        return real(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(shardc, "propagate", rejects_pad)
    prog = next(p for p in (G.generate(21, i) for i in range(40))
                if sum(o.kind == "pad" for o in p.ops) == 1 and len(p.ops) >= 8)  # fmt: skip
    assert D.check_program(prog).failure == "rejects a valid program"
    small = D.shrink_program(prog, lambda p: D.check_program(p, with_bytes=False).failure
                             == "rejects a valid program")  # fmt: skip
    assert [o.kind for o in small.ops].count("pad") == 1
    assert len(small.ops) < len(prog.ops) and len(small.ops) <= 3, small.describe()
