"""The lit golden suite (tests/lit) in one Python process.

lit starts a Python with jax for every RUN line (about a second each, most of the suite's time);
this runner reads the same files and runs their RUN lines with `shardc` and `filecheck` called
in-process. What it reads from lit: the suite's lit.cfg.py (suffixes, excludes, environment,
substitutions), lit's shell parser for the RUN lines, and lit's rules for what a RUN line says
(`\\` continuations, `%s %S %p %t %T %%`, `not`, pipes with pipefail, redirections in order).
What does not run in-process: every command but `shardc` and `filecheck` (awk, printf, test, ...),
and `not shardc ...`: an error case checks the real executable's exit status and stderr.
The rule registries users can change from Python (a `shardc compile` script may) are restored
after every file. Anything else lit could say (another keyword, an unknown substitution, a
shell construct this runner does not implement) is an error, never skipped.

    python -m tests.lit_runner [FILE_OR_DIR ...]      # by hand; `lit tests/lit` works as ever
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from filecheck.finput import FInput
from filecheck.matcher import Matcher
from filecheck.options import parse_argv_options
from filecheck.parser import Parser as CheckParser
from lit.ShCommands import GlobItem, Pipeline, Seq
from lit.ShUtil import ShParser

from shardc.dialect.rules import custom_call, registry
from shardc.tools.cli import main as shardc_main

LIT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lit")

# lit's keywords besides RUN: a file using one needs this runner taught what it means
_KEYWORD = re.compile(
    r"(?<![\w-])(RUN|XFAIL|XPASS|REQUIRES|UNSUPPORTED|ALLOW_RETRIES|DEFINE|REDEFINE):|END\."
)
_SUBSTITUTION = re.compile(r"%(%|s|S|p|t|T|\{pathsep\})")
_UNKNOWN_SUBSTITUTION = re.compile(r"%[A-Za-z/{(]")
# Python's warning filters in a fresh interpreter (pytest's are not what `shardc` runs with)
_DEFAULT_FILTERS: tuple[tuple[Any, type[Warning], str | None], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


class LitError(Exception):
    """A RUN line or lit file this runner cannot run as lit would."""


@dataclass
class Config:
    """What lit.cfg.py sets that running a test reads."""

    suffixes: list[str]
    excludes: list[str]
    environment: dict[str, str]
    substitutions: list[tuple[str, str]]


def load_config(lit_dir: str = LIT_DIR) -> Config:
    """Run the suite's lit.cfg.py against a stand-in for lit's config object."""
    config = SimpleNamespace(
        suffixes=[], excludes=[], environment={}, substitutions=[], test_format=None,
        name="", test_source_root=lit_dir, test_exec_root=None,
    )
    path = os.path.join(lit_dir, "lit.cfg.py")
    with open(path, encoding="utf-8") as f:
        code = compile(f.read(), path, "exec")
    exec(code, {"config": config, "lit_config": None, "__file__": path})
    return Config(
        list(config.suffixes), list(config.excludes), dict(config.environment),
        list(config.substitutions),
    )


def discover(paths: list[str], config: Config, lit_dir: str = LIT_DIR) -> list[str]:
    """The test files under `paths` (files or folders), as lit's discovery finds them."""
    found: list[str] = []
    for path in paths:
        path = os.path.abspath(path)
        if os.path.isfile(path):
            found.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(
                d for d in dirs
                if d not in ("Output", ".svn", ".git") and d not in config.excludes
                and not d.startswith(".")
            )
            for name in sorted(files):
                if name.startswith(".") or name in config.excludes:
                    continue
                if os.path.splitext(name)[1] in config.suffixes:
                    found.append(os.path.join(root, name))
    return found


def run_lines(path: str) -> list[str]:
    """The RUN commands of a lit file, continuation lines (`\\` at the end) joined."""
    commands: list[str] = []
    pending: str | None = None
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = _KEYWORD.search(line)
            if m is None:
                continue
            if m.group(1) != "RUN":
                raise LitError(f"{path}:{lineno}: lit keyword {m.group(0)!r} is not implemented")
            text = line[m.end():].rstrip()
            if pending is not None:
                text = pending + " " + text.lstrip()
            if text.endswith("\\"):
                pending = text[:-1].rstrip()
                continue
            pending = None
            commands.append(text.strip())
    if pending is not None:
        raise LitError(f"{path}: the last RUN line ends with a continuation")
    if not commands:
        raise LitError(f"{path}: no RUN line")
    return commands


def substitute(command: str, path: str, tmp_base: str, config: Config) -> str:
    """`command` with lit's substitutions: the suite's own first (a regular expression and its
    replacement text, as lit applies them), then lit's defaults."""
    for pattern, replacement in config.substitutions:
        command = re.sub(pattern, lambda _, text=replacement: text, command)
    for m in _UNKNOWN_SUBSTITUTION.finditer(_SUBSTITUTION.sub("", command)):
        raise LitError(f"unknown substitution {m.group(0)!r} in: {command}")
    values = {
        "%": "%",
        "s": path,
        "S": os.path.dirname(path),
        "p": os.path.dirname(path),
        "t": tmp_base,
        "T": os.path.dirname(tmp_base),
        "{pathsep}": os.pathsep,
    }
    return _SUBSTITUTION.sub(lambda m: values[m.group(1)], command)


# ---------------------------------------------------------------------------------------------
# Running a pipeline


class _Target:
    """Where a file descriptor of a command goes: a buffer the runner keeps, or a file."""

    def __init__(self, kind: str, path: str | None = None, mode: str = "wb"):
        self.kind = kind  # "pipe" (the next command's stdin), "stderr" (shown), "file"
        self.path = path
        self.mode = mode
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        if self.kind == "file":
            assert self.path is not None
            if self.path == os.devnull:
                return
            with open(self.path, "ab") as f:
                f.write(data)
        else:
            self.data += data

    def open(self) -> None:
        """Truncate a file target (`>`) before the command runs, as a shell does."""
        if self.kind == "file" and self.mode == "wb" and self.path != os.devnull:
            assert self.path is not None
            open(self.path, "wb").close()


@dataclass
class _Stage:
    argv: list[str]
    negated: int
    stdin: bytes | str  # the bytes, or the path of a `<` file
    out: _Target
    err: _Target
    pipe: _Target  # what the next command reads (fd 1's target before any redirection)


@dataclass
class Result:
    """A file's outcome: passed, and what ran (lit's transcript, for a failure's message)."""

    path: str
    passed: bool = True
    transcript: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Runner:
    """Runs lit files: any file on any thread, but one that runs `shardc` in-process only on
    the main thread (it swaps the process's stdin, stdout and stderr meanwhile)."""

    def __init__(self, config: Config | None = None, lit_dir: str = LIT_DIR):
        self.config = config or load_config(lit_dir)
        scripts = sysconfig.get_path("scripts")
        path = self.config.environment.get("PATH", os.environ.get("PATH", ""))
        # the executables of the interpreter running the tests come first (its `shardc`)
        self.env = {**self.config.environment, "PATH": os.pathsep.join([scripts, path])}
        self.shardc = shutil.which("shardc", path=self.env["PATH"])
        self.lock = threading.Lock()

    def needs_main_thread(self, path: str) -> bool:
        """Whether a file runs `shardc` in-process (else it may run on any thread)."""
        for command in run_lines(path):
            tree = ShParser(command, win32Escapes=False, pipefail=True).parse()
            for cmd in _commands(tree):
                argv = [a for a in cmd.args if isinstance(a, str)]
                if argv and argv[0] == "shardc":
                    return True
        return False

    def run_file(self, path: str) -> Result:
        """Run every RUN line of `path` in order, stopping at the first that fails."""
        result = Result(path)
        start = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory(prefix="shardc-lit-") as tmp:
                tmp_base = os.path.join(tmp, os.path.basename(path) + ".tmp")
                for raw in run_lines(path):
                    command = substitute(raw, path, tmp_base, self.config)
                    result.transcript.append(f"$ {command}")
                    tree = ShParser(command, win32Escapes=False, pipefail=True).parse()
                    status = self.run_tree(tree, os.path.dirname(path), result.transcript)
                    if status != 0:
                        result.transcript.append(f"# exit status {status}")
                        result.passed = False
                        break
        except LitError as e:
            result.passed = False
            result.transcript.append(f"# runner: {e}")
        result.seconds = time.perf_counter() - start
        return result

    def run_tree(self, tree: Any, cwd: str, log: list[str]) -> int:
        if isinstance(tree, Seq):
            status = self.run_tree(tree.lhs, cwd, log)
            if tree.op == "&&":
                return status if status else self.run_tree(tree.rhs, cwd, log)
            if tree.op == "||":
                return self.run_tree(tree.rhs, cwd, log) if status else 0
            if tree.op == ";":
                return self.run_tree(tree.rhs, cwd, log)
            raise LitError(f"shell operator {tree.op!r} is not implemented")
        if not isinstance(tree, Pipeline):
            raise LitError(f"shell construct {tree!r} is not implemented")
        # (lit's parser keeps its `pipefail` setting in the pipeline's `pipe_err`)
        status = self.run_pipeline(tree.commands, cwd, log, pipefail=tree.pipe_err)
        if tree.negate:
            status = 0 if status else 1
        return status

    def run_pipeline(
        self, commands: list[Any], cwd: str, log: list[str], pipefail: bool = True
    ) -> int:
        """Each command in turn, its stdout the next one's stdin; the last command's exit
        status, or with `pipefail` the last non-zero one of any."""
        status = 0
        stdin: bytes = b""
        for i, cmd in enumerate(commands):
            stage = self.stage(cmd, stdin, cwd)
            code = self.run_stage(stage, cwd)
            if stage.negated % 2 and code >= 0:  # (a crash, a signal, fails even under `not`)
                code = 0 if code else 1
            name = " ".join(stage.argv[:2])
            if stage.err.kind == "stderr" and stage.err.data:
                log.append(f"# stderr of {name}:\n{_shown(stage.err.data)}")
            if i == len(commands) - 1 and stage.pipe.data:
                log.append(f"# stdout of {name}:\n{_shown(stage.pipe.data)}")
            if code:
                log.append(f"# {name}: exit status {code}")
            if (pipefail and code) or i == len(commands) - 1 and not pipefail:
                status = code
            stdin = bytes(stage.pipe.data)
        return status

    def stage(self, cmd: Any, stdin: bytes, cwd: str) -> _Stage:
        """A command's argv (`not`s counted off) and where its descriptors go, redirections
        applied in order (`2>&1 >/dev/null`: stderr to the pipe, stdout dropped)."""
        argv: list[str] = []
        for a in cmd.args:
            if isinstance(a, GlobItem):
                argv.extend(sorted(a.resolve(cwd)))
            else:
                argv.append(a)
        negated = 0
        while argv and argv[0] == "not":
            argv.pop(0)
            negated += 1
        if not argv or argv[0] == "--crash":
            raise LitError(f"command {cmd!r} is not implemented")
        pipe = _Target("pipe")
        fds: dict[int, Any] = {0: stdin, 1: pipe, 2: _Target("stderr")}
        for op, target in cmd.redirects:
            fd = op[1] if len(op) > 1 else (0 if op[0] == "<" else 1)
            if op[0] == ">&" and len(op) > 1 and target in ("1", "2"):
                fds[fd] = fds[int(target)]
                continue
            file = target if os.path.isabs(target) else os.path.join(cwd, target)
            if target == "/dev/null":
                file = os.devnull
            if op[0] == "<" and fd == 0:
                fds[0] = file
            elif op[0] in (">", ">>") and fd in (1, 2):
                fds[fd] = _Target("file", file, "wb" if op[0] == ">" else "ab")
            else:
                raise LitError(f"redirection {op} {target} is not implemented")
        out, err = fds[1], fds[2]
        for t in {id(out): out, id(err): err}.values():
            t.open()
        return _Stage(argv, negated, fds[0], out, err, pipe)

    def run_stage(self, stage: _Stage, cwd: str) -> int:
        argv = stage.argv
        if argv[0] == "filecheck":
            return _filecheck(argv, _read(stage.stdin), stage.out, stage.err)
        if argv[0] == "shardc" and not stage.negated:
            if threading.current_thread() is not threading.main_thread():
                raise LitError("shardc runs in-process on the main thread only")
            with self.lock:
                return self.shardc_in_process(argv[1:], _read(stage.stdin), stage, cwd)
        return self.subprocess(argv, stage, cwd)

    def subprocess(self, argv: list[str], stage: _Stage, cwd: str) -> int:
        """An external command (the real `shardc` for `shardc`)."""
        exe = self.shardc if argv[0] == "shardc" else shutil.which(argv[0], path=self.env["PATH"])
        if exe is None:
            raise LitError(f"command not found: {argv[0]}")
        shared = stage.out is stage.err
        proc = subprocess.run(
            [exe, *argv[1:]],
            input=_read(stage.stdin),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if shared else subprocess.PIPE,
            cwd=cwd,
            env=self.env,
            check=False,
        )
        stage.out.write(proc.stdout)
        if not shared:
            stage.err.write(proc.stderr)
        return proc.returncode

    def shardc_in_process(self, args: list[str], stdin: bytes, stage: _Stage, cwd: str) -> int:
        """`shardc ARGS` through the CLI's `main`, with its own stdin, stdout and stderr, the
        warning filters of a fresh interpreter, and the test's folder as working directory."""
        out = io.StringIO()
        err = out if stage.err is stage.out else io.StringIO()
        sys_in = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        old_cwd = os.getcwd()
        try:
            with (
                contextlib.redirect_stdout(out),
                contextlib.redirect_stderr(err),
                _stdin(sys_in),
                warnings.catch_warnings(),
            ):
                warnings.resetwarnings()
                for action, category, module in reversed(_DEFAULT_FILTERS):
                    warnings.filterwarnings(action, category=category, module=module or "")
                warnings.showwarning = _show_warning
                os.chdir(cwd)
                try:
                    code = shardc_main(args)
                except SystemExit as e:  # argparse's --help / --version
                    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            os.chdir(old_cwd)
        stage.out.write(out.getvalue().encode())
        if err is not out:
            stage.err.write(err.getvalue().encode())
        return code


def _show_warning(message: Any, category: Any, filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _stdin(stream: io.TextIOWrapper) -> Iterator[None]:
    old = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = old


def _read(stdin: bytes | str) -> bytes:
    if isinstance(stdin, bytes):
        return stdin
    with open(stdin, "rb") as f:
        return f.read()


def _shown(data: bytes | bytearray, limit: int = 4000) -> str:
    text = bytes(data).decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more)"


def _commands(tree: Any) -> Iterator[Any]:
    if isinstance(tree, Seq):
        yield from _commands(tree.lhs)
        yield from _commands(tree.rhs)
    elif isinstance(tree, Pipeline):
        yield from tree.commands


def _filecheck(argv: list[str], stdin: bytes, out: _Target, err: _Target) -> int:
    """The `filecheck` package's matcher, in-process and without touching sys.std*: the
    input is `stdin` (or the file named by `--input-file`), messages go to `err`."""
    opts = parse_argv_options(list(argv))
    if opts.input_file == "-":
        content = stdin.decode("utf-8")
    else:
        with open(opts.input_file, encoding="utf-8") as f:
            content = f.read()
    matcher = Matcher(opts, FInput(opts.input_file, FInput.canonicalize_line_ends(content)),
                      CheckParser.from_opts(opts))
    messages = io.StringIO()
    matcher.stderr = messages
    code = matcher.run()
    err.write(messages.getvalue().encode())
    return int(code)


# ---------------------------------------------------------------------------------------------
# Process-global state a file may change


@contextlib.contextmanager
def restored_registries() -> Iterator[None]:
    """The op-rule and custom_call-rule registries as they were before (a `shardc compile`
    script may register or override rules, as users do)."""
    tables = (registry._RULES, custom_call._TARGET_RULES)
    saved = [dict(t) for t in tables]
    try:
        yield
    finally:
        for table, old in zip(tables, saved, strict=True):
            table.clear()
            table.update(old)


def main(argv: list[str] | None = None) -> int:
    """Run lit files or folders (default: the whole suite) and print lit-like results."""
    runner = Runner()
    for key, value in runner.config.environment.items():  # (before jax is imported)
        os.environ.setdefault(key, value)
    files = discover(argv or [LIT_DIR], runner.config)
    failed = 0
    start = time.perf_counter()
    for path in files:
        with restored_registries():
            result = runner.run_file(path)
        name = os.path.relpath(path, LIT_DIR)
        print(f"{'PASS' if result.passed else 'FAIL'}: {name} ({result.seconds:.2f}s)")
        if not result.passed:
            failed += 1
            print("\n".join(result.transcript))
    print(f"{len(files) - failed} passed, {failed} failed in {time.perf_counter() - start:.1f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
