"""The plan of the compiled form against the program XLA compiles from it, on real steps where
XLA's own Shardy, run on the module as XLA's import makes it (through HLO), lays some dots out
otherwise than shardc's layout and the compiled form leaves them to XLA (the LLaMA FSDP+TP
step's feed-forward and LM-head dots, the LoRA step's): `Lowered.plan()` predicts XLA's layout
there, within 10% of the compiled program's collective bytes, and that program moves no more
than jax.jit's (1% + 256 B slack, the harness's bound). The scanned decoder's layer weight
gradients inside its loop are reduced per output dim, as XLA's dot handler does
(docs/xla_partitioner.md, "Dots: contracting dims").

Compiled from abstract arguments at the tests' small sizes, nothing run (the numbers of these
steps are the suite's, tests/steps/test_steps.py)."""

import functools
import json
from typing import Any

import pytest

import shardc
from shardc.backend.exporter import export_text
from shardc.backend.hlo_collectives import total_bytes as compiled_bytes
from shardc.tools.cli import main as cli_main
from tests.differential.hlo_bytes import total_bytes

from .catalog import MODELS
from .harness import BYTES_SLACK, FAST_COMPILE

PLAN_TOLERANCE = 0.10


@functools.cache
def _lowered(name: str) -> tuple[Any, Any, Any]:
    """The suite's step `name`, lowered by shardc.jit from abstract arguments, and compiled."""
    model = MODELS[name]
    step = model.make()(model.mesh())
    lowered = step.shardc_jit().lower(*step.abstract)
    return step, lowered, lowered.compile(FAST_COMPILE)


@pytest.mark.parametrize("name", ["llama", "lora", "scan"])
def test_plan_predicts_compiled_bytes(name: str) -> None:
    step, lowered, compiled = _lowered(name)
    planned = lowered.plan().total_bytes
    xla = compiled_bytes(compiled.as_text())
    assert abs(planned - xla) <= PLAN_TOLERANCE * xla, (
        f"{name}: the plan of the compiled form says {planned} B per device, XLA's compiled "
        f"program moves {xla} B ({planned / max(xla, 1):.2f}x)"
    )
    reference = step.jax_jit().lower(*step.abstract).compile(FAST_COMPILE)
    mine, ref = total_bytes(compiled.as_text()), total_bytes(reference.as_text())
    factor, extra = BYTES_SLACK
    assert mine <= ref * factor + extra, (
        f"{name}: shardc.jit moves {mine} B per device, jax.jit {ref} B ({mine / max(ref, 1):.2f}x)"
    )


def test_default_plan_of_the_module_text_is_of_what_runs(tmp_path: Any) -> None:
    """`shardc plan FILE`, `--json` and `shardc.plan(text)` on the LLaMA step's module as JAX
    traced it (what a user saves and plans) plan the program that runs, within 10% of XLA's
    compiled bytes; `--as-propagated` plans shardc's layout as propagated, which is not that
    program here (XLA lays six dots out otherwise)."""
    _, lowered, compiled = _lowered("llama")
    build, _ = lowered.plan_source
    text = export_text(build(), "generic", with_locs=True)
    xla = compiled_bytes(compiled.as_text())
    path = tmp_path / "llama.mlir"
    path.write_text(text)
    out = tmp_path / "plan.json"
    assert cli_main(["plan", "--json", str(path), "-o", str(out)]) == 0
    planned = json.loads(out.read_text())["total_bytes"]
    assert abs(planned - xla) <= PLAN_TOLERANCE * xla, (
        f"shardc plan --json says {planned} B per device, XLA's program moves {xla} B "
        f"({planned / xla:.2f}x)"
    )
    assert shardc.plan(text).total_bytes == planned
    propagated = shardc.plan(text, as_propagated=True).total_bytes
    assert abs(propagated - xla) > PLAN_TOLERANCE * xla, (
        f"the propagated layout's plan ({propagated} B) is within 10% of XLA's {xla} B: the "
        "step no longer tests what the default plan adds (XLA's layout where it differs)"
    )
