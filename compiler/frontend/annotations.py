"""`shardc.constrain(x, spec)`: an in-function sharding constraint with priorities and open dims.

It is a JAX primitive whose MLIR lowering emits a real `sdy.sharding_constraint` (built through
jaxlib's `sdy` dialect by parsing the sharding with an inline mesh, which Shardy lifts to an
`sdy.mesh` symbol). So the same function works three ways: under `shardc.jit` (shardc propagates
from it), under plain `jax.jit` (XLA's Shardy honours it, priorities included) and eagerly (it is
the identity). Under vmap the batch dim is left open; its transpose applies the same constraint
to the cotangent, as `jax.lax.with_sharding_constraint` does.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

from shardc.dialect.errors import ShardingError
from shardc.dialect.shardings import DimSharding, Mesh, TensorSharding
from shardc.frontend import specs
from shardc.frontend.meshes import check_request, explicit_axes

_LOCAL = threading.local()


@contextlib.contextmanager
def tracing_mesh(mesh: Mesh, explicit: frozenset[str] = frozenset()) -> Iterator[None]:
    """The mesh `constrain` uses while `shardc.jit` traces a function (set by the frontend),
    and which of its axes are Explicit."""
    previous: tuple[Mesh | None, frozenset[str]] = (
        getattr(_LOCAL, "mesh", None), getattr(_LOCAL, "explicit", frozenset()))
    _LOCAL.mesh, _LOCAL.explicit = mesh, explicit
    try:
        yield
    finally:
        _LOCAL.mesh, _LOCAL.explicit = previous


def _explicit_axes(explicit: Any, spec: Any) -> frozenset[str]:
    """The Explicit axes of the mesh a constraint is on: the given JAX mesh's, a NamedSharding's,
    shardc.jit's while it traces, else the context mesh's."""
    if explicit is not None:
        return explicit_axes(explicit)
    if type(spec).__name__ == "NamedSharding":
        return explicit_axes(spec.mesh)
    if getattr(_LOCAL, "mesh", None) is not None:
        return getattr(_LOCAL, "explicit", frozenset())  # type: ignore[no-any-return]
    import jax

    return explicit_axes(jax.sharding.get_abstract_mesh())


def current_mesh(explicit: Any = None, spec: Any = None) -> Mesh:
    """The mesh of a constraint: given, from a NamedSharding, from shardc.jit, or JAX's context."""
    if explicit is not None:
        return specs.to_mesh(explicit)
    if type(spec).__name__ == "NamedSharding":
        return specs.to_mesh(spec.mesh)
    mesh = getattr(_LOCAL, "mesh", None)
    if mesh is not None:
        return mesh
    import jax

    abstract = jax.sharding.get_abstract_mesh()
    if abstract is not None and not getattr(abstract, "empty", True):
        return specs.to_mesh(abstract)
    raise ShardingError(
        f"shardc.constrain(x, {spec!r}) has no mesh",
        hint="call it inside shardc.jit, pass mesh=, or run under `with jax.set_mesh(mesh):`",
    )


def constrain(x: Any, spec: Any, mesh: Any = None) -> Any:
    """Constrain the sharding of `x` to `spec` (compact text, PartitionSpec, NamedSharding, ...).

    Open dims (`?`) let propagation add axes; priorities (`p0` strongest) decide conflicts.
    Inside `shardc.jit` the mesh is the jit's. Under plain `jax.jit`, trace inside
    `with jax.set_mesh(mesh):` (axes `Auto`) so that XLA compiles for the mesh and its Shardy
    honours the constraint; `mesh=` alone only writes it (the program then compiles for one
    device). Eagerly this is the identity.
    """
    import jax
    import jax.numpy as jnp

    if not isinstance(x, jax.core.Tracer) and mesh is None and getattr(_LOCAL, "mesh", None) is None:
        abstract = jax.sharding.get_abstract_mesh()
        if abstract is None or getattr(abstract, "empty", True):
            return x  # eager with no mesh anywhere: a constraint means nothing, identity
    the_mesh = current_mesh(mesh, spec)
    shape = tuple(jnp.shape(x))
    sharding = specs.to_sharding(spec, the_mesh, shape, what="shardc.constrain spec", mesh_ref=the_mesh)
    assert sharding is not None
    explicit = _explicit_axes(mesh, spec)
    given = f"shardc.constrain spec = {specs.to_spec(spec, the_mesh, len(shape))}"
    check_request(sharding, the_mesh, explicit, given)
    named = sorted({a.name for d in sharding.dims for a in d.axes} & explicit)
    if named:
        raise ShardingError(
            f"{given} names Explicit axis {', '.join(named)}: on an Explicit axis the sharding is "
            "the value's type, which a constraint does not change",
            hint="change the type with jax.sharding.reshard(x, P(...)), or make the axis Auto "
            "(jax.make_mesh(..., axis_types=(jax.sharding.AxisType.Auto,) * n))",
        )
    return _primitive().bind(x, sharding=sharding)


def _batched(sharding: TensorSharding, bdim: int) -> TensorSharding:
    dims = list(sharding.dims)
    dims.insert(bdim, DimSharding((), False))
    return sharding.with_dims(tuple(dims))


@cache
def _primitive() -> Any:
    from jax.extend.core import Primitive
    from jax.interpreters import ad, batching, mlir

    prim = Primitive("shardc_constraint")
    prim.def_impl(lambda x, *, sharding: x)
    prim.def_abstract_eval(lambda x, *, sharding: x)

    def lowering(ctx: Any, x: Any, *, sharding: TensorSharding) -> list[Any]:
        from jax._src.lib.mlir import ir
        from jax._src.lib.mlir.dialects import sdy

        attr = ir.Attribute.parse(str(sharding))
        return [sdy.ShardingConstraintOp(x, attr).result]

    def batch_rule(args: Any, dims: Any, *, sharding: TensorSharding) -> Any:
        (x,), (d,) = args, dims
        if d is None:
            return prim.bind(x, sharding=sharding), d
        return prim.bind(x, sharding=_batched(sharding, d)), d

    def transpose(ct: Any, x: Any, *, sharding: TensorSharding) -> list[Any]:
        return [prim.bind(ad.instantiate_zeros(ct), sharding=sharding)]

    mlir.register_lowering(prim, lowering)
    batching.primitive_batchers[prim] = batch_rule
    ad.deflinear2(prim, transpose)
    return prim
