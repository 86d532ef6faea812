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
from shardc.passes.plan.plan import PlanOptions
from shardc.passes.propagation.options import PropagationOptions

LIT = Path(__file__).parent / "lit"
P = jax.sharding.PartitionSpec


def _partition_id_text() -> str:
    text = (LIT / "pipeline" / "partition_id.mlir").read_text()
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith("//"))


def test_build_pipeline_follows_the_options() -> None:
    names = [p.name for p in build_pipeline(PipelineOptions(export="pin"))]
    assert names == [
        "record-written", "verify", "check-manual-shapes", "check-partition-id",
        "check-replication", "absorb-data-flow-edges", "split-call-sites", "dedup-meshes",
        "remove-size-one-axes", "split-constants", "manual-axes-cleanup",
        "apply-sharding-constraints", "import-sharding-groups", "propagate",
        "sink-func-data-flow-edges", "merge-constants", "insert-call-result-reshards", "export",
        "pin",
    ]  # fmt: skip
    assert set(names) <= set(PASS_NAMES)
    # dedup_functions_fully: callees are shared through func data-flow edges, not copied
    dedup = PipelineOptions(propagation=PropagationOptions(dedup_functions_fully=True))
    dedup_names = [p.name for p in build_pipeline(dedup)]
    assert "split-call-sites" not in dedup_names and "add-func-data-flow-edges" in dedup_names
    auto = build_pipeline(PipelineOptions(propagation=PropagationOptions(auto=True)))
    auto_names = [p.name for p in auto]
    # the annotations are recorded before Shardy's import steps add to them; auto follows propagate
    assert auto_names.index("auto-snapshot") < auto_names.index("split-call-sites")
    # (merge-constants folds split-constants' copies back before anything reads the result)
    after = ["propagate", "sink-func-data-flow-edges", "merge-constants"]
    assert auto_names[-4:] == [*after, "auto"]
    planned = build_pipeline(PipelineOptions(plan=PlanOptions()))
    assert [p.name for p in planned][-4:] == [*after, "plan"]
    # the plan's causes read propagation origins: asking for a plan records them
    assert planned[-4].options.debug_origins  # type: ignore[attr-defined]
    opt = PipelineOptions(propagate=False, check_replication=False, remove_redundant_collectives=True)
    assert [p.name for p in build_pipeline(opt)] == [
        "verify", "check-manual-shapes", "check-partition-id", "remove-redundant-collectives"
    ]
    basic = PropagationOptions(strategy="basic")
    (prop,) = [p for p in build_pipeline(PipelineOptions(propagation=basic)) if p.name == "propagate"]
    assert prop.options is basic  # type: ignore[attr-defined]
    with pytest.raises(shardc.ShardcError, match="no pass named"):
        PipelineOptions(dump_after=("propagation",))


def test_partition_id_in_partially_manual_region_rejected_by_every_python_entry() -> None:
    text = _partition_id_text()
    for run in (shardc.check, shardc.propagate):
        with pytest.raises(ManualComputationError, match="partition_id inside"):
            run(text)


def _unreplicated(mesh: jax.sharding.AbstractMesh):  # type: ignore[no-untyped-def]
    return jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False)


def test_replication_fix_names_the_callers_switch() -> None:
    # Auto axes named (not jax's default, which differs between versions): shard_map then
    # reshards the unsharded input to its in_specs rather than rejecting the mismatch
    auto = (jax.sharding.AxisType.Auto,) * 2
    mesh = jax.sharding.AbstractMesh((4, 2), ("x", "y"), axis_types=auto)
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
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
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


MESHES = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""


def test_an_import_step_can_be_left_out() -> None:
    from shardc.api.propagate import propagate_text

    merged, _ = propagate_text(MESHES)
    assert "@mesh2" not in merged and '<@mesh, [{"x"}, {}]>' in merged
    kept, _ = propagate_text(MESHES, disable=("dedup-meshes",))
    assert 'sdy.sharding<@mesh2, [{"x"}, {}]>' in kept
    with pytest.raises(shardc.ShardcError, match="--disable-pass: no pass named 'dedup'"):
        propagate_text(MESHES, disable=("dedup",))


def test_building_units_leaves_the_ir_alone() -> None:
    """Building the propagation units changes nothing on the IR: size-one axes, closed
    constraints and groups are the import steps' business (the inputs are theirs, steps not run
    here), and the working shardings of constraint results and of shard_map regions' body
    arguments and results live in the units until the run writes them back."""
    from shardc.backend.importer import import_text
    from shardc.dialect.text import print_generic
    from shardc.passes.propagation.driver import Propagator

    files = [LIT / "import" / f"{n}.mlir" for n in ("size_one_axes", "constraints",
                                                     "sharding_groups", "manual_axes")]
    files += [LIT / "propagate" / "manual.mlir", LIT / "manual" / "loops_and_calls.mlir"]
    regions = 0
    for path in files:
        for n, text in enumerate(path.read_text().split("// -----")):
            module = import_text(text)
            regions += sum(op.name == "sdy.manual_computation" for op in module.walk())
            before = print_generic(module)
            prop = Propagator(module, PropagationOptions())
            prop.build()
            assert print_generic(module) == before, f"{path.name} case {n}"
    assert regions >= 4  # the shard_map cases are there


def test_propagate_leaves_no_cyclic_garbage() -> None:
    """`shardc.propagate` frees its IR and units by reference counting before it returns: a
    dropped module left for the cyclic GC costs a whole-heap traversal on a later allocation."""
    import gc

    text = (LIT / "propagate" / "dot.mlir").read_text().split("// -----")[0]
    shardc.propagate(text)  # warm caches (rules, parsed attributes) that live on by design
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        out = shardc.propagate(text)
        garbage = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    assert "sdy.sharding" in out
    assert garbage == 0


CONSTANT_TWICE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<16xf32>
  %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %0 = stablehlo.add %arg0, %b : tensor<8x16xf32>
  %1 = stablehlo.multiply %arg1, %b : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
"""


def test_split_constants_are_merged_back_after_propagation() -> None:
    """split-constants copies the chain for the multiply; merge-constants folds a copy back
    where it got its original's layout and keeps it (unmarked) where its use was given another;
    split_constants=False runs neither, and then the two uses meet in the constant."""
    from shardc.backend.importer import import_text
    from shardc.dialect.value_names import SPLIT_COPY
    from shardc.passes.pipeline import run_pipeline

    def run(**kw: object) -> tuple[list[str], int, object]:
        module = import_text(CONSTANT_TWICE)
        run_pipeline(module, PipelineOptions(**kw))  # type: ignore[arg-type]
        ops = [op for op in module.walk() if op.name.startswith("stablehlo.")]
        copies = sum(SPLIT_COPY in op.attributes for op in ops)
        bcast = next(op for op in ops if op.name == "stablehlo.broadcast_in_dim")
        return [op.name for op in ops], copies, bcast.results[0].sharding

    names = [op.name for op in import_text(CONSTANT_TWICE).walk() if op.name.startswith("stablehlo.")]
    merged, copies, split_bcast = run()
    # the add's and the multiply's broadcasts differ, and so do their constants ([{}] and [{"y"}])
    assert copies == 0 and len(merged) == len(names) + 2
    assert merged.count("stablehlo.broadcast_in_dim") == 2
    assert str(split_bcast) == '#sdy.sharding<@mesh, [{"x", ?}, {?}]>'  # the add's alone
    kept, copies, _ = run(disable=("merge-constants",))
    assert copies == 2 and len(kept) == len(names) + 2
    off, copies, shared = run(propagation=PropagationOptions(split_constants=False),
                              disable=("merge-constants",))
    assert off == names and copies == 0
    assert str(shared) == '#sdy.sharding<@mesh, [{"x", ?}, {"y", ?}]>'
    assert "split-constants" in PASS_NAMES and "merge-constants" in PASS_NAMES


def test_verify_reports_a_bad_sharding_before_a_type_propagation_refuses() -> None:
    """The verifier looks at every op once: a sharding error anywhere comes before a dynamic
    dimension or a tuple, whichever op comes first; those come in op order (a dynamic dim where
    the pin export needs static shapes: propagation alone accepts it)."""
    from shardc.backend.importer import import_text
    from shardc.dialect.errors import ShardingError, VerificationError
    from shardc.dialect.shardings import TensorSharding
    from shardc.passes.pipeline import run_pipeline

    head = 'sdy.mesh @mesh = <["X"=2]>\nfunc.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n'
    const = "  %c = stablehlo.constant dense<8> : tensor<1xi32>\n"
    tuple_op = "  %t = stablehlo.tuple %a : tuple<tensor<8xf32>>\n"
    dynamic = "  %d = stablehlo.dynamic_reshape %a, %c : (tensor<8xf32>, tensor<1xi32>) -> tensor<?xf32>\n"
    neg = "  %n = stablehlo.negate %a : tensor<8xf32>\n"
    tail = "  return %a : tensor<8xf32>\n}\n"
    module = import_text(head + const + tuple_op + neg + tail)
    negate = next(op for op in module.walk() if op.name == "stablehlo.negate")
    negate.results[0].sharding = TensorSharding.open("nowhere", 1)  # (no such mesh)
    with pytest.raises(ShardingError, match="unknown mesh: @nowhere"):
        run_pipeline(module, PipelineOptions())
    with pytest.raises(VerificationError, match="tuple type"):
        shardc.propagate(head + const + tuple_op + dynamic + tail, mode="pin")
    with pytest.raises(VerificationError, match="dynamic dimension"):
        shardc.propagate(head + const + dynamic + tuple_op + tail, mode="pin")
    with pytest.raises(VerificationError, match="tuple type"):
        shardc.propagate(head + const + dynamic + tuple_op + tail)


@pytest.mark.parametrize("subdir", ["import", "manual", "propagate"])
def test_passes_that_keep_the_op_list_add_remove_and_move_no_op(subdir: str) -> None:
    """A pass whose `preserves` holds the op list (`OpList`), or that says `ctx.preserve` in a
    run, leaves the shared op list valid: the module's ops are the same objects in the same
    order."""
    from shardc.backend.importer import import_text
    from shardc.dialect.errors import ShardcError
    from shardc.passes.context import OpList, PassContext

    keeping = {p.name for p in build_pipeline(PipelineOptions()) if OpList in p.preserves}
    assert {"apply-sharding-constraints", "propagate"} <= keeping
    looked_at = 0
    for path in sorted((LIT / subdir).glob("*.mlir")):
        for chunk in path.read_text().split("// -----"):
            if "func.func" not in chunk:
                continue
            try:
                module = import_text(chunk)
            except ShardcError:
                continue
            ctx = PassContext()
            try:
                for p in build_pipeline(PipelineOptions()):
                    before = [id(op) for op in module.walk()]
                    p.run(module, ctx)
                    said = ctx._kept  # (what the pass said it kept this time)
                    if p.name in keeping or (said is not None and OpList in said):
                        assert [id(op) for op in module.walk()] == before, (path.name, p.name)
                        assert ctx.analysis(OpList, module) == list(module.walk())
                        looked_at += 1
                    ctx.invalidate(p.preserves)
                    assert ctx.analysis(OpList, module) == list(module.walk())
            except ShardcError:
                continue  # (a chunk that tests an error)
    assert looked_at > 40


def test_split_constants_hands_on_the_op_list_it_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """split-constants copies ops: the op list the passes share afterwards is the module's
    walk as it is then (each copy right after its original), handed on by the pass (no walk)."""
    from shardc.backend.importer import import_text
    from shardc.dialect.ir import Module
    from shardc.passes.context import OpList, PassContext
    from shardc.passes.import_steps.constants import SplitConstants

    module = import_text("""
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.add %a, %c : tensor<8xf32>
  %1 = stablehlo.multiply %b, %c : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
""")
    ctx = PassContext()
    before = ctx.analysis(OpList, module)
    SplitConstants().run(module, ctx)
    ctx.invalidate(SplitConstants.preserves)
    walked = list(module.walk())

    def no_walk(self: Module) -> None:
        raise AssertionError("the op list was walked again")

    monkeypatch.setattr(Module, "walk", no_walk)
    after = ctx.analysis(OpList, module)
    assert len(walked) == len(before) + 1  # the constant's copy for its second use
    assert len(after) == len(walked) and all(x is y for x, y in zip(after, walked, strict=True))
    assert ctx.has_op(module, "stablehlo.constant")
