"""The ViT classifier step (conv patch embedding), compiled by jax.jit and shardc.jit."""

import pytest

from . import vit
from .common import auto_mesh
from .harness import CHECKS, Pair, compile_both


@pytest.fixture(scope="module")
def pair() -> Pair:
    return compile_both(vit.build, auto_mesh(vit.MESH_AXES))


@pytest.mark.parametrize("check", CHECKS)
def test_vit(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
