"""shardc's own pretty printer (dialect/text/pretty_printer.py) prints byte for byte what jaxlib prints
from shardc's generic text, on every program, every lit input, imported and propagated; what it
does not know falls back to jaxlib."""

from __future__ import annotations

import pytest

from shardc.backend import mlir_bridge
from shardc.backend.exporter import export_text, to_jax_module
from shardc.backend.importer import import_text
from shardc.dialect.ir import Module
from shardc.dialect.text import Unsupported, print_pretty
from shardc.dialect.text.formats import FORMATS
from shardc.passes.pipeline import PipelineOptions, run_pipeline

from .every_format import UNCOVERED, every_format_text
from .programs import PROGRAMS, lit_inputs, lowered_text


def _through_jaxlib(module: Module) -> str:
    return mlir_bridge.pretty_text(to_jax_module(module))


def _check(module: Module) -> bool:
    """print_pretty equals jaxlib's print where it prints; False where it falls back."""
    try:
        mine = print_pretty(module)
    except Unsupported:
        return False
    assert mine == _through_jaxlib(module)
    return True


def _imported_and_propagated(text: str, name: str) -> list[Module]:
    out = [import_text(text, name)]
    propagated = import_text(text, name)
    try:
        run_pipeline(propagated, PipelineOptions())
    except Exception:  # noqa: BLE001 - inputs that are errors by design: imported form only
        return out
    return [*out, propagated]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_print_as_jaxlib_does(name: str) -> None:
    for module in _imported_and_propagated(lowered_text(name), name):
        _check(module)


def test_the_printer_covers_what_jax_lowers_a_model_to() -> None:
    # guards the suite: the checks above must not all be fallbacks
    covered = [n for n in ("mlp", "transformer_layer", "grad") if n in PROGRAMS]
    assert covered
    for name in covered:
        for module in _imported_and_propagated(lowered_text(name), name):
            assert _check(module), name


def test_lit_inputs_print_as_jaxlib_does() -> None:
    printed = 0
    for name, text in lit_inputs():
        try:
            modules = _imported_and_propagated(text, name)
        except Exception:  # noqa: BLE001 - error cases of the lit suite
            continue
        printed += sum(_check(m) for m in modules)
    assert printed >= 40


def test_loops_convolutions_and_reducers_print_as_jaxlib_does() -> None:
    # regions printed in full: a while's cond/do (iterArg names, constants named after the
    # enclosing function's), a convolution's window, a scan's calls inside a loop body
    for name in ("fori_loop", "scan", "conv"):
        for module in _imported_and_propagated(lowered_text(name), name):
            assert _check(module), name


def test_a_reduce_with_a_reducer_region_prints_as_jaxlib_does() -> None:
    # argmax: two inputs, a reducer body of compares and selects (`reducer(%arg1: ..)`), its
    # block arguments numbered after the function's; inside a loop body, after the loop's
    import jax
    import jax.numpy as jnp

    def f(x: jax.Array) -> jax.Array:
        def body(i: jax.Array, acc: jax.Array) -> jax.Array:
            return acc + jnp.argmax(x + i.astype(x.dtype), axis=-1)

        return jnp.argmax(x, axis=1) + jax.lax.fori_loop(0, 3, body, jnp.zeros(8, jnp.int32))

    text = jax.jit(f).lower(jax.ShapeDtypeStruct((8, 16), jnp.float32)).as_text()
    assert "reducer(" in text
    exported = import_text(text, "argmax")
    run_pipeline(exported, PipelineOptions(export="annotate"))
    for module in (import_text(text, "argmax"), exported):
        assert _check(module)


def test_unknown_ops_fall_back_to_jaxlib() -> None:
    text = lowered_text("sort")  # a stablehlo.sort: an op the printer does not write
    module = import_text(text, "sort")
    with pytest.raises(Unsupported):
        print_pretty(module)
    assert export_text(module) == _through_jaxlib(module)


def test_attribute_dictionaries_print_sorted() -> None:
    # shardc appends sdy.sharding after attributes it kept; MLIR prints dictionaries sorted
    text = """
module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 {zz.mark = 1 : i32, aa.mark = 2 : i32} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
    module = import_text(text)
    (neg,) = [op for op in module.walk() if op.name == "stablehlo.negate"]
    from shardc.dialect.shardings import TensorSharding

    neg.results[0].sharding = TensorSharding.open("mesh", 1)
    assert _check(module)
    assert "{aa.mark = 2 : i32, sdy.sharding" in print_pretty(module)


def test_every_format_prints_as_jaxlib_does() -> None:
    # imported, and propagated (every attribute dictionary then holds result shardings)
    modules = _imported_and_propagated(every_format_text(), "every")
    assert len(modules) == 2
    for module in modules:
        assert _check(module)
    # guards the table: a format without an op in the module is not checked
    written = {op.name for op in modules[0].walk()}
    assert set(FORMATS) - set(UNCOVERED) <= written


def test_constant_names_restart_per_function_and_share_one_conflict_counter() -> None:
    text = """
module @m {
  func.func public @main(%arg0: tensor<f32>) -> tensor<f32> {
    %a = stablehlo.constant dense<1.0> : tensor<f32>
    %b = stablehlo.constant dense<2.0> : tensor<f32>
    %o = call @g(%a) : (tensor<f32>) -> tensor<f32>
    %p = stablehlo.add %o, %b : tensor<f32>
    return %p : tensor<f32>
  }
  func.func private @g(%arg0: tensor<f32>) -> tensor<f32> {
    %a = stablehlo.constant dense<1.0> : tensor<f32>
    %b = stablehlo.constant dense<2.0> : tensor<f32>
    %c = stablehlo.constant dense<2> : tensor<i32>
    %d = stablehlo.constant dense<true> : tensor<i1>
    return %b : tensor<f32>
  }
}
"""
    module = import_text(text)
    assert _check(module)
    out = print_pretty(module)
    assert "%cst_0 = " in out and "%c = " in out and "%c_1 = " in out
