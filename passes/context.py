"""What the passes of one pipeline run share: who called, what they report, cached analyses.

A pass is a small frozen dataclass with a `name` (what `--dump-after NAME` names) and
`run(module, ctx)`; `ctx` is the `PassContext` below. Fix texts that name a switch ask
`ctx.caller.switch(flag, keyword)`, so the CLI user reads the flag and the Python user the
keyword of the function they called (no message is patched afterwards).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from shardc.dialect.ir import Module

if TYPE_CHECKING:
    from shardc.dialect.ir import Operation

    from .manual.regions import ManualRegion
    from .manual.variance import VarianceResult
    from .pin import PinReport
    from .plan.plan import Rewrite
    from .plan.report import Plan
    from .propagation.report import PropagationReport


@dataclass(frozen=True)
class Caller:
    """Who runs the pipeline: the command line (`cli=True`) or a Python function by name."""

    cli: bool = False
    function: str = "shardc.propagate"

    def switch(self, flag: str, keyword: str) -> str:
        """How this caller turns something off: `--flag` on the CLI, `fn(..., keyword)` else."""
        return flag if self.cli else f"{self.function}(..., {keyword})"


CLI = Caller(cli=True)


@dataclass
class PassContext:
    """Shared by the passes of one run; the run returns it (reports, removed collectives)."""

    caller: Caller = field(default_factory=Caller)
    report: PropagationReport | None = None  # set by the propagate pass
    removed_collectives: list[str] = field(default_factory=list)
    kept_collectives: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # import steps' (the report gets them)
    plan: Plan | None = None  # set by the plan pass
    plan_rewrites: list[Rewrite] = field(default_factory=list)  # where each reshard sits
    auto_kept: Any = None  # the annotations auto keeps (auto-snapshot), None: what propagated
    auto_note: str | None = None
    pin_report: PinReport | None = None  # set by the `pin` export: how its pins were chosen
    timings: list[tuple[str, float]] = field(default_factory=list)  # (pass, wall seconds)
    _variance: VarianceResult | None = None
    _ops: list[Operation] | None = None
    _op_names: frozenset[str] | None = None
    _regions: list[ManualRegion] | None = None
    _keep_ops_once: bool = False  # the running pass added, removed and moved no op this time
    _ops_after: list[Operation] | None = None  # the op list it left (`replace_ops`)

    def ops(self, module: Module) -> list[Operation]:
        """Every op of `module` in pre-order (`module.walk()`), listed once for the passes
        that only read the IR (a walk of a 10k-op module costs as much as a small check)."""
        if self._ops is None:
            self._ops = list(module.walk())
        return self._ops

    def has_op(self, module: Module, name: str) -> bool:
        """Whether any op of `module` is named `name`."""
        if self._op_names is None:
            self._op_names = frozenset(op.name for op in self.ops(module))
        return name in self._op_names

    def manual_regions(self, module: Module) -> list[ManualRegion]:
        """The module's manual regions (`manual/regions.py`), outer before inner, found once."""
        if self._regions is None:
            from .manual.regions import MANUAL_OP, manual_regions

            self._regions = manual_regions(module) if self.has_op(module, MANUAL_OP) else []
        return self._regions

    def value_variance(self, module: Module) -> VarianceResult:
        """The VALUE-view variance analysis, computed once for the checks that read it."""
        if self._variance is None:
            from .manual.variance import View, analyze_variance

            self._variance = analyze_variance(module, View.VALUE, self.manual_regions(module))
        return self._variance

    def keep_ops(self) -> None:
        """Say that the running pass added, removed and moved no op this time (it had nothing
        to do): the op list outlives it, as it outlives a `keeps_ops` pass."""
        self._keep_ops_once = True

    def replace_ops(self, ops: list[Operation]) -> None:
        """Say that the running pass left the op list `ops` (every op in pre-order, as
        `module.walk()` lists it now) and changed no op's name, only how many ops bear each (it
        copied ops): the next passes read `ops` rather than walk the module again."""
        self._ops_after = ops

    def invalidate(self, ops: bool = True) -> None:
        """Forget cached analyses (after a pass that changed the IR); `ops=False` keeps the op
        list (`ops`, `has_op`): the pass added, removed and moved no op."""
        self._variance = None
        self._regions = None
        keep, self._keep_ops_once = self._keep_ops_once, False
        after, self._ops_after = self._ops_after, None
        if ops and not keep:
            self._ops = after
            if after is None:
                self._op_names = None


class Pass(Protocol):
    """A pass: `name` for `--dump-after`, `changes_ir` (False for checks), and `run`. A pass
    that changes the IR but never adds, removes or moves an op (only shardings and attributes)
    may say so with a class attribute `keeps_ops = True`: the op list the passes share
    (`PassContext.ops`) then outlives it."""

    name: ClassVar[str]
    changes_ir: ClassVar[bool]

    def run(self, module: Module, ctx: PassContext) -> None: ...
