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

    import shardc.exporter as exporter

    unverifiable = '"builtin.module"() ({\n}) : () -> ()\n'  # a region with no block
    monkeypatch.setattr(exporter, "export_text", lambda *a, **k: unverifiable)
    o = M.run_command(("opt",), b"module {}")
    assert not o.ok and o.signature.startswith("output does not verify")


def test_failures_shrink_to_a_small_reproducer(monkeypatch) -> None:
    import shardc.tools.cmd_rules as cmd_rules
    from shardc.importer import import_text

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
