"""shardc.jit imports JAX's module without locations and reads each op's from JAX's module when
asked (compiler/backend/xla_module.py `JaxLocations`): the locations must be those JAX's print shows."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import shardc
from shardc.api.jax_compile import _import_located
from shardc.backend import mlir_bridge
from shardc.backend.importer import import_generic
from shardc.backend.xla_module import JaxLocations
from shardc.dialect.text import print_generic

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def step(x, w):
    h = jnp.sin(x @ w)
    y = jax.lax.reduce_max(h, (1,))
    return jnp.tanh(shardc.constrain(h, "x?, ?")), y


def _lowered() -> shardc.Lowered:
    x, w = np.ones((8, 16), np.float32), np.ones((16, 4), np.float32)
    return shardc.jit(step, mesh=MESH, in_shardings=("x, _", "_, y")).lower(x, w)


def _locations(module) -> list:
    """Every op's and block argument's resolved location, in walk order."""
    out = []
    for op in module.walk():
        out.append((op.name, module.resolve_loc(op.loc)))
        for region in op.regions:
            for block in region.blocks:
                out += [("arg", module.resolve_loc(a.loc)) for a in block.args]
    return out


def test_locations_are_those_of_jax_print() -> None:
    low = _lowered()
    jax_module = low.origin.jax_module
    printed = import_generic(mlir_bridge.generic_text(jax_module), "<jax>")
    located = _import_located(mlir_bridge.generic_text(jax_module, with_locs=False), "<jax>",
                              jax_module)
    assert isinstance(located.loc_aliases, JaxLocations)
    want = _locations(printed)
    assert _locations(located) == want
    # the user's lines (the sine and the reduce's body), and @main's argument names
    here = "test_jit_locations.py:"
    assert any(name == "stablehlo.sine" and here + "23" in (loc or "") for name, loc in want)
    assert any(name == "stablehlo.maximum" and here + "24" in (loc or "") for name, loc in want)
    assert ("arg", "x") in want and ("arg", "w") in want


def test_clones_and_prints_keep_the_locations() -> None:
    low = _lowered()
    ir = low.ir
    sine = next(op for op in ir.walk() if op.name == "stablehlo.sine")
    where = ir.resolve_loc(sine.loc)
    assert where is not None and "test_jit_locations.py:23" in where
    copy = ir.clone()
    assert isinstance(copy.loc_aliases, JaxLocations)
    # a clone reads on demand too: the dot's location was not read yet
    dot = next(k for k, op in enumerate(ir.walk()) if op.name == "stablehlo.dot_general")
    assert dict.__contains__(copy.loc_aliases, f"#loc{dot}") is False
    copied = next(op for op in copy.walk() if op.name == "stablehlo.sine")
    assert copy.resolve_loc(copied.loc) == where
    # printed with locations (every alias then read): jaxlib parses it, locations included
    text = print_generic(copy, with_locs=True)
    jmod = mlir_bridge.parse_module(text, "<with locs>")
    assert "test_jit_locations.py" in mlir_bridge.pretty_text(jmod, with_locs=True)
    # the listing and a plan name the user's line
    assert "test_jit_locations.py:23" in low.listing()


def test_pipeline_errors_name_the_source_line() -> None:
    def body(a):
        return jnp.sin(a)

    def g(x):
        return jax.shard_map(body, in_specs=P("x"), out_specs=P(), check_vma=False)(x)

    with pytest.raises(shardc.ShardcError) as e:
        shardc.jit(g, mesh=MESH).lower(np.ones((8, 4), np.float32))
    first = str(e.value).splitlines()[0]
    # where the manual computation is, and where the value that varies is computed
    assert re.match(r"\S*test_jit_locations\.py:86:\d+: result 0 of sdy.manual_computation", first)
    assert re.search(r"computed by stablehlo.sine at \S*test_jit_locations\.py:83:\d+\)", first)
