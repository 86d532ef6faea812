"""Never an invalid output: every golden input through `propagate`, `opt` and `plan`.

Each chunk of every `.mlir` under tests/lit (split at `// -----`, as the lit RUN lines split
them) and every example module goes through the commands in-process (`shardc.tools.cli.main`,
the mutation fuzzer's oracle `tests.fuzz.mutation.run_command`): a run either exits 0 with
output that jaxlib parses and verifies (for the commands that print MLIR), or exits 1 with
exactly one `error: ...` line and no output. An internal error, a traceback, an invalid module
(say a sharding naming an axis its mesh lacks) or several error lines fail the test.
"""

from __future__ import annotations

from tests.fuzz import mutation as M

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("propagate",),
    ("propagate", "--keep-open"),
    ("opt",),
    ("plan",),
)


def test_every_golden_input_gives_valid_output_or_one_error_line() -> None:
    corpus = M.corpus()
    assert len(corpus) > 250  # (every lit file's chunks: the corpus was found)
    outputs = errors = 0
    failures = []
    for name, chunk in corpus:
        for argv in COMMANDS:
            o = M.run_command(argv, chunk.encode())
            if not o.ok:
                failures.append(f"{name}: shardc {' '.join(argv)}: {o.signature}: {o.detail[:300]}")
            elif o.signature == "output":
                outputs += 1
            else:
                errors += 1
    assert not failures, f"{len(failures)} invalid runs:\n" + "\n".join(failures)
    # most inputs run through; the error cases (tests/lit/errors, refused regions) are refused
    assert outputs > 5 * errors > 0, (outputs, errors)
