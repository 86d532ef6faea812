"""The mixture-of-experts layer (top-2 einsum dispatch, experts sharded), compiled by jax.jit and shardc.jit."""

import pytest

from . import moe
from .common import auto_mesh
from .harness import CHECKS, Pair, compile_both


@pytest.fixture(scope="module")
def pair() -> Pair:
    return compile_both(moe.build, auto_mesh(moe.MESH_AXES))


@pytest.mark.parametrize("check", CHECKS)
def test_moe_top2(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
