"""Driver tests: fixed point proven by a confirming sweep, reports, options exposed on the CLI."""

import glob
import os
from dataclasses import fields

import pytest

from shardc.importer import import_text
from shardc.passes.propagation.driver import Propagator, all_shardings
from shardc.passes.propagation.options import PropagationOptions

HERE = os.path.dirname(__file__)
GOLDENS = sorted(glob.glob(os.path.join(HERE, "lit", "propagate", "*.mlir")))
MLP = os.path.join(HERE, "..", "examples", "mlp.mlir")


def _confirm_fixed_point(text: str, options: PropagationOptions) -> None:
    module = import_text(text)
    prop = Propagator(module, options)
    prop.build()
    prop.run(write_back=False)
    before = {k: str(v) for k, v in all_shardings(module)}
    assert prop.confirming_sweep() == 0, "the confirming sweep changed a sharding"
    assert {k: str(v) for k, v in all_shardings(module)} == before


@pytest.mark.parametrize("path", [*GOLDENS, MLP], ids=os.path.basename)
def test_fixed_point(path: str) -> None:
    text = open(path).read()
    _confirm_fixed_point(text, PropagationOptions())


def test_fixed_point_basic() -> None:
    _confirm_fixed_point(open(MLP).read(), PropagationOptions(strategy="basic"))


def test_report_names_ops_without_rules() -> None:
    text = open(os.path.join(HERE, "lit", "propagate", "ops.mlir")).read()
    from shardc.api_propagate import propagate_module

    report = propagate_module(import_text(text))
    assert "stablehlo.custom_call" in report.ops_without_rules
    assert report.rounds[0].startswith("p0")


def test_origins_recorded() -> None:
    from shardc.api_propagate import propagate_module

    report = propagate_module(import_text(open(MLP).read()), PropagationOptions(debug_origins=True))
    assert report.origins is not None
    lines = report.origins.lines()
    assert any("annotation" in line for line in lines)
    assert any("stablehlo.dot_general" in line for line in lines)


def test_every_option_is_a_cli_flag() -> None:
    import argparse

    from shardc.tools import cmd_propagate

    parser = argparse.ArgumentParser()
    cmd_propagate.add_arguments(parser)
    args = parser.parse_args(["x.mlir"])
    opts = cmd_propagate.options_from_args(args)
    assert opts == PropagationOptions()
    for f in fields(PropagationOptions):
        assert hasattr(args, f.name), f.name


def test_mlp_dot_chain() -> None:
    import shardc

    out = shardc.propagate(open(MLP).read())
    assert '[{"data"}, {"model"}]' in out  # first dot result: batch on data, hidden on model
