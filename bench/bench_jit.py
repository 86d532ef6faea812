"""Benchmark: `shardc.jit` lower + compile against `jax.jit` lower + compile, same shardings.

The workload is a train step (forward, loss, `jax.grad`, SGD update) of the N-layer transformer
stack of bench/common.py with seed 003's 2D shardings on the 2x4 mesh of 8 virtual CPU devices,
given to both as in/out shardings. Each side is timed from a fresh wrapper (so no cache is hit)
through `.lower(...)` and `.compile()`; best of k after one warm-up. shardc's time includes its
own import, propagation and export, and XLA's compile of the exported (`pin`) module.

The Flax row (`--flax`, labelled `24f`) is a linen transformer train step with AdamW whose
parameters carry logical axis names, sharded as a Flax user shards them.

    python bench/bench_jit.py [--k 3] [--layers 4,24] [--stack identical|distinct|both|none]
                              [--flax] [--clock wall|cpu|thread] [--breakdown]

`--breakdown` adds, per row, each side's best time of `.lower()` and `.compile()` and shardc's
steps inside them (JAX's trace and lowering, the import of JAX's module, the pipeline, the `pin`
export and the question it asks jaxlib's Shardy, the module for XLA: written onto JAX's module,
or printed and parsed, XLA's compile), the best of k of each step on its own, and each side's
time outside XLA's compile (lower + compile - XLA compile, per run): the wrapper's own work.
`--clock thread` times the calling thread's CPU only: each side's own work on the caller's
thread (JAX's trace and lowering, and for shardc its import, pipeline, export and the question
to Shardy), without XLA's compile where it runs on threads of its own (shardc's speculative
compile does).
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


def _flax_train_step_args(n_layers: int) -> tuple:
    """A Flax (linen) train step: embedding, n blocks (layer norm, multi-head attention, GELU
    MLP, residuals), logits; softmax cross-entropy, `jax.value_and_grad`, optax AdamW. The
    parameters carry logical axis names (`nn.with_logical_partitioning`), made mesh shardings
    by `nn.logical_to_mesh_sharding`, as a Flax user writes them; the optimizer state is left
    to each compiler (None), the tokens are batch-sharded."""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import linen as nn
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    vocab, embed, seq, batch, heads, hidden = 64, common.D_MODEL, common.SEQ, common.BATCH, 4, 128
    rules = (("batch", "X"), ("embed", None), ("mlp", "Y"), ("vocab", "Y"), ("heads", "Y"))
    part = nn.with_logical_partitioning

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.LayerNorm()(x)
            y = nn.MultiHeadDotProductAttention(
                num_heads=heads, qkv_features=embed, use_bias=False,
                kernel_init=part(nn.initializers.lecun_normal(), ("embed", "heads", None)),
            )(y)
            x = x + y
            y = nn.Dense(hidden, kernel_init=part(nn.initializers.lecun_normal(),
                                                  ("embed", "mlp")))(nn.LayerNorm()(x))
            return x + nn.Dense(embed, kernel_init=part(nn.initializers.lecun_normal(),
                                                        ("mlp", "embed")))(nn.gelu(y))

    class Model(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            x = nn.Embed(vocab, embed, embedding_init=part(nn.initializers.normal(0.5),
                                                           ("vocab", "embed")))(tokens)
            for _ in range(n_layers):
                x = Block()(x)
            return nn.Dense(vocab)(nn.LayerNorm()(x))

    model = Model()
    tx = optax.adamw(1e-3)
    tokens = jax.ShapeDtypeStruct((batch, seq), jnp.int32)
    boxed = jax.eval_shape(model.init, jax.random.key(0), tokens)["params"]
    params = nn.unbox(boxed)
    opt_state = jax.eval_shape(tx.init, params)
    m = common.mesh()
    with nn.logical_axis_rules(rules):
        param_sh = nn.logical_to_mesh_sharding(nn.get_partition_spec(boxed), m, rules)
    tok_sh = NamedSharding(m, P("X", None))

    def new_step():
        def step(params, opt_state, tokens):
            def loss_fn(p):
                logits = model.apply({"params": p}, tokens)
                return optax.softmax_cross_entropy_with_integer_labels(
                    logits[:, :-1], tokens[:, 1:]).mean()

            loss, grads = jax.value_and_grad(loss_fn)(params)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        return step

    return new_step, (params, opt_state, tokens), (param_sh, None, tok_sh), (param_sh, None, None)


def time_once(make, args, clock, steps: dict[str, float] | None = None) -> float:
    t0 = clock()
    lowered = make().lower(*args)
    t1 = clock()
    lowered.compile()
    t2 = clock()
    if steps is not None:
        steps["lower"] = t1 - t0
        steps["compile"] = t2 - t1
        if "XLA compile" in steps:
            # the wrapper's own work: all but XLA's compile (steadier than the total, whose
            # XLA part varies most on a loaded machine)
            steps["outside XLA"] = t2 - t0 - steps["XLA compile"]
    return t2 - t0


# shardc's steps: (label, module, attribute) of the functions `--breakdown` times
STEPS = (
    ("JAX trace+lower", "jax.stages", "Traced.lower"),
    ("import", "shardc.backend.importer", "import_generic"),
    ("pipeline", "shardc.api.jitted", "Jitted.run_pipeline"),
    ("pin export", "shardc.api.exported", "export_copy"),
    ("pin export", "shardc.api.exported", "export_in_place"),
    ("Shardy oracle (in pin export)", "shardc.backend.xla_form", "ShardyOracle.__call__"),
    ("module for XLA", "shardc.api.jax_compile", "_module_for_xla"),
    ("XLA compile", "jax.stages", "Lowered.compile"),
)


def instrument(clock, steps: dict[str, float]) -> None:
    """Wrap each of `STEPS` so that a call adds its time to `steps[label]` (a call made inside
    another of the same label is counted once, in the outer one)."""
    import functools
    import importlib

    active: set[str] = set()
    for label, mod, attr in STEPS:
        owner = importlib.import_module(mod)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        fun = getattr(owner, name)

        @functools.wraps(fun)
        def timed(*a, _fun=fun, _label=label, **kw):
            if _label in active:
                return _fun(*a, **kw)
            active.add(_label)
            t0 = clock()
            try:
                return _fun(*a, **kw)
            finally:
                steps[_label] = steps.get(_label, 0.0) + clock() - t0
                active.discard(_label)

        setattr(owner, name, timed)
    # the API modules import these functions by name: point their names at the timed ones
    import shardc.api.exported
    import shardc.api.jax_compile
    import shardc.api.jitted
    import shardc.backend.importer

    shardc.api.jitted.export_copy = shardc.api.exported.export_copy
    shardc.api.jitted.export_in_place = shardc.api.exported.export_in_place
    shardc.api.jitted.import_generic = shardc.backend.importer.import_generic
    shardc.api.jax_compile.import_generic = shardc.backend.importer.import_generic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=3, help="runs per measurement (best is reported)")
    ap.add_argument("--layers", default="4,24", help="comma-separated stack depths")
    ap.add_argument(
        "--stack",
        default="identical",
        choices=("identical", "distinct", "both", "none"),
        help="identical layers, distinct layers (head_dim 8+i, hidden 128+4i), both, or none",
    )
    ap.add_argument("--flax", action="store_true",
                    help="also a Flax (linen) train step of each depth, rows labelled `f`")
    ap.add_argument(
        "--clock",
        default="wall",
        choices=("wall", "cpu", "thread"),
        help="wall-clock seconds, or the process's CPU seconds (all threads; steadier on a "
        "shared machine, but XLA compiles on several threads, so not the time a user waits), "
        "or the calling thread's CPU seconds (each side's own work on the caller's thread)",
    )
    ap.add_argument("--breakdown", action="store_true",
                    help="also each side's lower and compile times and shardc's steps")
    args = ap.parse_args(argv)

    import jax

    import shardc

    clock = {"wall": time.perf_counter, "cpu": time.process_time, "thread": time.thread_time}[
        args.clock
    ]
    steps: dict[str, float] = {}
    if args.breakdown:
        instrument(clock, steps)
    kinds = {"identical": ("identical",), "distinct": ("distinct",),
             "both": ("identical", "distinct"), "none": ()}[args.stack]
    kinds += ("flax",) if args.flax else ()
    print(f"# shardc.jit vs jax.jit, lower + compile of a train step ({common.rng_note()}, "
          f"best of {args.k}, {args.clock} clock)")
    print(f"{'layers':>6} {'jax.jit s':>10} {'shardc.jit s':>13} {'ratio':>6}")
    for n in (int(s) for s in args.layers.split(",")):
        for kind in kinds:
            label = f"{n}" + {"identical": "", "distinct": "d", "flax": "f"}[kind]
            if kind == "flax":
                new_step, sargs, in_sh, out_sh = _flax_train_step_args(n)
            else:
                new_step, sargs, in_sh, out_sh = _train_step_args(n, kind == "distinct")

            def make_jax(new_step=new_step, in_sh=in_sh, out_sh=out_sh):
                return jax.jit(new_step(), in_shardings=in_sh, out_shardings=out_sh)

            def make_shardc(new_step=new_step, in_sh=in_sh, out_sh=out_sh):
                return shardc.jit(new_step(), mesh=common.mesh(), in_shardings=in_sh,
                                  out_shardings=out_sh)

            results = {}
            best: dict[str, dict[str, float]] = {}
            for name, make in (("jax", make_jax), ("shardc", make_shardc)):
                time_once(make, sargs, clock)  # warm up
                times = []
                for _ in range(args.k):
                    steps.clear()
                    times.append(time_once(make, sargs, clock, steps))
                    mine = best.setdefault(name, {})
                    for step, t in steps.items():
                        mine[step] = min(mine.get(step, t), t)
                results[name] = min(times)
            ratio = results["shardc"] / results["jax"]
            print(f"{label:>6} {results['jax']:>10.3f} {results['shardc']:>13.3f} {ratio:>6.2f}",
                  flush=True)
            if args.breakdown:
                for name in ("jax", "shardc"):
                    print(f"{'':>6} {name}: " + ", ".join(
                        f"{step} {t:.3f}" for step, t in best[name].items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
