"""The CLI mutation fuzzer: mutated golden inputs through every command.

Every mutant of a golden input (`tests/lit/**/*.mlir` split at `// -----`, `examples/*.mlir`) goes
through `propagate`, `propagate --pin`, `check`, `rules` and `opt --remove-redundant-collectives`,
in-process. Each run must end one of two ways: exit 1 with exactly one line `error: ...` on stderr
(not an internal error) and nothing on stdout, or exit 0 with output that jaxlib parses and
verifies. Anything else (an internal error, another exit code, an exception escaping `main`,
output that does not verify, a hang, a signal) is a failure, shrunk to a small reproducer.

A mutant is a pure function of (seed, index), so `Failure.seed/index` reproduce it exactly.
Mutants run in a worker subprocess (`python -m tests.fuzz.mutation --worker ...`) that reports
each one as a JSON line: a segfault or a hang in jaxlib then kills the worker, not the caller,
and the campaign goes on from the next mutant.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("propagate",),
    ("propagate", "--pin"),
    ("check",),
    ("rules",),
    ("opt", "--remove-redundant-collectives"),
)
# commands whose successful output is an MLIR module (it must verify)
MLIR_OUTPUT = {"propagate", "opt"}


# ---------------------------------------------------------------------------------------------
# Corpus and mutators


def corpus() -> list[tuple[str, str]]:
    """(name, text) of every golden input chunk, in a fixed order."""
    paths = sorted(glob.glob(os.path.join(ROOT, "tests", "lit", "**", "*.mlir"), recursive=True))
    paths += sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(p, ROOT)
        for i, chunk in enumerate(re.split(r"(?m)^// -----\s*$", text)):
            if "func.func" in chunk or "module" in chunk:
                out.append((f"{rel}#{i}", chunk))
    return out


_NUMBERS = ("0", "1", "-1", "2", "3", "7", "64", "4294967296", "9223372036854775808", "-0")
_AXES = ('"X"', '"Y"', '"Z"', '""', '"x"', '"\\""', '"X":(1)2', '"X":(2)2')
_DIMS = ("{?}", "{}", '{"X", "X"}', '{"X", ?}p0', '{"Y"}p9', '{"X":(1)2}', '{"nope"}', "{?}p1")
_TYPES = ("f32", "bf16", "i32", "i1", "f64", "?", "0", "1", "3", "8", "16", "2x2")
_BYTES = (b"\xff", b"\xc3(", b"\x00", b"{", b"}", b"(", b")", b"[", b"]", b"<", b">", b'"',
          b"%", b"^bb1:", b"#", b"@", b",", b"\n", b"\\", b"\xe2\x82")  # fmt: skip


def _span(text: str, rng: random.Random, most: int = 40) -> tuple[int, int]:
    i = rng.randrange(len(text) + 1)
    return i, min(len(text), i + rng.randint(1, most))


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _m_delete_span(text: str, rng: random.Random, pool: list[str]) -> str:
    i, j = _span(text, rng)
    return text[:i] + text[j:]


def _m_delete_line(text: str, rng: random.Random, pool: list[str]) -> str:
    ls = _lines(text)
    del ls[rng.randrange(len(ls))]
    return "\n".join(ls)


def _m_duplicate_line(text: str, rng: random.Random, pool: list[str]) -> str:
    ls = _lines(text)
    i = rng.randrange(len(ls))
    ls.insert(rng.randrange(len(ls) + 1), ls[i])
    return "\n".join(ls)


def _m_swap_lines(text: str, rng: random.Random, pool: list[str]) -> str:
    ls = _lines(text)
    i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
    ls[i], ls[j] = ls[j], ls[i]
    return "\n".join(ls)


def _m_foreign_line(text: str, rng: random.Random, pool: list[str]) -> str:
    other = _lines(rng.choice(pool))
    ls = _lines(text)
    ls.insert(rng.randrange(len(ls) + 1), rng.choice(other))
    return "\n".join(ls)


def _replace_match(text: str, rng: random.Random, pattern: str, choices: tuple[str, ...]) -> str:
    ms = list(re.finditer(pattern, text))
    if not ms:
        return text
    m = rng.choice(ms)
    return text[: m.start()] + rng.choice(choices) + text[m.end() :]


def _m_number(text: str, rng: random.Random, pool: list[str]) -> str:
    return _replace_match(text, rng, r"\d+", _NUMBERS + (str(rng.randint(0, 99)),))


def _m_axis(text: str, rng: random.Random, pool: list[str]) -> str:
    return _replace_match(text, rng, r'"[A-Za-z_][A-Za-z_0-9]*"', _AXES)


def _m_dim(text: str, rng: random.Random, pool: list[str]) -> str:
    return _replace_match(text, rng, r"\{(?:\"[^\"]*\"(?::\(\d+\)\d+)?(?:, )?)*\??\}(?:p\d+)?", _DIMS)


def _m_type(text: str, rng: random.Random, pool: list[str]) -> str:
    return _replace_match(text, rng, r"(?<=[<x])(?:\d+|f32|i32|bf16|i1)(?=[x>])", _TYPES)


def _m_op_name(text: str, rng: random.Random, pool: list[str]) -> str:
    names = re.findall(r"\b(?:stablehlo|sdy|func)\.[a-z_]+", text)
    if not names:
        return text
    return _replace_match(text, rng, r"\b(?:stablehlo|sdy|func)\.[a-z_]+", tuple(set(names)))


def _m_drop_attr(text: str, rng: random.Random, pool: list[str]) -> str:
    return _replace_match(text, rng, r"sdy\.sharding(?:_per_value)? = #sdy\.sharding[^>]*>+", ("",))


def _m_symbol(text: str, rng: random.Random, pool: list[str]) -> str:
    syms = tuple(set(re.findall(r"@[A-Za-z_][\w.$]*", text))) or ("@main",)
    return _replace_match(text, rng, r"@[A-Za-z_][\w.$]*", syms + ("@nope",))


def _m_value(text: str, rng: random.Random, pool: list[str]) -> str:
    vals = tuple(set(re.findall(r"%[\w#]+", text))) or ("%0",)
    return _replace_match(text, rng, r"%[\w#]+", vals)


def _m_tuple_type(text: str, rng: random.Random, pool: list[str]) -> str:
    return _replace_match(text, rng, r"tensor<[^<>]*>", ("tuple<tensor<8xf32>>", "tensor<?x8xf32>",
                                                         "!stablehlo.token", "tensor<f32>"))


def _m_truncate(text: str, rng: random.Random, pool: list[str]) -> str:
    return text[: rng.randrange(len(text) + 1)]


def _m_nest(text: str, rng: random.Random, pool: list[str]) -> str:
    i = rng.randrange(len(text) + 1)
    k = rng.choice((3, 50, 3000, 12000))
    o, c = rng.choice((("[", "]"), ("(", ")"), ("{", "}"), ("<", ">")))
    return text[:i] + o * k + c * rng.choice((k, k - 1, 0)) + text[i:]


MUTATORS: tuple[Callable[[str, random.Random, list[str]], str], ...] = (
    _m_delete_span, _m_delete_line, _m_duplicate_line, _m_swap_lines, _m_foreign_line, _m_number,
    _m_number, _m_axis, _m_dim, _m_dim, _m_type, _m_type, _m_op_name, _m_drop_attr, _m_truncate,
    _m_nest, _m_symbol, _m_value, _m_value, _m_tuple_type,
)  # fmt: skip


def mutant(seed: int, index: int, pool: list[tuple[str, str]]) -> tuple[str, bytes]:
    """(base input name, mutated bytes) for mutant `index` of campaign `seed`."""
    rng = random.Random(f"shardc-mutation:{seed}:{index}")
    name, text = pool[rng.randrange(len(pool))]
    texts = [t for _, t in pool]
    for _ in range(rng.choice((1, 1, 2, 3))):
        text = rng.choice(MUTATORS)(text, rng, texts)
    data = text.encode("utf-8")
    if rng.random() < 0.08:  # raw bytes, invalid UTF-8 included
        i = rng.randrange(len(data) + 1)
        data = data[:i] + rng.choice(_BYTES) + data[i:]
    return name, data


# ---------------------------------------------------------------------------------------------
# The oracle


@dataclass
class Outcome:
    ok: bool
    signature: str = ""  # on success: "error" (a clean one-line error) or "output"  # what went wrong, stable under shrinking (kind + exception type)
    detail: str = ""


def run_command(argv: tuple[str, ...], data: bytes) -> Outcome:
    """Run `shardc ARGV FILE` in-process on `data` and judge the result."""
    from shardc.tools.cli import main

    with tempfile.NamedTemporaryFile("wb", suffix=".mlir", delete=False) as f:
        f.write(data)
        path = f.name
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main([*argv, path])
    except BaseException as e:  # noqa: BLE001 - anything escaping main is a failure
        return Outcome(False, f"escaped {type(e).__name__}", repr(e)[:500])
    finally:
        os.unlink(path)
    stdout, stderr = out.getvalue(), err.getvalue()
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    if rc == 1:
        lines = stderr.strip().splitlines()
        if "internal error" in stderr:
            kind = re.search(r"internal error: (\w+)", stderr)
            return Outcome(False, f"internal error {kind.group(1) if kind else ''}", stderr[:500])
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return Outcome(False, "error not one line", stderr[:500])
        if stdout:
            return Outcome(False, "output on error", stdout[:200])
        return Outcome(True, "error")
    if rc != 0:
        kind = re.search(r"internal error: (\w+)", stderr)
        return Outcome(False, f"exit {rc} {kind.group(1) if kind else ''}".strip(), stderr[:500])
    if errors:
        return Outcome(False, "error line with exit 0", stderr[:500])
    if argv[0] in MLIR_OUTPUT:
        from shardc.backend import mlir_bridge
        from shardc.dialect.errors import ShardcError

        try:
            mlir_bridge.verify(mlir_bridge.parse_module(stdout, "<output>"), "<output>")
        except ShardcError as e:
            msg = re.sub(r"\d+", "N", e.first_line())
            return Outcome(False, f"output does not verify: {msg[:80]}", e.first_line()[:500])
    return Outcome(True, "output")


def shrink_failure(argv: tuple[str, ...], data: bytes, signature: str, budget: int = 300) -> bytes:
    """The smallest input (lines, then characters) on which `argv` fails with `signature`."""
    from .shrink import shrink_list

    def fails(chunks: list[bytes]) -> bool:
        o = run_command(argv, b"".join(chunks))
        return not o.ok and o.signature == signature

    lines = shrink_list(data.splitlines(keepends=True), fails, budget)
    small = b"".join(lines)
    if len(small) <= 300:
        pieces: list[bytes] = [bytes([b]) for b in small]
        small = b"".join(shrink_list(pieces, fails, budget // 2))
    return small


# ---------------------------------------------------------------------------------------------
# Campaigns: a worker subprocess runs the mutants, the caller survives its crashes


@dataclass
class Failure:
    seed: int
    index: int
    base: str
    command: str
    signature: str
    detail: str
    reproducer: str  # the shrunk input (text; invalid UTF-8 as \\x escapes)

    def __str__(self) -> str:
        return (
            f"mutant seed={self.seed} index={self.index} (from {self.base}): "
            f"shardc {self.command}: {self.signature}\n  {self.detail.strip()[:300]}\n"
            f"  reproducer:\n{self.reproducer}"
        )


@dataclass
class CampaignResult:
    mutants: int = 0
    runs: int = 0
    clean_errors: int = 0
    outputs: int = 0
    failures: list[Failure] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"mutation fuzzer: {self.mutants} mutants, {self.runs} command runs: "
            f"{self.outputs} verified outputs, {self.clean_errors} clean one-line errors, "
            f"{len(self.failures)} failures"
        )


def _worker(seed: int, start: int, count: int, shrink: bool) -> None:
    """Run mutants start..start+count-1, one JSON line per mutant on stdout."""
    pool = corpus()
    die_at = os.environ.get("SHARDC_FUZZ_ABORT_AT")  # tests: act out a crash there
    for index in range(start, start + count):
        print(json.dumps({"start": index}), flush=True)
        if die_at == str(index):
            os.abort()
        base, data = mutant(seed, index, pool)
        runs = []
        for argv in COMMANDS:
            o = run_command(argv, data)
            rec: dict[str, object] = {"command": " ".join(argv), "ok": o.ok, "kind": o.signature}
            if not o.ok:
                small = shrink_failure(argv, data, o.signature) if shrink else data
                rec.update(detail=o.detail, reproducer=small.decode("utf-8", "backslashreplace"))
            runs.append(rec)
        print(json.dumps({"index": index, "base": base, "runs": runs}), flush=True)


def run_campaign(
    seed: int, count: int, *, start: int = 0, shrink: bool = True, hang_s: float = 120.0,
    log: Callable[[str], None] | None = None,
) -> CampaignResult:
    """Mutants `start`..`start+count-1` of campaign `seed`, in worker subprocesses."""
    result = CampaignResult()
    pool = corpus()
    env = dict(os.environ)
    env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    env.setdefault("JAX_PLATFORMS", "cpu")
    nxt = start
    end = start + count
    while nxt < end:
        cmd = [sys.executable, "-m", "tests.fuzz.mutation", "--worker", str(seed), str(nxt),
               str(end - nxt), "1" if shrink else "0"]  # fmt: skip
        errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read after the worker ends
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=errlog,
                                text=True)  # fmt: skip
        current = nxt
        died = None
        try:
            for line in _lines_with_timeout(proc, hang_s):
                rec = json.loads(line)
                if "start" in rec:
                    current = rec["start"]
                    continue
                result.mutants += 1
                for r in rec["runs"]:
                    result.runs += 1
                    if r["ok"]:
                        if r["kind"] == "error":
                            result.clean_errors += 1
                        else:
                            result.outputs += 1
                        continue
                    result.failures.append(Failure(
                        seed, rec["index"], rec["base"], r["command"], r["kind"],
                        r["detail"], r["reproducer"],
                    ))  # fmt: skip
                    if log:
                        log(str(result.failures[-1]))
                nxt = rec["index"] + 1
        except TimeoutError:
            proc.kill()
            died = f"hang (no answer in {hang_s:.0f}s)"
        proc.wait()
        if nxt >= end:
            break
        if died is None:
            errlog.seek(0)
            died = f"worker died (exit {proc.returncode}): {errlog.read()[-300:]}"
        errlog.close()
        base, data = mutant(seed, current, pool)
        result.mutants += 1
        result.failures.append(Failure(seed, current, base, "?", died.split(":")[0], died,
                                       data.decode("utf-8", "backslashreplace")))  # fmt: skip
        if log:
            log(str(result.failures[-1]))
        nxt = current + 1
    return result


def _lines_with_timeout(proc: subprocess.Popen[str], timeout: float):  # noqa: ANN202
    """Lines of the worker's stdout; `TimeoutError` when none comes for `timeout` seconds."""
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while True:
        if not sel.select(timeout):
            raise TimeoutError
        line = proc.stdout.readline()
        if not line:
            return
        yield line


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        _worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
    else:
        sys.exit("usage: python -m tests.fuzz.mutation --worker SEED START COUNT SHRINK")
