"""The differential fuzzer: random JAX programs, shardc against Shardy's pipeline.

Each program of `programs.py` is lowered, tagged and given to Shardy's `sdy-propagation-pipeline`
and to shardc (the differential suite's harness, `tests/differential/harness.py`, does the
tagging, running, reading and comparing). Per program:

* agreement: the values (outside `stablehlo.while` results, which shardc leaves to XLA) whose
  closed sharding is Shardy's;
* shardc's `pin` export (what `shardc.jit` compiles) compiles for the mesh's CPU devices and
  gives the numbers of the unsharded `jax.jit(f)` run;
* bytes: the collectives XLA compiles from shardc's `pin` export against those it compiles from
  JAX's module as it is (what jax.jit runs: XLA's own Shardy lays it out), above it only by
  more than 1% + 256 B counting (`SLACK`).

Failures: a crash or internal error, a valid program (one Shardy accepts) that shardc rejects,
a pinned output that does not compile or computes wrong numbers where jax.jit's program
compiles and computes right ones. Bytes above Shardy's and disagreements are counted (the
targets: under 1% of programs and at least 99% of values); `run_programs` reports them.
A failure shrinks (ops dropped while the same failure remains) to a small reproducer.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tests.differential import harness as H

from . import programs as G


@dataclass
class ProgramResult:
    prog: G.ProgramSpec
    skipped: str = ""  # JAX itself cannot lower it, or Shardy rejects it (shardc must too)
    failure: str = ""  # kind of failure ("" when none)
    detail: str = ""
    compared: int = 0
    agreed: int = 0
    mismatches: list[str] = field(default_factory=list)
    shardc_bytes: int | None = None
    shardy_bytes: int | None = None
    shardy_numbers_ok: bool | None = None

    @property
    def more_bytes(self) -> bool:
        """Whether shardc's compiled program moves more than jax.jit's, past the slack."""
        return (self.shardc_bytes is not None and self.shardy_bytes is not None
                and self.shardc_bytes > above(self.shardy_bytes))  # fmt: skip


def above(reference: int) -> int:
    """The most bytes that count as no more than `reference`: 1% + 256 B of slack (XLA's own
    choices between layouts of equal cost, a few scalars' all-reduces)."""
    return int(reference * 1.01) + 256


def _numbers_ok(outs: list[np.ndarray], ref: list[np.ndarray]) -> bool:
    if len(outs) != len(ref):
        return False
    for o, r in zip(outs, ref, strict=True):
        if o.shape != r.shape or not np.allclose(o, r, rtol=2e-3, atol=2e-3, equal_nan=True):
            return False
    return True


def check_program(
    prog: G.ProgramSpec, *, with_bytes: bool = True, stage: Callable[[str], None] | None = None
) -> ProgramResult:
    """Run every check on one program; `stage(name)` is told before each XLA compile (XLA may
    abort the process: the caller then knows whose layout did it)."""
    import jax

    import shardc

    res = ProgramResult(prog)
    try:
        text = G.lower(prog)
        args = G.arguments(prog)
        ref = [np.asarray(o) for o in jax.jit(G.build(prog))(*args)]
    except Exception as e:  # noqa: BLE001 - the generator made something JAX refuses
        res.skipped = f"jax: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        return res
    tagged = H.tag_module(text)
    try:
        shardy_out = H.run_shardy(tagged)
    except Exception as e:  # noqa: BLE001 - Shardy rejects it: so must shardc, cleanly
        res.skipped = f"shardy rejects: {str(e).splitlines()[0][:200]}"
        try:
            shardc.propagate(tagged)
        except shardc.ShardcError:
            return res
        except Exception as e2:  # noqa: BLE001
            res.failure, res.detail = "crash", _exc(e2)
            return res
        res.failure = "accepts what Shardy rejects"
        res.detail = res.skipped
        return res
    try:
        annotated = shardc.propagate(tagged, mode="annotate")
        pinned = shardc.propagate(tagged, mode="pin")
    except shardc.ShardcError as e:
        res.failure, res.detail = "rejects a valid program", e.first_line()
        return res
    except Exception as e:  # noqa: BLE001
        res.failure, res.detail = "crash", _exc(e)
        return res
    cmp = H.compare(H.read_shardings(shardy_out), H.read_shardings(annotated))
    res.compared, res.agreed = cmp.compared, cmp.agreed
    res.mismatches = [str(m) for m in cmp.mismatches] + [f"missing {k}" for k in cmp.missing_in_shardc]
    if not with_bytes:  # agreement only (shrinking a disagreement)
        return res
    n = int(np.prod(prog.mesh_shape[0]))
    shardy_exe = None
    try:
        if stage:
            stage("shardy-compile")
        shardy_exe = H.compile_mlir(text, n, as_jax_jit=True)  # what jax.jit runs
        res.shardy_bytes = H.collective_stats(H.hlo_text(shardy_exe)).total_bytes
        res.shardy_numbers_ok = _numbers_ok(H.run_executable(shardy_exe, args), ref)
    except Exception:  # noqa: BLE001 - jax.jit's program fails too: not shardc's to answer
        res.shardy_numbers_ok = False
    try:
        if stage:
            stage("shardc-compile")
        exe = H.compile_mlir(pinned, n)
    except Exception as e:  # noqa: BLE001
        if shardy_exe is not None:
            res.failure, res.detail = "pinned output does not compile", _exc(e)
        return res
    res.shardc_bytes = H.collective_stats(H.hlo_text(exe)).total_bytes
    try:
        outs = H.run_executable(exe, args)
    except Exception as e:  # noqa: BLE001
        if res.shardy_numbers_ok:
            res.failure, res.detail = "pinned output does not run", _exc(e)
        return res
    if not _numbers_ok(outs, ref) and res.shardy_numbers_ok:
        # the reference so far is jax.jit's own run, which XLA's partitioner can get wrong too
        # (a pad whose negative low edge cuts a whole replicated operand away, resharded): the
        # judge is the program run op by op, where no partitioner sees more than one op
        eager = _eager_outputs(prog, args)
        if eager is not None and _numbers_ok(outs, eager):
            res.shardy_numbers_ok = False  # jax.jit's program is the wrong one
        else:
            res.failure = "wrong numbers"
            res.detail = "shardc's pinned output differs from the unsharded run; jax.jit's is right"
    if stage:
        stage("done")
    return res


def _eager_outputs(prog: G.ProgramSpec, args: list[np.ndarray]) -> list[np.ndarray] | None:
    """The program's outputs computed op by op (`jax.disable_jit`), None where JAX refuses."""
    import jax

    try:
        with jax.disable_jit():
            return [np.asarray(o) for o in G.build(prog)(*args)]
    except Exception:  # noqa: BLE001 - some programs only run under jit
        return None


def _exc(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
    return f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}{where}"


def shrink_program(prog: G.ProgramSpec, fails: Callable[[G.ProgramSpec], bool],
                   budget: int = 40) -> G.ProgramSpec:  # fmt: skip
    """Drop ops (last first) while `fails` stays true; at most `budget` checks."""
    calls = 0
    changed = True
    while changed and calls < budget:
        changed = False
        for op in reversed(prog.ops):
            if calls >= budget:
                break
            cand = G.without_op(prog, op.id)
            if cand is None:
                continue
            calls += 1
            if fails(cand):
                prog, changed = cand, True
                break
    return prog


@dataclass
class FuzzStats:
    programs: int = 0
    skipped: int = 0
    compared: int = 0
    agreed: int = 0
    disagreeing: int = 0
    more_bytes: int = 0
    bytes_shardc: int = 0
    bytes_shardy: int = 0
    failures: list[ProgramResult] = field(default_factory=list)
    worst: list[tuple[int, int, str]] = field(default_factory=list)  # (shardc, shardy, program)

    def add(self, r: ProgramResult) -> None:
        self.programs += 1
        if r.skipped and not r.failure:
            self.skipped += 1
            return
        if r.failure:
            self.failures.append(r)
        self.compared += r.compared
        self.agreed += r.agreed
        self.disagreeing += bool(r.mismatches)
        if r.shardc_bytes is not None and r.shardy_bytes is not None:
            self.bytes_shardc += r.shardc_bytes
            self.bytes_shardy += r.shardy_bytes
            if r.more_bytes:
                self.more_bytes += 1
                self.worst.append((r.shardc_bytes, r.shardy_bytes, f"{r.prog.seed}/{r.prog.index}"))

    @property
    def agreement(self) -> float:
        return self.agreed / self.compared if self.compared else 1.0

    def summary(self) -> str:
        ran = self.programs - self.skipped
        ratio = self.bytes_shardc / self.bytes_shardy if self.bytes_shardy else 1.0
        worst = sorted(self.worst, reverse=True)[:3]
        return (
            f"differential fuzzer: {self.programs} programs ({self.skipped} skipped: JAX or Shardy "
            f"refuses them): value agreement {self.agreed}/{self.compared} "
            f"({100 * self.agreement:.2f}%), {self.disagreeing}/{ran} programs disagree somewhere, "
            f"{self.more_bytes}/{ran} compiled programs move more bytes than jax.jit's "
            f"(totals {self.bytes_shardc} B vs {self.bytes_shardy} B, {ratio:.3f}x; worst "
            f"{', '.join(f'{a} B vs {b} B ({p})' for a, b, p in worst) or 'none'}), "
            f"{len(self.failures)} failures"
        )


def describe(r: ProgramResult) -> str:
    head = f"program seed={r.prog.seed} index={r.prog.index}"
    if r.failure:
        head += f": {r.failure}: {r.detail}"
    lines = [head, r.prog.describe()]
    lines += [f"  {m}" for m in r.mismatches[:10]]
    if r.more_bytes:
        lines.append(f"  compiled bytes: shardc {r.shardc_bytes} B vs jax.jit {r.shardy_bytes} B")
    return "\n".join(lines)


def run_programs(
    seed: int, count: int, *, start: int = 0, shrink: bool = True,
    log: Callable[[str], None] | None = None, verbose: bool = False, hang_s: float = 600.0,
) -> FuzzStats:  # fmt: skip
    """Programs `start`..`start+count-1` of campaign `seed`, in worker subprocesses (XLA aborts
    the process on some layouts: the campaign goes on, and says whose layout it was)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    from .mutation import ROOT, _lines_with_timeout

    stats = FuzzStats()
    env = dict(os.environ)
    env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    env.setdefault("JAX_PLATFORMS", "cpu")
    nxt, end = start, start + count
    while nxt < end:
        cmd = [sys.executable, "-m", "tests.fuzz.differential", "--worker", str(seed), str(nxt),
               str(end - nxt), "1" if shrink else "0"]  # fmt: skip
        errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read after the worker ends
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=errlog,
                                text=True)  # fmt: skip
        current, stage = nxt, ""
        try:
            for line in _lines_with_timeout(proc, hang_s):
                rec = json.loads(line)
                if "start" in rec:
                    current, stage = rec["start"], ""
                elif "stage" in rec:
                    stage = rec["stage"]
                else:
                    r = _result_from_json(seed, rec)
                    stats.add(r)
                    if log and (r.failure or (verbose and (r.mismatches or r.more_bytes))):
                        log(describe(r))
                    nxt = rec["index"] + 1
        except TimeoutError:
            proc.kill()
            stage = f"hang after {stage or 'start'}"
        proc.wait()
        if nxt >= end:
            errlog.close()
            break
        errlog.seek(0)
        tail = errlog.read()[-400:].strip().splitlines()
        errlog.close()
        r = ProgramResult(G.generate(seed, current))
        why = tail[-1] if tail else f"exit {proc.returncode}"
        if stage == "shardy-compile":
            r.skipped = f"XLA dies on jax.jit's program too: {why}"
        elif stage == "shardc-compile":
            r.failure = "XLA dies on the pinned output (jax.jit's program compiles)"
            r.detail = why
        else:
            r.failure, r.detail = f"worker died ({stage or 'before XLA'})", why
        stats.add(r)
        if log and r.failure:
            log(describe(r))
        nxt = current + 1
    return stats


def _result_to_json(index: int, r: ProgramResult) -> dict[str, object]:
    return {
        "index": index, "skipped": r.skipped, "failure": r.failure, "detail": r.detail,
        "compared": r.compared, "agreed": r.agreed, "mismatches": r.mismatches,
        "shardc_bytes": r.shardc_bytes, "shardy_bytes": r.shardy_bytes,
        "shardy_numbers_ok": r.shardy_numbers_ok,
    }  # fmt: skip


def _result_from_json(seed: int, rec: dict[str, object]) -> ProgramResult:
    r = ProgramResult(G.generate(seed, int(rec["index"])))  # type: ignore[arg-type]
    for k, v in rec.items():
        if k != "index":
            setattr(r, k, v)
    return r


def _worker(seed: int, start: int, count: int, shrink: bool) -> None:
    import json

    def say(obj: dict[str, object]) -> None:
        print(json.dumps(obj), flush=True)

    import os

    die_at = os.environ.get("SHARDC_FUZZ_ABORT_AT")  # tests: act out an XLA abort there

    def stage(name: str, index: int) -> None:
        say({"stage": name})
        if die_at == f"{index}:{name}":
            os.abort()

    for index in range(start, start + count):
        say({"start": index})
        prog = G.generate(seed, index)
        r = check_program(prog, stage=lambda s, i=index: stage(s, i))
        if r.failure and shrink:
            kind = r.failure
            small = shrink_program(prog, lambda p, k=kind: check_program(p).failure == k)
            r2 = check_program(small)
            if r2.failure == kind:
                r.detail += "\nshrunk to:\n" + small.describe() + f"\n({r2.detail})"
        say(_result_to_json(index, r))


def shrink_disagreement(prog: G.ProgramSpec, budget: int = 40) -> G.ProgramSpec:
    """The smallest program (ops dropped) on which shardc still disagrees with Shardy."""

    def fails(p: G.ProgramSpec) -> bool:
        r = check_program(p, with_bytes=False)
        return bool(r.mismatches) and not r.failure

    return shrink_program(prog, fails, budget)


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        _worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
    else:
        sys.exit("usage: python -m tests.fuzz.differential --worker SEED START COUNT SHRINK")
