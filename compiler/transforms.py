"""A `shardc.jit` function called under a JAX trace: `jax.jit`, `grad`, `vmap`, `checkpoint`,
a `scan`/`fori_loop` body, or another `shardc.jit` being traced.

There the arguments are tracers, nothing can be compiled on its own, and the right behaviour is
`jax.jit`'s for an inner call: the function's computation becomes part of the outer program, as
an inner `jax.jit` (a `pjit` equation JAX knows how to differentiate, batch and lower), with its
`in_shardings`/`out_shardings` written as sharding constraints on its inputs and outputs
(`shardc.constrain`, so open dims and priorities are kept and the outer propagation, shardc's or
XLA's Shardy, sees them). Donation means nothing inside a trace and is ignored, as in JAX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shardc.dialect.shardings import TensorSharding

if TYPE_CHECKING:
    from .jitted import Jitted


def is_traced(tree: Any) -> bool:
    """Whether the call happens inside a JAX trace: a leaf of `tree` is a tracer, or JAX is
    tracing (a `scan` body that closes over concrete arrays passes no tracer)."""
    import jax

    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(tree)):
        return True
    try:
        from jax._src import core
    except ImportError:  # pragma: no cover - a jax without the private module
        return False
    clean = getattr(core, "trace_state_clean", None)
    return clean is not None and not clean()


def _constrain_all(
    values: Any, given: Any, mesh: Any, label: str, paths: list[str] | None = None
) -> Any:
    """`values` with each leaf constrained to its spec in `given` (a pytree prefix or None)."""
    import jax

    from .annotations import constrain
    from .calling import check_divisible, leaf_paths
    from .frontend import flat_shardings

    if given is None:
        return values
    leaves, tree = jax.tree.flatten(values)
    avals = [jax.ShapeDtypeStruct(jax.numpy.shape(v), jax.numpy.result_type(v)) for v in leaves]
    abstract = jax.tree.unflatten(tree, avals)
    shardings: list[TensorSharding | None] = flat_shardings(given, abstract, avals, mesh, label, mesh)
    if paths is None:
        paths = leaf_paths(abstract, "output")
    for s, a, path in zip(shardings, avals, paths, strict=True):
        check_divisible(s, tuple(a.shape), mesh, f"{path} ({label} = {s.body() if s else None})")
    out = [v if s is None else constrain(v, s, mesh=mesh) for v, s in zip(leaves, shardings, strict=True)]
    return jax.tree.unflatten(tree, out)


def traced_call(jitted: Jitted, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call `jitted` inside a JAX trace as an inner `jax.jit` with its shardings as constraints."""
    n = len(args)
    cache = jitted.__dict__.setdefault("_inner_jits", {})
    if n not in cache:
        cache[n] = _inner_jit(jitted, n)
    return cache[n](*args, **kwargs)


def _inner_jit(jitted: Jitted, n: int) -> Any:
    """The inner `jax.jit` for calls with `n` positional arguments (built once, so JAX's own
    cache keeps its traces)."""
    import jax

    from .calling import argument_paths, split_call

    spec = jitted.argspec
    mesh = jitted.mesh
    static_idx = {i % n for i in spec.static_argnums if -n <= i < n}

    def inner(*call_args: Any, **call_kw: Any) -> Any:
        dyn, _, _ = split_call(spec, call_args, call_kw)
        paths = ["argument " + p for p in argument_paths(jitted.fun, call_args, spec, dyn, {})]
        constrained = iter(_constrain_all(dyn, jitted.in_shardings, mesh, "in_shardings", paths))
        full = tuple(
            call_args[i] if i in static_idx else next(constrained) for i in range(len(call_args))
        )
        out = jitted.fun(*full, **call_kw)
        return _constrain_all(out, jitted.out_shardings, mesh, "out_shardings")

    inner.__name__ = getattr(jitted.fun, "__name__", "fun")
    return jax.jit(
        inner,
        static_argnums=tuple(sorted(static_idx)) or None,
        static_argnames=spec.static_argnames or None,
    )
