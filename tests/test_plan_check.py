"""`shardc plan --check` / `shardc.plan(text, check=True)` / `plan_lowered(..., check=True)`:
the plan next to the collectives XLA compiles, matched by source op, kind and axes."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

import shardc
from shardc import ShardcError
from shardc.api.plan import plan_lowered
from shardc.backend.hlo_collectives import group_axes, parse_groups, read_collectives
from shardc.passes.plan.check import CompiledEntry, match
from shardc.passes.plan.report import Collective

from .test_plan_api import DOT

SCHEMA = {
    "planned",
    "compiled",
    "matched",
    "planned_only",
    "compiled_only",
    "total_planned",
    "total_compiled",
}


def test_check_matches_planned_to_compiled() -> None:
    # the contraction over x: one all-reduce, planned and compiled at the dot
    check = shardc.plan(DOT, check=True).check
    assert [(c.kind, c.axes, c.bytes) for c in check.compiled] == [("all-reduce", ("x",), 1024)]
    assert check.matched == [(0, 0)] and check.planned_only == [] and check.compiled_only == []
    assert check.compiled[0].op_name == "stablehlo.dot_general"  # the tag translated back
    doc = check.to_json()
    assert set(doc) == SCHEMA and doc["total_planned"] == doc["total_compiled"] == 1024
    assert list(doc["compiled"][0]) == ["kind", "axes", "bytes", "op_name", "loc"]


def test_check_cli_json_in_a_subprocess_with_more_devices(tmp_path) -> None:  # noqa: ANN001
    # a 16-device mesh: the command line compiles in a subprocess with 16 virtual devices
    src = tmp_path / "dot16.mlir"
    src.write_text(DOT.replace('["x"=4, "y"=2]', '["x"=8, "y"=2]'))
    r = subprocess.run(
        [sys.executable, "-m", "shardc.tools.cli", "plan", "--check", "--json", str(src)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == SCHEMA
    assert [c["kind"] for c in doc["compiled"]] == ["all-reduce"] and doc["matched"] == [[0, 0]]
    assert doc["total_compiled"] == 8 * 32 * 4


def test_lowered_plan_check_names_jax_ops() -> None:
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def f(x, w):  # noqa: ANN001, ANN202
        return jnp.tanh(x @ w)

    low = shardc.jit(f, mesh=mesh, in_shardings=("_, x", "x, _")).lower(
        jax.ShapeDtypeStruct((8, 16), jnp.float32), jax.ShapeDtypeStruct((16, 32), jnp.float32)
    )
    check = plan_lowered(low, check=True).check
    assert check.matched and not check.planned_only and not check.compiled_only
    compiled = check.compiled[0]
    assert compiled.op_name.endswith("dot_general") and "test_plan_check.py" in (compiled.loc or "")


def test_replica_group_spellings_read_as_mesh_axes() -> None:
    from shardc.dialect.shardings import Mesh

    mesh = Mesh.of(x=4, y=2)
    lists = parse_groups("replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={0}")
    iota = parse_groups("replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}")
    meshed = parse_groups("replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_0'}, x")
    assert group_axes("all-gather", lists, mesh) == ("y",)
    assert group_axes("all-gather", iota, mesh) == ("x",)
    assert group_axes("all-gather", meshed, mesh) == ("x",)
    half = parse_groups("replica_groups={{0,4},{1,5},{2,6},{3,7}}")
    assert group_axes("all-reduce", half, mesh) == ('"x":(1)2',)
    pairs = parse_groups("source_target_pairs={{0,2},{2,0},{1,3},{3,1}}")
    assert group_axes("collective-permute", pairs, mesh) == ("x",)


def test_hlo_measure_counts_async_halves_and_loops() -> None:
    hlo = """HloModule m

%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %x = f32[8]{0} get-tuple-element(%p), index=1
  %s = (f32[8]{0}, f32[32]{0}) all-gather-start(%x), dimensions={0}, metadata={op_name="g" source_file="m.py" source_line=3}
  ROOT %t = (s32[], f32[8]{0}) tuple(%i, %x)
}

ENTRY %main (a: f32[32]) -> f32[8] {
  %w = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"3"}}
  ROOT %r = f32[8]{0} get-tuple-element(%w), index=1
}
"""
    (c,) = read_collectives(hlo)
    assert (c.kind, c.bytes, c.runs, c.op_name, c.loc) == ("all-gather", 128, 3, "g", "m.py:3")


def _planned(kind: str, axes: tuple[str, ...], nbytes: int, source: str) -> Collective:
    return Collective(kind, axes, nbytes, "main", "%0", "op", None, "", "", source=source)


def test_one_compiled_collective_stands_for_several_at_its_ops() -> None:
    # XLA combines two all-reduces of two ops into one; a third op's is not there
    planned = [
        _planned("all-reduce", ("x",), 64, "a"),
        _planned("all-reduce", ("x",), 64, "b"),
        _planned("all-gather", ("y",), 32, "c"),
        _planned("all-slice", ("x",), 0, "a"),
    ]
    compiled = [CompiledEntry("all-reduce", ("x",), 128, "(a:b)", None, ("a", "b"))]
    result = match(planned, compiled)
    assert result.matched == [(0, 0), (1, 0)]
    assert result.planned_only == [2] and result.compiled_only == []


def test_check_compiles_the_program_the_untagged_module_compiles_to() -> None:
    """The check's tags (op locations) only name ops in XLA's metadata: the program it compiles
    has the collectives of the untagged compiled form (`propagate --pin`), byte for byte; on
    each case of the plan goldens' boundaries (calls, loops, branches, shard_maps,
    constraints; its entry named @main as XLA wants it) and on a module where XLA's own
    layout is planned."""
    import re
    from pathlib import Path

    from shardc.api.plan_check import compiled_hlo

    lit = Path(__file__).parent / "lit" / "plan"
    texts = [(lit / "xla_layout.mlir").read_text()]
    for case in (lit / "boundaries.mlir").read_text().split("// -----"):
        entry = re.search(r"func\.func @(\w+)\(", case)
        if entry is not None and f"@{entry.group(1)}(" not in case[entry.end() :]:
            texts.append(case.replace(f"func.func @{entry.group(1)}(", "func.func @main(", 1))
    moved = 0
    for text in texts:
        check = shardc.plan(text, check=True).check
        untagged = read_collectives(compiled_hlo(shardc.propagate(text, mode="pin"), 8))
        assert sorted((c.kind, c.bytes) for c in check.compiled) == sorted(
            (c.kind, c.total_bytes) for c in untagged if c.runs
        ), text
        moved += len(check.compiled)
    assert len(texts) >= 6 and moved >= 6, "the cases move something"


def test_check_compiles_a_module_whose_entry_is_not_named_main() -> None:
    # XLA enters at @main: the only public func is the entry whatever its name
    check = shardc.plan(DOT.replace("@main", "@matmul"), check=True).check
    assert [(c.kind, c.axes, c.bytes) for c in check.compiled] == [("all-reduce", ("x",), 1024)]
    assert check.matched == [(0, 0)]


def test_check_names_the_entry_it_cannot_choose() -> None:
    # two public funcs and no @main: which one XLA should run is the user's to say
    second = DOT.replace("@main", "@other").replace('sdy.mesh @mesh = <["x"=4, "y"=2]>', "")
    with pytest.raises(ShardcError, match=r"no @main and 2 public functions \(@matmul, @other\)"):
        shardc.plan(DOT.replace("@main", "@matmul") + second, check=True)
