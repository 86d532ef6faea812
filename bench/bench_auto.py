"""Benchmark: automatic sharding against hand-written layouts, and the solve time of a stack.

Part 1 (the table): for each program of tests/auto_programs.py (MLP train step, transformer layer
train step, MLP forward) on a 4x2 mesh (data=4, model=2), with only the input batch annotated,
every hand-written layout (DP+megatron, FSDP, FSDP+TP, seed 003's 2D layout) and auto at each
budget are compiled with XLA in their pinned form on 8 virtual CPU devices: collective bytes per
device (per collective, the larger of operand and result; the plan's measure), XLA's
memory_analysis (arguments + outputs + temporaries) and whether the numbers match the unsharded
run. `ratio` is auto's bytes over the best hand-written layout that fits the same budget.

Part 2: the auto pass alone on an N-layer stack of the transformer layer's forward pass with
only the batch annotated (no XLA): nodes, nodes tied to repeated layers, seconds, method.

    python bench/bench_auto.py [--layers 8,32] [--skip-table]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import common  # noqa: E402,F401 - sets the 8 virtual devices before jax is imported
import numpy as np  # noqa: E402

from tests.auto_programs import (  # noqa: E402
    MESH,
    TB,
    TD,
    TE,
    TF,
    TH,
    TS,
    _layer,
    measure,
    programs,
    reference,
)

BUDGETS = {
    "MLP train step": ["2MB", "1MB"],
    "transformer train step": ["500KB", "350KB"],
    "MLP forward": ["1MB", "600KB", "400KB"],
}


def _kib(n: int) -> str:
    return f"{n / 1024:8.1f}"


def table() -> None:
    print(
        "| program | layout | budget | collective KiB | XLA memory KiB | fits | numbers | ratio |"
    )
    print("| --- | --- | --- | ---: | ---: | --- | --- | ---: |")
    for prog in programs():
        ref = reference(prog)

        def ok(outs: list[np.ndarray], ref: list[np.ndarray] = ref) -> str:
            same = all(
                np.allclose(a, b, rtol=2e-4, atol=2e-4) for a, b in zip(outs, ref, strict=True)
            )
            return "ok" if same else "WRONG"

        rows = {"batch only (replicated weights)": measure(prog, prog.batch_only)}
        rows.update({k: measure(prog, i, o) for k, (i, o) in prog.hand.items()})
        for k, m in rows.items():
            print(
                f"| {prog.name} | {k} | - | {_kib(m.bytes)} | {_kib(m.memory)} | - | {ok(m.outputs)} | |"
            )
        from shardc.passes.auto.cost import parse_size

        for budget in BUDGETS[prog.name]:
            b = parse_size(budget)
            t0 = time.perf_counter()
            m = measure(prog, prog.batch_only, auto=True, memory_budget=budget)
            secs = time.perf_counter() - t0
            fits = {k: r.bytes for k, r in rows.items() if r.memory <= b and k in prog.hand}
            best = min(fits.values()) if fits else None
            ratio = f"{m.bytes / best:.2f}" if best else "n/a"
            name = min(fits, key=fits.__getitem__) if fits else "none fits"
            print(
                f"| {prog.name} | auto ({secs:.0f} s incl. XLA checks) | {budget} | {_kib(m.bytes)} "
                f"| {_kib(m.memory)} | {'yes' if m.memory <= b else 'NO'} | {ok(m.outputs)} "
                f"| {ratio} vs {name} |"
            )


def stack(n_layers: int) -> None:
    import jax

    import shardc
    from shardc.api.propagate import propagate_module
    from shardc.backend.importer import import_module
    from shardc.frontend.tracing import trace_function
    from shardc.passes.propagation.options import PropagationOptions

    shapes = {"wq": (TE, TH, TD), "wk": (TE, TH, TD), "wv": (TE, TH, TD), "wo": (TH, TD, TE),
              "w_in": (TE, TF), "w_out": (TF, TE)}  # fmt: skip
    params = [{k: jax.ShapeDtypeStruct(s, np.float32) for k, s in shapes.items()}
              for _ in range(n_layers)]  # fmt: skip
    x = jax.ShapeDtypeStruct((TB, TS, TE), np.float32)

    def forward(ps: list, x: object) -> object:
        for p in ps:
            x = _layer(p, x)
        return x

    mesh = shardc.jit(forward, mesh=MESH).mesh
    traced = trace_function(forward, (params, x), mesh, (), (None, "data, _, _"), None)
    module = import_module(traced.module, "stack")
    from shardc.passes.auto.graph import Kept

    kept = Kept.snapshot(module)
    propagate_module(module, PropagationOptions())
    t0 = time.perf_counter()
    from shardc.passes.auto.auto_sharding import AutoShardingPass

    report = AutoShardingPass(memory_budget=None, time_limit=60).run(module, kept)
    secs = time.perf_counter() - t0
    f = report.functions[0]
    print(f"| {n_layers} | {f.nodes} | {f.tied_nodes} | {f.strategies} | {secs:.1f} | {f.method} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="8,32")
    ap.add_argument("--skip-table", action="store_true")
    args = ap.parse_args()
    if not args.skip_table:
        table()
        print()
    print("| layers | nodes | tied | strategies | auto seconds | method |")
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    for n in (int(v) for v in args.layers.split(",")):
        stack(n)


if __name__ == "__main__":
    main()
