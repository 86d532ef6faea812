"""The MaxText-style decoder (scan over stacked layers, remat), compiled by jax.jit and shardc.jit."""

import pytest

from . import scan_decoder
from .common import auto_mesh
from .harness import CHECKS, Pair, compile_both


@pytest.fixture(scope="module")
def pair() -> Pair:
    return compile_both(scan_decoder.build, auto_mesh(scan_decoder.MESH_AXES))


@pytest.mark.parametrize("check", CHECKS)
def test_maxtext_scan(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
