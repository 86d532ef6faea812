"""XLA's dead-code pass removes a constraint nothing reads (a `Sharding` custom call without
effects) before its own Shardy runs: an argument written without a sharding and read only
through such a constraint compiles replicated. The `pin` export's oracle must say so too, or
the export sees agreement where XLA lays the argument out otherwise (random programs did this:
an unused `with_sharding_constraint` of a transpose of an argument)."""

from __future__ import annotations

import jax
from jax._src.lib import xla_client as xc

import shardc
from shardc.backend.importer import import_text
from shardc.backend.xla import compile_text
from shardc.backend.xla_form import ShardyOracle
from shardc.passes.propagation.unit_builder import dead_ops

TEXT = """
sdy.mesh @mesh = <["X"=4, "Y"=2]>
func.func public @main(%arg0: tensor<16x8xf32>,
                       %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {}]>})
    -> tensor<16x8xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"Y"}, {"X"}]> : tensor<8x16xf32>
  %2 = stablehlo.negate %arg1 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}
"""


def test_an_unused_constraint_is_dead_code_to_xla() -> None:
    module = import_text(TEXT, "<t>")
    names = {op.name for op in module.walk() if id(op) in dead_ops(module, xla=True)}
    assert names == {"stablehlo.transpose", "sdy.sharding_constraint"}
    # Shardy's own pipeline keeps it (what `propagate` without XLA's dead code models)
    assert not dead_ops(module)


def test_the_oracle_answers_what_xla_compiles_for_an_unannotated_argument() -> None:
    exe = compile_text(TEXT, jax.devices()[:8])
    compiled = xc.HloSharding.from_proto(exe.get_parameter_shardings()[0])
    assert compiled.is_replicated()
    answers = []

    class Recording(ShardyOracle):
        def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            got = super().__call__(*args, **kwargs)
            answers.append(got)
            return got

    from shardc.passes.export import export_module

    module = import_text(shardc.propagate(TEXT, options=shardc.PropagationOptions(
        xla_dead_code=True, keep_open=True)), "<t>")  # fmt: skip
    export_module(module, "pin", oracle=Recording())
    assert answers and answers[0].args["main"][0] is None  # replicated, as XLA compiles it
