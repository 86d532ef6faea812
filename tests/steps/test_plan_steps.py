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

import pytest

from shardc.backend.hlo_collectives import total_bytes as compiled_bytes
from tests.differential.hlo_bytes import total_bytes

from .catalog import MODELS
from .harness import BYTES_SLACK, FAST_COMPILE

PLAN_TOLERANCE = 0.10


@pytest.mark.parametrize("name", ["llama", "lora", "scan"])
def test_plan_predicts_compiled_bytes(name: str) -> None:
    model = MODELS[name]
    step = model.make()(model.mesh())
    lowered = step.shardc_jit().lower(*step.abstract)
    planned = lowered.plan().total_bytes
    compiled = lowered.compile(FAST_COMPILE)
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
