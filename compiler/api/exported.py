"""A propagated module's export, kept as IR: the one source of the shardings the API reports.

`Lowered.in_shardings / out_shardings / listing() / show()` and the input placement of
`.compile()` read the exported module (what `as_text()` prints), never a sharding of their own
making: for f32[6] on x=4 the export writes `{"x":(1)2}` (the largest dividing part), and so do
they.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from shardc.backend.exporter import export_text
from shardc.backend.xla_form import ShardyOracle
from shardc.dialect.errors import no_main
from shardc.dialect.ir import Module
from shardc.dialect.op_views import Func
from shardc.dialect.shardings import TensorSharding
from shardc.passes.manual.redundant import Report as RedundantReport
from shardc.passes.pin import PinReport, Written, XlaOracle
from shardc.passes.pipeline import Caller, PipelineOptions, run_pipeline
from shardc.runtime import suspended_gc

ExportMode = Literal["annotate", "pin"]


@dataclass
class Exported:
    """One export of a propagated module: its IR, its texts, what the rewrites removed."""

    module: Module
    mode: ExportMode
    removed_collectives: list[str] = field(default_factory=list)
    # `pin`: how the pins were chosen, and the oracle that was asked (its `last` module is
    # what XLA compiles when the last question was asked of this very export)
    pin_report: PinReport | None = None
    oracle: Any = None
    _texts: dict[str, str] = field(default_factory=dict)

    def text(self, fmt: Literal["pretty", "generic"] = "pretty") -> str:
        """The MLIR text of this export (printed once per format)."""
        if fmt not in self._texts:
            self._texts[fmt] = export_text(self.module, fmt)
        return self._texts[fmt]

    def main(self) -> Func:
        funcs = self.module.funcs
        if "main" not in funcs:
            raise no_main()
        return Func(funcs["main"])

    @property
    def in_shardings(self) -> tuple[TensorSharding | None, ...]:
        """`@main`'s argument shardings as written."""
        main = self.main()
        return tuple(a.sharding for a in main.op.regions[0].entry.args)

    @property
    def out_shardings(self) -> tuple[TensorSharding | None, ...]:
        """`@main`'s result shardings as written."""
        return self.main().result_shardings


@suspended_gc()  # (the copy too: a clone allocates many objects that all live on)
def export_copy(
    module: Module,
    mode: ExportMode,
    remove_redundant: bool,
    caller: Caller | None = None,
    oracle: XlaOracle | None = None,
    written: Written | None = None,
) -> Exported:
    """Export a copy of the propagated `module` through the pipeline's tail: the redundant-
    collective rewrite when asked, then the export in `mode` (`pin`: from the annotations as
    `written`, asking `oracle`, by default jaxlib's Shardy on the export's text, what XLA
    derives)."""
    return export_in_place(module.clone(), mode, remove_redundant, caller, oracle, written)


@suspended_gc()
def export_in_place(
    module: Module,
    mode: ExportMode,
    remove_redundant: bool,
    caller: Caller | None = None,
    oracle: XlaOracle | None = None,
    written: Written | None = None,
) -> Exported:
    """Export the propagated `module` itself (no copy: it becomes the export) through the
    pipeline's tail, as `export_copy` does for a copy."""
    if mode == "pin" and oracle is None:
        oracle = ShardyOracle()
    options = PipelineOptions(
        verify=False,
        check_manual=False,
        check_replication=False,
        propagate=False,
        remove_redundant_collectives=remove_redundant,
        export=mode,
    )
    given = [written] if written is not None else []
    ctx = run_pipeline(module, options, caller, oracle=oracle, given=given)
    redundant = ctx.result(RedundantReport)
    removed = list(redundant.removed) if redundant is not None else []
    return Exported(module, mode, removed, ctx.result(PinReport), oracle)
