"""Every real training step of tests/steps compiled by jax.jit and shardc.jit with the same
function and shardings, each checked by every check of the harness (bytes, memory, numbers,
shardings, op names, source lines). Each step compiles once: the fixture is module-scoped and
pytest runs all checks of one step before building the next."""

import numpy as np
import pytest

from .catalog import MODELS
from .harness import CHECKS, Pair, compile_both, unsharded_outputs

_unsharded: dict[str, list[np.ndarray]] = {}


def _reference(name: str) -> list[np.ndarray]:
    """The unsharded run's outputs, shared by models whose one-device programs are the same."""
    key = MODELS[name].unsharded_as or name
    if key not in _unsharded:
        model = MODELS[key]
        _unsharded[key] = unsharded_outputs(model.make(), model.mesh())
    return _unsharded[key]


@pytest.fixture(scope="module", params=list(MODELS))
def pair(request: pytest.FixtureRequest) -> Pair:
    model = MODELS[request.param]
    return compile_both(model.make(), model.mesh(), reference=_reference(request.param))


@pytest.mark.parametrize("check", CHECKS)
def test_step(pair: Pair, check: str) -> None:
    CHECKS[check](pair)
