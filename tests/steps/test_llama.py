"""The EasyLM-style FSDP + tensor-parallel LLaMA step, compiled by jax.jit and shardc.jit."""

import pytest

from . import llama
from .common import auto_mesh
from .harness import CHECKS, Pair, compile_both


@pytest.fixture(scope="module")
def pair() -> Pair:
    return compile_both(llama.build, auto_mesh(llama.MESH_AXES))


@pytest.mark.parametrize("check", CHECKS)
def test_llama_fsdp_tp(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
