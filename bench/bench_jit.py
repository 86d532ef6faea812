"""Benchmark: `shardc.jit` lower + compile against `jax.jit` lower + compile, same shardings.

The workload is a train step (forward, loss, `jax.grad`, SGD update) of the N-layer transformer
stack of bench/common.py with seed 003's 2D shardings on the 2x4 mesh of 8 virtual CPU devices,
given to both as in/out shardings. Each side is timed from a fresh wrapper (so no cache is hit)
through `.lower(...)` and `.compile()`; best of k after one warm-up. shardc's time includes its
own import, propagation and export, and XLA's compile of the exported (`pin`) module.

    python bench/bench_jit.py [--k 3] [--layers 4,24] [--stack identical|distinct|both]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402


def _train_step_args(n_layers: int, distinct: bool) -> tuple:
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    m = common.mesh()
    specs = [common._param_specs(hd, hid) for hd, hid in common.layer_sizes(n_layers, distinct)]
    params = [
        {k: jax.ShapeDtypeStruct(shape, jnp.float32) for k, (shape, _) in spec.items()}
        for spec in specs
    ]
    param_sh = [{k: NamedSharding(m, ps) for k, (_, ps) in spec.items()} for spec in specs]
    x = jax.ShapeDtypeStruct((common.BATCH, common.SEQ, common.D_MODEL), jnp.float32)
    x_sh = NamedSharding(m, P("X", None, "Y"))

    def new_step():
        # a fresh function per wrapper, so neither side hits a cache keyed on the function
        def step(x, params):
            def loss(params):
                h = x
                for p in params:
                    h = common._layer(h, p)
                return jnp.mean(h * h)

            g = jax.grad(loss)(params)
            return jax.tree.map(lambda p, d: p - 1e-3 * d, params, g)

        return step

    return new_step, (x, params), (x_sh, param_sh), param_sh


def time_once(make, args) -> float:
    t0 = time.perf_counter()
    make().lower(*args).compile()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=3, help="runs per measurement (best is reported)")
    ap.add_argument("--layers", default="4,24", help="comma-separated stack depths")
    ap.add_argument(
        "--stack",
        default="identical",
        choices=("identical", "distinct", "both"),
        help="identical layers, distinct layers (head_dim 8+i, hidden 128+4i), or both",
    )
    args = ap.parse_args(argv)

    import jax

    import shardc

    kinds = ("identical", "distinct") if args.stack == "both" else (args.stack,)
    print(f"# shardc.jit vs jax.jit, lower + compile of a train step ({common.rng_note()}, "
          f"best of {args.k})")
    print(f"{'layers':>6} {'jax.jit s':>10} {'shardc.jit s':>13} {'ratio':>6}")
    for n in (int(s) for s in args.layers.split(",")):
        for kind in kinds:
            label = f"{n}" if kind == "identical" else f"{n}d"
            new_step, sargs, in_sh, out_sh = _train_step_args(n, kind == "distinct")

            def make_jax(new_step=new_step, in_sh=in_sh, out_sh=out_sh):
                return jax.jit(new_step(), in_shardings=in_sh, out_shardings=out_sh)

            def make_shardc(new_step=new_step, in_sh=in_sh, out_sh=out_sh):
                return shardc.jit(new_step(), mesh=common.mesh(), in_shardings=in_sh,
                                  out_shardings=out_sh)

            results = {}
            for name, make in (("jax", make_jax), ("shardc", make_shardc)):
                time_once(make, sargs)  # warm up
                results[name] = min(time_once(make, sargs) for _ in range(args.k))
            ratio = results["shardc"] / results["jax"]
            print(f"{label:>6} {results['jax']:>10.3f} {results['shardc']:>13.3f} {ratio:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
