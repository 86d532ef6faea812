"""Shardy's own propagation tests, run through jaxlib's Shardy and through shardc, compared.

    python bench/shardy_suite.py CHECKOUT [--only NAME,...] [--list] [--verbose]

CHECKOUT is a checkout of github.com/openxla/shardy (or its propagation test folder); the tests
are read from there, never copied into this repository. For every `.mlir` file under
shardy/dialect/sdy/transforms/propagation/test/, the file's RUN line is read and each
`// -----` chunk is one case:

* jaxlib: the case through jaxlib's own Shardy with the RUN line's passes (PassManager, as
  tests/differential/harness.py runs Shardy), then the file's FileCheck lines on the output
  (the python `filecheck` package); `-verify-diagnostics`' expected warnings are matched
  against the diagnostics (Shardy's unknown-op warning is printed once per process, so a
  missing one of those is not held against it).
* shardc: the same case through `shardc.api.propagate.propagate_text` with the closest options
  (a pass run alone keeps open dims: `keep_open`; `sdy-basic-propagate` is the basic strategy
  without op or user priorities, `sdy-aggressive-propagate` the aggressive one,
  `sdy-op-priority-propagate` adds op priorities, `sdy-user-priority-propagate` user priorities,
  `sdy-propagation-pipeline` is shardc's default), then FileCheck on shardc's own text.
  `sdy-populate-op-sharding-rules` files compare every op's rule with shardc's (`shardc rules`,
  `--conservative` where the RUN line says so), one case per op, and FileCheck runs on the
  module with shardc's rules written on its ops.
* Both runs also get the case with every op tagged (harness.tag_module), and every value's
  sharding is compared by tag: *substance* when the axes differ, *open-closed* when only which
  dims are open differs; *form* when every sharding agrees but FileCheck fails (shardc keeps
  the input's ops, prints shardings Shardy leaves out, names callee copies differently).
  *rejected*: shardc refused the case (an error). The data-flow edges of a pass run alone are
  sunk into their owners (Shardy's own sink passes) before the comparison: shardc's output
  keeps no `sdy.data_flow_edge`.

The table counts, per file, the cases, those jaxlib passes, those shardc passes, and of the
cases jaxlib passes but shardc does not, how many differ in substance / open-closed / form /
were rejected; then every case that differs in substance with its first differences.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from shardc.dialect.errors import ShardcError  # noqa: E402
from shardc.passes.propagation.options import PropagationOptions  # noqa: E402
from shardc.tools.io import split_chunks  # noqa: E402
from tests.differential import harness as H  # noqa: E402

TEST_DIR = "shardy/dialect/sdy/transforms/propagation/test"
CATEGORIES = ("substance", "open-closed", "form", "rejected")
# after a pass run alone, the data-flow edges' shardings are written back onto their owners (the
# op results, block arguments, func arguments and call results they stand for), as Shardy's
# pipeline does: shardc's output has no edges
SINK_EDGES = ",func.func(sdy-sink-data-flow-edges),func.func(sdy-sink-func-data-flow-edges)"

# ---------------------------------------------------------------------------------------------
# RUN lines


@dataclass(frozen=True)
class RunLine:
    """What one test file's `// RUN: sdy_opt ...` line asks for."""

    passes: tuple[tuple[str, dict[str, str]], ...]  # (pass name, options)
    verify_diagnostics: bool
    filecheck: bool

    def has(self, name: str) -> bool:
        return any(p == name for p, _ in self.passes)

    def option(self, key: str) -> str | None:
        for _, opts in self.passes:
            if key in opts:
                return opts[key]
        return None


_PASS = re.compile(r"""^--?([\w.-]+)(?:=(["']?)(.*?)\2)?$""")
_RUN_FLAGS = {"split-input-file", "verify-diagnostics", "allow-unregistered-dialect"}


def parse_run(text: str) -> RunLine:
    """The first RUN line of a test file."""
    line = next(ln for ln in text.splitlines() if "RUN:" in ln)
    command = line.split("RUN:", 1)[1]
    opt_part = command.split("|")[0]
    passes: list[tuple[str, dict[str, str]]] = []
    verify = False
    for word in re.findall(r"""(?:[^\s"']|"[^"]*"|'[^']*')+""", opt_part):
        m = _PASS.match(word)
        if not m:
            continue
        name, _, opts = m.group(1), m.group(2), m.group(3)
        if name == "verify-diagnostics":
            verify = True
        if name in _RUN_FLAGS:
            continue
        options = dict(kv.split("=", 1) for kv in (opts or "").split() if "=" in kv)
        passes.append((name, options))
    return RunLine(tuple(passes), verify, "FileCheck" in command)


_NESTED: dict[str, bool] = {}


def shardy_pipeline(run: RunLine) -> str:
    """The RUN line's passes as a PassManager pipeline (func-level passes nested)."""
    _, _, passmanager = H._jax_mlir()
    parts = []
    for name, opts in run.passes:
        text = name + ("{" + " ".join(f"{k}={v}" for k, v in opts.items()) + "}" if opts else "")
        if name not in _NESTED:
            with H.ir_context():
                try:
                    passmanager.PassManager.parse(f"builtin.module({text})")
                    _NESTED[name] = False
                except Exception as e:  # noqa: BLE001 - jaxlib says how to nest
                    _NESTED[name] = "restricted to 'func.func'" in str(e)
        parts.append(f"func.func({text})" if _NESTED[name] else text)
    return ",".join(parts)


@dataclass(frozen=True)
class ShardcRun:
    """How shardc runs a file's cases: propagation with `options` (its whole pipeline), or the
    passes of `spec` alone (`--pass-pipeline`: a file that runs one Shardy pass alone), or its
    rules."""

    rules: bool
    options: PropagationOptions | None
    conservative: bool = False
    spec: str | None = None


def shardc_run(run: RunLine) -> ShardcRun:
    """shardc's closest equivalent of the RUN line."""
    conservative = run.option("conservative-propagation") == "true"
    if run.has("sdy-populate-op-sharding-rules"):
        return ShardcRun(True, None, conservative)
    strategy = run.option("propagation-strategy") or "aggressive"
    if run.has("sdy-propagation-pipeline"):
        dedup = run.option("dedup-functions-fully") == "true"
        return ShardcRun(
            False, PropagationOptions(conservative=conservative, dedup_functions_fully=dedup)
        )
    # one propagation pass alone, as the file runs it (an input in Shardy's imported form has
    # its data-flow edges absorbed first, which is how shardc reads them)
    if run.has("sdy-user-priority-propagate"):
        name = "user-priority-propagate"
    elif run.has("sdy-op-priority-propagate"):
        name = "op-priority-propagate"
    elif run.has("sdy-basic-propagate"):
        name, strategy = "basic-propagate", "basic"
    else:
        name = "aggressive-propagate"
    conservative_text = "true" if conservative else "false"
    spec = (
        f"absorb-data-flow-edges,import-sharding-groups,{name}{{strategy={strategy},"
        f"keep_open=true,conservative={conservative_text}}},sink-func-data-flow-edges"
    )
    return ShardcRun(False, PropagationOptions(keep_open=True), conservative, spec)


# ---------------------------------------------------------------------------------------------
# Running one side


@dataclass
class Output:
    """One run of a case: the printed module (None when the run failed) and the diagnostics."""

    text: str | None
    diagnostics: list[tuple[str, str]] = field(default_factory=list)  # (severity, message)
    error: str = ""


def run_jaxlib(chunk: str, pipeline: str) -> Output:
    """`chunk` through jaxlib's Shardy, its diagnostics collected."""
    _, ir, passmanager = H._jax_mlir()
    ctx = H.ir_context()
    diags: list[tuple[str, str]] = []

    def handler(d: Any) -> bool:
        diags.append((str(d.severity).rsplit(".", 1)[-1].lower(), str(d.message)))
        return True

    attached = ctx.attach_diagnostic_handler(handler)
    try:
        with ctx, ir.Location.unknown():
            try:
                module = ir.Module.parse(chunk)
            except Exception as e:  # noqa: BLE001 - newer syntax than this jaxlib reads
                return Output(None, diags, f"jaxlib cannot parse it: {_first_line(str(e))}")
            try:
                passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
            except Exception as e:  # noqa: BLE001 - a pass failed (diagnostics say why)
                return Output(None, diags, _first_line(str(e)))
            return Output(str(module), diags)
    finally:
        attached.detach()


def run_shardc(chunk: str, how: ShardcRun, check_replication: bool = True) -> Output:
    """`chunk` through shardc's pipeline with `how.options`, or through the passes of
    `how.spec` alone (as `shardc opt --pass-pipeline` runs them)."""
    from shardc.api.propagate import propagate_text
    from shardc.backend.exporter import export_text
    from shardc.backend.importer import import_text
    from shardc.passes.pipeline import parse_pipeline, run_passes
    from shardc.passes.propagation.report import PropagationReport

    try:
        if how.spec is not None:
            module = import_text(chunk, "case")
            ctx = run_passes(module, parse_pipeline(how.spec))
            spec_report = ctx.result(PropagationReport)
            warnings = spec_report.warnings if spec_report is not None else []
            return Output(export_text(module, "pretty"), [("warning", w) for w in warnings])
        out, report = propagate_text(
            chunk, options=how.options, source_name="case", check_replication=check_replication
        )
    except ShardcError as e:
        return Output(None, [("error", e.first_line())], e.first_line())
    return Output(out, [("warning", w) for w in report.warnings])


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " ".join(lines[:3])[:300]


# ---------------------------------------------------------------------------------------------
# Rules files (sdy-populate-op-sharding-rules)


def _strip_tags(module: Any) -> None:
    for op in H._walk(module.operation):
        if H.TAG in op.attributes:
            del op.attributes[H.TAG]


def jaxlib_rules(tagged: str, pipeline: str) -> tuple[dict[str, str], str]:
    """Shardy's rule of every tagged op (tag -> rule text), and the untagged output."""
    _, ir, passmanager = H._jax_mlir()
    with H.ir_context(), ir.Location.unknown():
        module = ir.Module.parse(tagged)
        passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
        rules = {}
        for op in H._walk(module.operation):
            if H.TAG in op.attributes and "sdy.sharding_rule" in op.attributes:
                tag = ir.StringAttr(op.attributes[H.TAG]).value
                rules[tag] = str(op.attributes["sdy.sharding_rule"])
        _strip_tags(module)
        return rules, str(module)


def shardc_rules(tagged: str, conservative: bool) -> tuple[dict[str, str], str]:
    """shardc's rule of every tagged op (`shardc rules`), and the input module with those rules
    written on its ops (for FileCheck)."""
    from shardc.backend.importer import import_text
    from shardc.dialect.rules.model import print_rule
    from shardc.dialect.rules.registry import rule_for

    _, ir, _ = H._jax_mlir()
    rules: dict[str, str] = {}
    for op in import_text(tagged, "case").op.walk():
        tag = op.attributes.get(H.TAG)
        if tag is None:
            continue
        rule = rule_for(op, conservative=conservative)
        if rule is not None:
            rules[str(tag).strip('"')] = print_rule(rule)
    with H.ir_context(), ir.Location.unknown():
        module = ir.Module.parse(tagged)
        for op in H._walk(module.operation):
            if H.TAG in op.attributes:
                text = rules.get(ir.StringAttr(op.attributes[H.TAG]).value)
                if text is not None:
                    op.attributes["sdy.sharding_rule"] = ir.Attribute.parse(text)
                    rules[ir.StringAttr(op.attributes[H.TAG]).value] = str(
                        op.attributes["sdy.sharding_rule"]
                    )
        _strip_tags(module)
        return rules, str(module)


# ---------------------------------------------------------------------------------------------
# FileCheck and diagnostics


# LLVM's FileCheck binary (--filecheck PATH); None: the python `filecheck` package, in-process
FILECHECK: list[str | None] = [None]


def filecheck(check_text: str, output: str) -> bool:
    """The CHECK lines of `check_text` against `output`."""
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    with tempfile.TemporaryDirectory() as tmp:
        check = os.path.join(tmp, "check.mlir")
        inp = os.path.join(tmp, "input.mlir")
        with open(check, "w") as f:
            f.write(check_text)
        with open(inp, "w") as f:
            f.write(output)
        if FILECHECK[0] is not None:
            proc = subprocess.run(
                [FILECHECK[0], check, "--input-file", inp], capture_output=True, check=False
            )
            return proc.returncode == 0
        opts = parse_argv_options(["filecheck", check, "--input-file", inp, "--dump-input", "never"])
        sink = io.StringIO()
        with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            try:
                return Matcher.from_opts(opts).run() == 0
            except SystemExit as e:
                return e.code == 0


_EXPECTED = re.compile(r"expected-(warning|error|remark|note)(?:@\S+)?\s*\{\{(.*?)\}\}")
# printed once per process by Shardy's registry: a later case in this process does not see it
_ONCE_PER_PROCESS = "is unknown to SDY sharding rule registry"


def diagnostics_ok(chunk: str, out: Output) -> bool:
    """`-verify-diagnostics`: every expected diagnostic was emitted and nothing else was."""
    expected = _EXPECTED.findall(chunk)
    got = list(out.diagnostics)
    for severity, message in expected:
        hit = next((g for g in got if g[0] == severity and message in g[1]), None)
        if hit is not None:
            got.remove(hit)
        elif _ONCE_PER_PROCESS not in message:
            return False
    return not any(sev in ("warning", "error") for sev, _ in got)


# ---------------------------------------------------------------------------------------------
# Comparing shardings


@dataclass
class Verdict:
    substance: list[str] = field(default_factory=list)
    open_closed: list[str] = field(default_factory=list)


_AXIS_SIZE = re.compile(r'"([^"]+)"\s*=\s*(\d+)')


def _substance(c: H.Canon, keep_open: bool = False) -> H.Canon:
    """`c` without what does not change the layout: size-1 axes (Shardy's pipeline removes
    them; a pass run alone keeps them) and, unless `keep_open`, the open marks."""
    one = {name for name, size in _AXIS_SIZE.findall(c.mesh or "") if size == "1"}
    drop = one if keep_open else one | {"?"}
    dims = tuple(tuple(a for a in d if a.split(":")[0].strip('"') not in drop) for d in c.dims)
    unreduced = tuple(a for a in c.unreduced if a.split(":")[0].strip('"') not in one)
    if not any(a != "?" for d in dims for a in d) and not unreduced:
        return H.Canon(None, dims)
    return H.Canon(c.mesh, dims, unreduced)


def compare(shardy: H.ModuleShardings, mine: H.ModuleShardings) -> Verdict:
    """Every value of Shardy's output against shardc's (several copies: shardc's must be among
    Shardy's). A func only one side has (a callee copy named differently) is compared through
    its tagged ops."""
    v = Verdict()
    funcs = {k.split(":")[0] for k in mine.values if k.startswith("@")}
    entry = _entry_func({k.split(":")[0] for k in shardy.values if k.startswith("@")})
    for key, infos in shardy.values.items():
        func, _, what = key.partition(":")
        if (
            what.startswith("result")
            and func != entry
            and all(i.sharding == _absent(i.sharding) for i in infos)
        ):
            continue  # a result of a func other than main: Shardy annotates main's only
        if key not in mine.values:
            if key.startswith("@") and key.split(":")[0] not in funcs:
                continue
            v.substance.append(f"{infos[0].where}: missing in shardc's output")
            continue
        if key in mine.unannotated and key not in shardy.unannotated:
            continue
        wanted = {i.sharding for i in infos}
        got = {i.sharding for i in mine.values[key]}
        where = mine.values[key][0].where
        both = f"{where}: shardy {_show(wanted)} vs shardc {_show(got)}"
        if not {_substance(g) for g in got} <= {_substance(w) for w in wanted}:
            v.substance.append(both)
        elif not {_substance(g, True) for g in got} <= {_substance(w, True) for w in wanted}:
            v.open_closed.append(both)
    return v


def _entry_func(funcs: set[str]) -> str | None:
    """The func whose results Shardy's propagation annotates: @main, or the only func."""
    if "@main" in funcs:
        return "@main"
    return next(iter(funcs)) if len(funcs) == 1 else None


def _absent(c: H.Canon) -> H.Canon:
    """What an absent sharding of `c`'s rank reads as (every dim open, no axes)."""
    return H.Canon(None, tuple(("?",) for _ in c.dims))


def _show(shardings: set[H.Canon]) -> str:
    return " | ".join(sorted(str(s) for s in shardings))


# ---------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    file: str
    index: int
    name: str
    jaxlib_ok: bool
    shardc_ok: bool
    category: str = ""  # one of CATEGORIES, or "" when shardc passes or jaxlib fails
    details: list[str] = field(default_factory=list)
    # a substance difference that goes once Shardy also runs its import steps (the file runs
    # a propagation pass alone: docs/shardy_differences.md)
    pass_alone: bool = False


def _case_name(chunk: str, index: int) -> str:
    m = re.search(r"func\.func\s+(?:private\s+)?@([\w$.-]+)", chunk)
    return m.group(1) if m else f"case {index}"


def propagation_cases(path: str, text: str, run: RunLine) -> Iterator[Case]:
    pipeline = shardy_pipeline(run)
    how = shardc_run(run)
    for index, chunk in enumerate(split_chunks(text)):
        name = _case_name(chunk, index)
        jax_out = run_jaxlib(chunk, pipeline)
        jaxlib_ok = _passes(chunk, run, jax_out)
        mine = run_shardc(chunk, how)
        shardc_ok = mine.text is not None and _passes(chunk, run, mine)
        case = Case(path, index, name, jaxlib_ok, shardc_ok)
        if jax_out.text is None and not jaxlib_ok:
            case.details.append(f"jaxlib: {jax_out.error}")
            yield case
            continue
        if mine.text is None:
            case.category = "" if shardc_ok else "rejected"
            case.details.append(f"shardc: {mine.error}")
            if "turn the check off" in mine.error:  # the replication check: without it?
                unchecked = run_shardc(chunk, how, check_replication=False)
                if unchecked.text is not None and _passes(chunk, run, unchecked):
                    case.details.insert(0, "passes FileCheck with --no-check-replication")
            yield case
            continue
        try:
            tagged = H.tag_module(chunk)
            shardy_tagged = run_jaxlib(tagged, pipeline + SINK_EDGES)
            mine_tagged = run_shardc(tagged, how)
            verdict = Verdict()
            if shardy_tagged.text is not None and mine_tagged.text is not None:
                # open dims are compared where the run leaves them open (a pass run alone);
                # after the whole pipeline an absent sharding is a replicated one
                keep_open = how.options is not None and how.options.keep_open
                verdict = compare(
                    H.read_shardings(shardy_tagged.text, keep_open=keep_open),
                    H.read_shardings(mine_tagged.text, keep_open=keep_open),
                )
            elif mine_tagged.text is None:
                verdict.substance.append(f"shardc (tagged): {mine_tagged.error}")
        except Exception as e:  # noqa: BLE001 - shardc's output does not parse: substance
            verdict = Verdict([f"output does not parse with jaxlib: {_first_line(str(e))}"])
        differs = verdict.substance or verdict.open_closed
        if differs and not run.has("sdy-propagation-pipeline") and _has_entry(chunk):
            # a pass run alone lacks the import steps shardc always runs (data-flow edges, call
            # inlining, constraints applied): does Shardy agree once it runs them too?
            with_imports = _with_import_steps(run, chunk)
            try:
                again = run_jaxlib(tagged, with_imports + SINK_EDGES)
                if again.text is not None:
                    second = compare(
                        H.read_shardings(again.text, keep_open=True),
                        H.read_shardings(mine_tagged.text or "", keep_open=True),
                    )
                    case.pass_alone = not second.substance and not second.open_closed
            except Exception:  # noqa: BLE001 - Shardy refuses the steps on this input
                pass
        if not shardc_ok:
            if verdict.substance:
                case.category = "substance"
            elif verdict.open_closed:
                case.category = "open-closed"
            else:
                case.category = "form"
        elif verdict.substance:  # FileCheck passed but a value differs: still substance
            case.category = "substance"
        case.details = verdict.substance or verdict.open_closed
        yield case


# Shardy's import steps that shardc's pipeline always runs before propagating (a propagation
# pass run alone in a test file has none of them)
IMPORT_STEPS = (
    "sdy-add-data-flow-edges",
    "sdy-flatten-call-graph",
    "sdy-import-func-calls",
    "sdy-apply-sharding-constraints",
    "sdy-sharding-group-import",
)


def _with_import_steps(run: RunLine, chunk: str) -> str:
    """The file's passes after Shardy's import steps (those an input already in the imported
    form has had left out), named computations outlined after."""
    steps = list(IMPORT_STEPS)
    if "sdy.data_flow_edge" in chunk:
        steps.remove("sdy-add-data-flow-edges")
    if "sdy.func_data_flow_edge" in chunk:
        steps.remove("sdy-flatten-call-graph")
        steps.remove("sdy-import-func-calls")
    passes = [(n, o) for n, o in run.passes if n not in _EDGE_PASSES]
    core = shardy_pipeline(RunLine(tuple(passes), False, True))
    return ",".join(
        [*steps, core, "func.func(sdy-sink-data-flow-edges)", "sdy-export-named-computations"]
    )


_EDGE_PASSES = {"sdy-add-data-flow-edges", "sdy-sink-data-flow-edges"}


def _has_entry(chunk: str) -> bool:
    """Whether Shardy's import steps find the entry func they look up (`@main` or the only
    func): without one, jaxlib aborts the process."""
    funcs = re.findall(r"func\.func\s+(?:private\s+)?@([\w$.-]+)", chunk)
    return "main" in funcs or len(funcs) == 1


def _passes(chunk: str, run: RunLine, out: Output) -> bool:
    if run.verify_diagnostics and not diagnostics_ok(chunk, out):
        return False
    if not run.filecheck:
        return out.text is not None
    if out.text is None:
        return False
    text = out.text
    if out.diagnostics:  # `2>&1`: diagnostics come first, as sdy_opt prints them
        text = "".join(f"case: {s}: {m}\n" for s, m in out.diagnostics) + text
    return filecheck(chunk, text)


def rule_cases(path: str, text: str, run: RunLine) -> Iterator[Case]:
    """One case per op with a rule on either side; FileCheck per chunk on both modules."""
    pipeline = shardy_pipeline(run)
    how = shardc_run(run)
    for index, chunk in enumerate(split_chunks(text)):
        tagged = H.tag_module(chunk)
        theirs, their_text = jaxlib_rules(tagged, pipeline)
        mine, my_text = shardc_rules(tagged, how.conservative)
        jaxlib_ok = _passes(chunk, run, run_jaxlib(chunk, pipeline))
        shardc_ok = not run.filecheck or filecheck(chunk, my_text)
        names = _op_names(tagged)
        for tag in sorted(set(theirs) | set(mine), key=lambda t: int(t[1:])):
            same = theirs.get(tag) == mine.get(tag)
            case = Case(path, index, f"{tag} {names.get(tag, '?')}", jaxlib_ok, same and shardc_ok)
            if not same:
                case.category = "substance"
                case.details.append(
                    f"shardy {theirs.get(tag, 'no rule')} vs shardc {mine.get(tag, 'no rule')}"
                )
            elif not shardc_ok:
                case.category = "form"
            yield case


def _op_names(tagged: str) -> dict[str, str]:
    """tag -> op name, read by jaxlib."""
    _, ir, _ = H._jax_mlir()
    with H.ir_context(), ir.Location.unknown():
        module = ir.Module.parse(tagged)
        return {
            ir.StringAttr(op.attributes[H.TAG]).value: op.name
            for op in H._walk(module.operation)
            if H.TAG in op.attributes
        }


def run_file(path: str) -> list[Case]:
    with open(path) as f:
        text = f.read()
    run = parse_run(text)
    name = os.path.basename(path)
    if run.has("sdy-populate-op-sharding-rules"):
        return list(rule_cases(name, text, run))
    return list(propagation_cases(name, text, run))


# ---------------------------------------------------------------------------------------------
# Report


def table(cases: list[Case]) -> str:
    files: dict[str, list[Case]] = {}
    for c in cases:
        files.setdefault(c.file, []).append(c)
    head = ("file", "cases", "jaxlib", "shardc", *CATEGORIES)
    rows = [head]
    totals = [0] * (len(head) - 1)
    for name, cs in [*files.items(), ("total", cases)]:
        passed = [c for c in cs if c.jaxlib_ok]
        counts = [
            len(cs),
            len(passed),
            sum(c.shardc_ok for c in passed),
            *(sum(c.category == cat and not c.shardc_ok for c in passed) for cat in CATEGORIES),
        ]
        if name == "total":
            counts = totals
        else:
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
        rows.append((name.removesuffix(".mlir"), *map(str, counts)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for j, r in enumerate(rows):
        cells = [r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True))]
        lines.append("  ".join(cells))
        if j == 0 or j == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _notes(c: Case) -> str:
    note = "  [pass alone: agrees once Shardy runs its import steps]" if c.pass_alone else ""
    return note + ("  [FileCheck passes]" if c.shardc_ok else "")


def test_files(checkout: str) -> list[str]:
    folder = os.path.join(checkout, TEST_DIR)
    if not os.path.isdir(folder):
        folder = checkout  # the test folder itself
    files = sorted(f for f in os.listdir(folder) if f.endswith(".mlir"))
    if not files:
        raise SystemExit(f"error: no .mlir tests under {folder}")
    return [os.path.join(folder, f) for f in files]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", help="a checkout of openxla/shardy (or its propagation tests)")
    parser.add_argument("--only", default="", help="comma-separated file names (without .mlir)")
    parser.add_argument("--list", action="store_true", help="print every case's verdict")
    parser.add_argument("--verbose", action="store_true", help="every difference of each case")
    parser.add_argument(
        "--filecheck",
        default=None,
        metavar="PATH",
        help="LLVM's FileCheck binary (default: the python filecheck package, whose CHECK-NOT "
        "also looks inside the next match's line: a few cases jaxlib passes under LLVM's "
        "FileCheck fail under it)",
    )
    args = parser.parse_args()
    FILECHECK[0] = args.filecheck
    only = {n.removesuffix(".mlir") for n in args.only.split(",") if n}
    cases: list[Case] = []
    for path in test_files(args.checkout):
        if only and os.path.basename(path).removesuffix(".mlir") not in only:
            continue
        file_cases = run_file(path)
        cases += file_cases
        if args.list:
            for c in file_cases:
                verdict = "pass" if c.shardc_ok else (c.category or "-")
                if not c.jaxlib_ok:
                    verdict = "jaxlib fails"
                print(f"{c.file}#{c.index} {c.name}: {verdict}")
    print(table(cases))
    alone = [c for c in cases if c.jaxlib_ok and c.pass_alone]
    if alone:
        print(
            f"\n{len(alone)} of the cases that differ (marked below) agree once Shardy runs its "
            "import steps too: their files run a propagation pass alone, and shardc's passes "
            "see through calls and manual computations even alone (docs/shardy_differences.md)"
        )
    for category, title, lines in (
        ("substance", "differ in substance", 2),
        ("open-closed", "differ only in open/closed dims", 1),
    ):
        listed = [c for c in cases if c.jaxlib_ok and c.category == category]
        if listed:
            print(f"\ncases jaxlib passes that {title} ({len(listed)}):")
            for c in listed:
                print(f"  {c.file}#{c.index} {c.name}{_notes(c)}")
                for d in c.details[: None if args.verbose else lines]:
                    print(f"      {d}")
    rejected = [c for c in cases if c.jaxlib_ok and c.category == "rejected"]
    if rejected:
        print(f"\ncases jaxlib passes that shardc rejects ({len(rejected)}):")
        for c in rejected:
            print(f"  {c.file}#{c.index} {c.name}: {c.details[0] if c.details else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
