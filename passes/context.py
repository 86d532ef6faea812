"""The pass contract: what a pass is, and what the passes of one pipeline run share.

As MLIR's pass manager keeps them apart:

- a pass (`Pass`) is a small frozen dataclass with a `name` (what `--pass-pipeline`,
  `--dump-after` and `--disable-pass` name), its options as fields, `run(module, ctx)`, and
  `preserves`: the analyses still valid after it ran (`ALL` for a pass that only checks or
  reads). A pass that changed nothing this time says so with `ctx.preserve(...)`; one that
  made a new op list anyway hands it on with `ctx.provide(OpList, ops)`.
- an analysis (`Analysis`) is a fact about the module computed on demand
  (`ctx.analysis(OpList, module)`) and cached until a pass that does not preserve it has run.
- a result is what a pass hands on to later passes and to the caller, one object per type
  (`ctx.put(report)`, then `ctx.result(PropagationReport)`).
- services are what the caller gives the passes: `caller` (fix texts name its flag or keyword)
  and `oracle` (what XLA's own propagation derives: the `pin` pass asks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from shardc.dialect.ir import Module, Operation

T = TypeVar("T")


@dataclass(frozen=True)
class Caller:
    """Who runs the pipeline: the command line (`cli=True`) or a Python function by name."""

    cli: bool = False
    function: str = "shardc.propagate"

    def switch(self, flag: str, keyword: str) -> str:
        """How this caller turns something off: `--flag` on the CLI, `fn(..., keyword)` else."""
        return flag if self.cli else f"{self.function}(..., {keyword})"


CLI = Caller(cli=True)


class Analysis(Generic[T]):
    """A fact computed from the module (`compute`), cached by the context until a pass that
    does not preserve it runs. Subclasses name themselves by their class."""

    @classmethod
    def compute(cls, module: Module, ctx: PassContext) -> T:
        raise NotImplementedError


class OpList(Analysis[list[Operation]]):
    """Every op of the module in pre-order (`module.walk()`), listed once for the passes that
    only read the IR (a walk of a 10k-op module costs as much as a small check)."""

    @classmethod
    def compute(cls, module: Module, ctx: PassContext) -> list[Operation]:
        return list(module.walk())


class OpNames(Analysis[frozenset[str]]):
    """The names of the module's ops (is there any `func.call`? any manual computation?)."""

    @classmethod
    def compute(cls, module: Module, ctx: PassContext) -> frozenset[str]:
        return frozenset(op.name for op in ctx.analysis(OpList, module))


# what a pass that adds, removes and moves no op keeps (it changes shardings or attributes only)
SAME_OPS: frozenset[type[Analysis[Any]]] = frozenset({OpList, OpNames})


class _All(frozenset):  # type: ignore[type-arg]
    """Every analysis (a pass that leaves the IR as it is)."""

    def __contains__(self, item: object) -> bool:
        return True


ALL: frozenset[type[Analysis[Any]]] = _All()
NONE: frozenset[type[Analysis[Any]]] = frozenset()


@dataclass
class PassContext:
    """Shared by the passes of one run; the run returns it (results, timings)."""

    caller: Caller = field(default_factory=Caller)
    oracle: Any = None  # (passes.pin.XlaOracle) what XLA's own propagation derives
    timings: list[tuple[str, float]] = field(default_factory=list)  # (pass, wall seconds)
    _analyses: dict[type, Any] = field(default_factory=dict)
    _results: dict[type, Any] = field(default_factory=dict)
    _kept: frozenset[type] | None = None  # what the running pass said it kept this time
    _provided: dict[type, Any] = field(default_factory=dict)  # what it handed on

    # analyses -------------------------------------------------------------------------------
    def analysis(self, kind: type[Analysis[T]], module: Module) -> T:
        """The analysis `kind` of `module`, computed once until invalidated."""
        got = self._analyses.get(kind)
        if got is None:
            got = self._analyses[kind] = kind.compute(module, self)
        return got  # type: ignore[no-any-return]

    def has_op(self, module: Module, name: str) -> bool:
        """Whether any op of `module` is named `name`."""
        return name in self.analysis(OpNames, module)

    def preserve(self, *kinds: type[Analysis[Any]]) -> None:
        """Say that the running pass kept `kinds` valid this time (none: every analysis; it
        changed nothing), whatever its `preserves` says."""
        self._kept = ALL if not kinds else frozenset(kinds) | (self._kept or NONE)

    def provide(self, kind: type[Analysis[T]], value: T) -> None:
        """Hand on the analysis `kind` as the running pass left it (it computed it anyway):
        the next passes read it rather than compute it again."""
        self._provided[kind] = value

    def invalidate(self, preserved: frozenset[type]) -> None:
        """After a pass ran: drop every analysis it did not preserve (`preserved`, or what it
        said with `preserve`), then take what it provided."""
        kept, self._kept = self._kept, None
        if kept is not None and preserved is not ALL:
            preserved = ALL if kept is ALL else preserved | kept
        if preserved is not ALL:
            self._analyses = {k: v for k, v in self._analyses.items() if k in preserved}
        if self._provided:
            self._analyses.update(self._provided)
            self._provided = {}

    # results ----------------------------------------------------------------------------------
    def put(self, result: object) -> None:
        """Hand on `result` (one per type: a later one of the same type replaces it)."""
        self._results[type(result)] = result

    def result(self, kind: type[T]) -> T | None:
        """The result of type `kind` a pass (or the caller) put, or None."""
        return self._results.get(kind)  # type: ignore[no-any-return]

    def require(self, kind: type[T]) -> T:
        """The result of type `kind`, which an earlier pass must have put."""
        got = self._results.get(kind)
        if got is None:
            raise LookupError(f"no {kind.__name__} in this pipeline run: a pass that makes it must run first")
        return got  # type: ignore[no-any-return]


@dataclass
class ImportNotes:
    """What Shardy's import steps have to say (a sharding group they could not honour, ...): the
    propagate pass's report carries them."""

    warnings: list[str] = field(default_factory=list)

    @staticmethod
    def of(ctx: PassContext) -> ImportNotes:
        """The run's notes, made on first use."""
        got = ctx.result(ImportNotes)
        if got is None:
            got = ImportNotes()
            ctx.put(got)
        return got


class Pass(Protocol):
    """A pass: `name` (as pipelines name it), `preserves` (the analyses still valid after it:
    `ALL` for a pass that changes nothing, `SAME_OPS` for one that only rewrites shardings or
    attributes), and `run`."""

    name: ClassVar[str]
    preserves: ClassVar[frozenset[type]]

    def run(self, module: Module, ctx: PassContext) -> None: ...
