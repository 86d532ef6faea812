"""Compile MLIR text with XLA on the virtual CPU devices and read back what XLA did."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")


def compile_text(text: str, num_partitions: int = 8) -> Any:
    """Compile StableHLO + sdy text for `num_partitions` CPU devices; return the executable."""
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import xla_client as xc
    from jax._src.lib.mlir import ir

    backend = xla_bridge.get_backend("cpu")
    devices = backend.devices()[:num_partitions]
    with jmlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        main = next(
            op
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.attributes["sym_name"]).value == "main"
        )
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        opts = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=num_partitions,
            device_assignment=np.array(devices).reshape(1, num_partitions),
            backend=backend,
        )
        build = opts.executable_build_options
        build.allow_spmd_sharding_propagation_to_parameters = [False] * len(ftype.inputs)
        build.allow_spmd_sharding_propagation_to_output = [False] * len(ftype.results)
        return backend.compile_and_load(module, xc.DeviceList(tuple(devices)), opts)


def collective_counts(exe: Any) -> dict[str, int]:
    hlo = exe.hlo_modules()[0].to_string()
    return {c: len(re.findall(r"\s" + c + r"(-start)?\(", hlo)) for c in COLLECTIVES}
