"""The Flax linen transformer under data-parallel, FSDP and Megatron layouts, compiled by
jax.jit and shardc.jit."""

import functools

import numpy as np
import pytest

from . import flax_transformer as ft
from .common import auto_mesh
from .harness import CHECKS, Pair, compile_both, unsharded_outputs


@pytest.fixture(scope="module")
def reference() -> list[np.ndarray]:
    """One unsharded run for all layouts: on one device the layouts' steps are the same
    program (their constraints are no-ops)."""
    return unsharded_outputs(ft.build, auto_mesh(ft.LAYOUTS["megatron"][0]))


@pytest.fixture(scope="module", params=sorted(ft.LAYOUTS))
def pair(request: pytest.FixtureRequest, reference: list[np.ndarray]) -> Pair:
    mesh_axes, _ = ft.LAYOUTS[request.param]
    return compile_both(functools.partial(ft.build, layout=request.param), auto_mesh(mesh_axes),
                        reference=reference)


@pytest.mark.parametrize("check", CHECKS)
def test_flax_transformer(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
