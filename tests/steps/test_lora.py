"""The Gemma-style LoRA fine-tune step, compiled by jax.jit and shardc.jit."""

import pytest

from . import lora
from .common import auto_mesh
from .harness import CHECKS, Pair, compile_both


@pytest.fixture(scope="module")
def pair() -> Pair:
    return compile_both(lora.build, auto_mesh(lora.MESH_AXES))


@pytest.mark.parametrize("check", CHECKS)
def test_gemma_lora(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
