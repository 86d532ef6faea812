"""One pipeline behind every entry point: the same checks everywhere, fix texts that name the
caller's switch, and reported shardings that are the exported ones."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shardc
from shardc.dialect.errors import ManualComputationError
from shardc.passes.pipeline import PASS_NAMES, Caller, PipelineOptions, build_pipeline
from shardc.passes.propagation.options import PropagationOptions

LIT = Path(__file__).parent / "lit"
P = jax.sharding.PartitionSpec


def _partition_id_text() -> str:
    text = (LIT / "pipeline" / "partition_id.mlir").read_text()
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith("//"))


def test_build_pipeline_follows_the_options() -> None:
    names = [p.name for p in build_pipeline(PipelineOptions(export="pin"))]
    assert names == [n for n in PASS_NAMES if n != "remove-redundant-collectives"]
    opt = PipelineOptions(propagate=False, check_replication=False, remove_redundant_collectives=True)
    assert [p.name for p in build_pipeline(opt)] == [
        "verify", "check-manual-shapes", "check-partition-id", "remove-redundant-collectives"
    ]
    basic = PropagationOptions(strategy="basic")
    (prop,) = [p for p in build_pipeline(PipelineOptions(propagation=basic)) if p.name == "propagate"]
    assert prop.options is basic  # type: ignore[attr-defined]
    with pytest.raises(shardc.ShardcError, match="no pass of that name"):
        PipelineOptions(dump_after=("propagation",))


def test_partition_id_in_partially_manual_region_rejected_by_every_python_entry() -> None:
    text = _partition_id_text()
    for run in (shardc.check, shardc.propagate):
        with pytest.raises(ManualComputationError, match="partition_id inside"):
            run(text)


def _unreplicated(mesh: jax.sharding.AbstractMesh):  # type: ignore[no-untyped-def]
    return jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False)


def test_replication_fix_names_the_callers_switch() -> None:
    mesh = jax.sharding.AbstractMesh((4, 2), ("x", "y"))
    a = jax.ShapeDtypeStruct((8, 4), jnp.float32)
    text = jax.jit(_unreplicated(mesh)).lower(a).as_text()
    expected = {
        "shardc.check": lambda: shardc.check(text),
        "shardc.propagate": lambda: shardc.propagate(text),
        "shardc.jit": lambda: shardc.jit(_unreplicated(mesh), mesh=mesh).lower(a),
    }
    for function, run in expected.items():
        with pytest.raises(ManualComputationError) as e:
            run()
        hint = e.value.hint or ""
        assert hint.endswith(f"turn the check off ({function}(..., check_replication=False))"), hint
        assert "--no-check-replication" not in hint and "check_vma" not in hint
    cli = Caller(cli=True)
    assert cli.switch("--no-check-replication", "check_replication=False") == "--no-check-replication"
    # and the keyword works where the fix says
    assert "sdy.manual_computation" in shardc.propagate(text, check_replication=False)


def test_reported_shardings_are_the_exported_ones() -> None:
    # f32[6] on x=4: 4 does not divide 6, the export keeps the dividing part {"x":(1)2}.
    # (An argument annotated so is an error, as with jax.jit: here propagation puts it there,
    # from a constraint inside.)
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    f = shardc.jit(lambda v: shardc.constrain(v, "x") * 2.0, mesh=mesh)
    low = f.lower(jax.ShapeDtypeStruct((6,), jnp.float32))
    text = low.as_text()
    (arg,) = low.in_shardings
    (out,) = low.out_shardings
    assert arg is not None and out is not None
    assert arg.body() == '<@mesh, [{"x":(1)2}]>'
    assert f"%arg0: tensor<6xf32> {{sdy.sharding = {arg}}}" in text
    assert re.search(r"-> \(tensor<6xf32> \{.*sdy.sharding = " + re.escape(str(out)), text)
    arg_line = next(ln for ln in low.listing().splitlines() if ln.startswith("%arg0"))
    assert '{"x":(1)2}' in arg_line
    grid = low.show("%arg0", print_it=False)
    assert grid == low.show("%arg0", print_it=False) and "%arg0" in grid
    # compile() places the inputs by what the pinned export wrote, and runs right
    x = np.arange(6, dtype=np.float32)
    compiled = low.compile()
    np.testing.assert_allclose(np.asarray(compiled(x)), x * 2.0)
