"""Calling a `shardc.jit` function at `jax.jit`'s speed: JAX's own C++ dispatch.

`jax.jit` returns a C++ object that computes each call's signature (pytree structure, shapes,
dtypes, weak types, committed shardings, static values, JAX's context) and, when it has seen
that signature, places the arguments and runs the executable without entering Python. On a miss
it calls back into Python, which compiles and runs the call and hands back a record of the
executable for next time. `shardc.jit` uses that same object with its own miss handler
(shardc's lowering and compile, `Jitted._miss`) and its own cache (one per function, emptied by
`clear_cache`), so a repeated call costs what a `jax.jit` call costs, at any number of leaves.

Where JAX's private entry points are missing (another JAX version), `make_dispatcher` returns
None and calls take the Python path, which is the miss handler itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallEntry:
    """What a call of one signature runs: JAX's compiled function (placement, donation and
    callbacks are JAX's) and the effects of its jaxpr (the fast path needs them)."""

    compiled: Any  # jax.stages.Compiled
    effects: Any

    def run(self, dyn: tuple[Any, ...], dyn_kw: dict[str, Any], record: bool) -> tuple[Any, Any]:
        """The outputs of a call with these dynamic arguments, and (with `record`) JAX's
        fast-path record of it, or None where JAX runs it only through Python (host
        callbacks, effects, outputs that are not plain arrays)."""
        outs = self.compiled(*dyn, **dyn_kw)
        return outs, (fastpath_data(self, dyn, dyn_kw, outs) if record else None)


def fastpath_data(entry: CallEntry, dyn: tuple[Any, ...], dyn_kw: dict[str, Any],
                  outs: Any) -> Any:
    """JAX's `MeshExecutableFastpathData` of a call, as `jax.jit`'s own miss handler builds
    it; None when JAX would not take the fast path for it, or its internals differ."""
    try:
        from jax._src import pjit, tree_util

        compiled = entry.compiled
        params = compiled._params
        if params.const_args or getattr(params, "is_high", False):
            return None
        args_flat = tree_util.tree_leaves((dyn, dyn_kw))
        out_flat = params.out_tree.flatten_up_to(outs)
        return pjit._get_fastpath_data(
            compiled._executable, params.out_tree, args_flat, out_flat, entry.effects, (),
            None, params.const_args)
    except (AttributeError, ImportError, TypeError, ValueError):
        return None


def make_dispatcher(fun: Callable[..., Any], name: str, miss: Callable[..., Any],
                    static_argnums: tuple[int, ...], static_argnames: tuple[str, ...]
                    ) -> tuple[Any, Any] | None:
    """JAX's C++ dispatch object over `miss` (called as `miss(*args, **kwargs)`, returning
    `(outputs, fast-path record or None, False)`), with a cache of its own; None where this
    JAX has no such object or the arguments cannot be given to it (negative static numbers)."""
    if any(i < 0 for i in static_argnums):
        return None
    try:
        from jax._src import tree_util
        from jax._src.interpreters import pxla
        from jax._src.lib import _jax

        cache = _jax.PjitFunctionCache(capacity=4096)
        dispatcher = _jax.pjit(name, fun, miss, list(static_argnums), list(static_argnames),
                               pxla.JitGlobalCppCacheKeys(), tree_util.dispatch_registry,
                               pxla.cc_shard_arg, cache)
    except (AttributeError, ImportError, TypeError):
        return None
    return dispatcher, cache
