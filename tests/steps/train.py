"""The training step most models here share: `value_and_grad` of a loss, gradient clipping
and AdamW over the trainable parameters, the optimizer's moments sharded like them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import optax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .common import fill, optimizer, path_name
from .harness import Step


def like_params(state: Any, params: Any, param_specs: Any) -> Any:
    """A spec per leaf of an optimizer state: the spec of the parameter whose path ends its
    own (`1/0/mu/layers/0/wq` takes `layers/0/wq`'s), replicated for scalars (the step
    count)."""
    by_path = {path_name(p): s for (p, _), s in zip(
        jax.tree_util.tree_flatten_with_path(params)[0],
        jax.tree.leaves(param_specs, is_leaf=lambda s: isinstance(s, P)), strict=True)}

    def spec(path: Any, leaf: Any) -> P:
        if not np.shape(leaf):
            return P()
        name = path_name(path)
        for suffix in sorted(by_path, key=len, reverse=True):
            if name == suffix or name.endswith("/" + suffix):
                return by_path[suffix]
        raise ValueError(f"optimizer state {name} matches no parameter")

    return jax.tree_util.tree_map_with_path(spec, state)


def adamw_step(
    name: str,
    mesh: Mesh,
    loss: Callable[..., jax.Array],
    params: Any,
    param_specs: Any,
    data: tuple[Any, ...],
    data_specs: tuple[Any, ...],
    make_data: Callable[[], tuple[Any, ...]],
    make_params: Callable[[Any], Any] | None = None,
    donate: bool = True,
    **tolerances: float,
) -> Step:
    """The step `(params, opt_state, *data) -> (params, opt_state, loss)` of `loss(params,
    *data)`. `params`/`data` are the abstract arguments (`ShapeDtypeStruct`s); the concrete
    parameters are `make_params(params)` (default `fill(params, 0)`), the data `make_data()`.
    `donate`: the parameters and optimizer state are donated, as training loops do."""
    tx = optimizer()
    opt_state = jax.eval_shape(tx.init, params)
    state_specs = (param_specs, like_params(opt_state, params, param_specs))
    init_state = jax.jit(tx.init)

    def train_step(params: Any, opt_state: Any, *data: Any) -> tuple[Any, Any, jax.Array]:
        value, grads = jax.value_and_grad(loss)(params, *data)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    def init() -> tuple[Any, ...]:
        concrete = make_params(params) if make_params else fill(params, 0)
        return (concrete, init_state(concrete), *make_data())

    return Step(name, train_step, mesh, (params, opt_state, *data), init,
                (*state_specs, *data_specs), (*state_specs, P()),
                donate_argnums=(0, 1) if donate else (), **tolerances)
