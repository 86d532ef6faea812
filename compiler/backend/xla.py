"""The XLA backend: compile StableHLO + sdy text for a mesh's devices, place inputs, run.

Compiles through jaxlib as docs/xla_boundary.md §4 describes: the module's `@main` with
`num_partitions` = the mesh's device count, propagation to parameters and outputs off where the
module gives their sharding (shardc decided them; `open_io` lets XLA choose the others). Inputs are placed per the executable's parameter shardings, outputs
come back as `jax.Array`s carrying the executable's output shardings (a `NamedSharding` on the
mesh when one expresses it exactly).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shardc.dialect.errors import ShardcError, xla_refused
from shardc.dialect.shardings import Mesh, TensorSharding


def mesh_devices(mesh: Mesh, jax_mesh: Any = None) -> list[Any]:
    """The devices of `mesh` in mesh order; `ShardcError` when the machine has too few."""
    import jax

    if jax_mesh is not None and not _is_abstract(jax_mesh) and hasattr(jax_mesh, "devices"):
        return list(jax_mesh.devices.flat)
    available = jax.devices()
    need = mesh.num_devices
    if need > len(available):
        raise ShardcError(
            f"mesh {mesh.body()} needs {need} devices but this machine has {len(available)} "
            f"({need - len(available)} missing)",
            hint="lowering works for any mesh; to run, use a smaller mesh or a bigger machine "
            "(on CPU: XLA_FLAGS=--xla_force_host_platform_device_count=N before importing jax)",
        )
    devices = available[:need]
    if mesh.device_ids is not None:
        devices = [devices[i] for i in mesh.device_ids]
    return devices


def _is_abstract(jax_mesh: Any) -> bool:
    return type(jax_mesh).__name__ == "AbstractMesh"


def concrete_mesh(mesh: Mesh, devices: list[Any]) -> Any:
    """A `jax.sharding.Mesh` over `devices` with every axis `Auto`."""
    import jax
    import numpy as np
    from jax.sharding import AxisType

    shape = tuple(a.size for a in mesh.axes)
    return jax.sharding.Mesh(
        np.array(devices, dtype=object).reshape(shape),
        mesh.axis_names,
        axis_types=(AxisType.Auto,) * len(shape),
    )


def compile_text(text: str, devices: list[Any], open_io: bool = True) -> Any:
    """Compile MLIR text for `devices` (one partition each); a `ShardcError` if XLA refuses.
    `open_io`: XLA chooses the layout of each `@main` argument and result that carries no
    `sdy.sharding`, as jax.jit lets it for an unspecified in/out sharding (the compiled form
    leaves those as written); off, each keeps what propagation gives it."""
    import numpy as np
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import xla_client as xc
    from jax._src.lib.mlir import ir

    backend = xla_bridge.get_backend(devices[0].platform)
    n = len(devices)
    with jmlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        main = _entry_func(module)
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        opts = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=n,
            device_assignment=np.array(devices).reshape(1, n),
            backend=backend,
        )
        build = opts.executable_build_options
        build.allow_spmd_sharding_propagation_to_parameters = _open(
            main, "arg_attrs", len(ftype.inputs), open_io
        )
        build.allow_spmd_sharding_propagation_to_output = _open(
            main, "res_attrs", len(ftype.results), open_io
        )
        try:
            return backend.compile_and_load(module, xc.DeviceList(tuple(devices)), opts)
        except Exception as e:  # noqa: BLE001 - XLA raises its own runtime errors
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise xla_refused("compile the module", first) from None


def _entry_func(module: Any) -> Any:
    """The func XLA runs: `@main`, or else the module's only public func, renamed `main` (XLA
    enters a module at `@main`; a hand-written module may name its entry otherwise)."""
    from jax._src.lib.mlir import ir

    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    name = {id(f): ir.StringAttr(f.attributes["sym_name"]).value for f in funcs}
    for f in funcs:
        if name[id(f)] == "main":
            return f
    public = [
        f
        for f in funcs
        if "sym_visibility" not in f.attributes
        or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"
    ]
    if len(public) != 1:
        listed = ", ".join("@" + name[id(f)] for f in public) or "none"
        raise ShardcError(
            f"XLA enters a module at @main: this module has no @main and {len(public)} public "
            f"functions ({listed}); name the entry function main"
        )
    public[0].attributes["sym_name"] = ir.StringAttr.get("main")
    return public[0]


def _open(main: Any, key: str, n: int, open_io: bool) -> list[bool]:
    """Per argument/result of `main`: whether XLA may choose its layout (`open_io` and it
    carries no `sdy.sharding`)."""
    from jax._src.lib.mlir import ir

    if not open_io:
        return [False] * n
    attrs = main.attributes[key] if key in main.attributes else None
    return [attrs is None or "sdy.sharding" not in ir.DictAttr(attrs[i]) for i in range(n)]


def jax_sharding(hlo: Any, ndim: int, sharding: TensorSharding | None, mesh: Any) -> Any:
    """A JAX sharding equal to `hlo`: the `NamedSharding` of `sharding` if it matches, else GSPMD."""
    from jax.sharding import NamedSharding

    if sharding is not None:
        pspec = to_partition_spec(sharding)
        if pspec is not None:
            named = NamedSharding(mesh, pspec)
            try:
                if named._to_xla_hlo_sharding(ndim) == hlo:
                    return named
            except Exception:  # noqa: BLE001 - fall back to the exact HLO sharding
                pass
    if hlo.is_replicated():
        from jax.sharding import PartitionSpec

        return NamedSharding(mesh, PartitionSpec())
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    return GSPMDSharding(xc.DeviceList(tuple(mesh.devices.flat)), hlo)


@dataclass
class Executable:
    """A loaded XLA executable plus the JAX shardings of its parameters and outputs."""

    exe: Any
    devices: list[Any]
    in_shardings: list[Any]
    out_shardings: list[Any]
    out_avals: list[Any]

    def hlo_text(self) -> str:
        """The optimised, partitioned HLO (per-device shapes, collectives)."""
        return self.exe.hlo_modules()[0].to_string()

    def run(self, flat_args: list[Any]) -> list[Any]:
        import jax

        placed = [jax.device_put(a, s) for a, s in zip(flat_args, self.in_shardings, strict=True)]
        results = self.exe.execute_sharded(placed).disassemble_into_single_device_arrays()
        return [
            jax.make_array_from_single_device_arrays(tuple(aval.shape), sharding, shards)
            for aval, sharding, shards in zip(
                self.out_avals, self.out_shardings, results, strict=True
            )
        ]


def _hlo_shardings(protos: Any, count: int) -> list[Any]:
    """XLA's shardings of the parameters or outputs; a one-device executable has none (newer
    jaxlib returns `None`), which means replicated."""
    from jax._src.lib import xla_client as xc

    if protos is None:
        return [xc.HloSharding.replicate()] * count
    return [xc.HloSharding.from_proto(s) for s in protos]


def build_executable(
    text: str,
    mesh: Mesh,
    jax_mesh: Any,
    in_avals: list[Any],
    out_avals: list[Any],
    in_shardings: list[TensorSharding | None],
    out_shardings: list[TensorSharding | None],
) -> Executable:
    """Compile `text` for the mesh's devices and work out how to place inputs and outputs."""
    devices = mesh_devices(mesh, jax_mesh)
    exe = compile_text(text, devices)
    cmesh = concrete_mesh(mesh, devices)
    params = _hlo_shardings(exe.get_parameter_shardings(), len(in_avals))
    outs = _hlo_shardings(exe.get_output_shardings(), len(out_avals))
    ins = [
        jax_sharding(h, len(a.shape), s, cmesh)
        for h, a, s in zip(params, in_avals, in_shardings, strict=True)
    ]
    results = [
        jax_sharding(h, len(a.shape), s, cmesh)
        for h, a, s in zip(outs, out_avals, out_shardings, strict=True)
    ]
    return Executable(exe, devices, ins, results, out_avals)


def to_partition_spec(sharding: TensorSharding) -> Any | None:
    """The `PartitionSpec` of a sharding when one exists (full axes only), else `None`."""
    from jax.sharding import PartitionSpec

    entries: list[Any] = []
    for d in sharding.dims:
        if any(a.sub is not None for a in d.axes):
            return None
        names = tuple(a.name for a in d.axes)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    while entries and entries[-1] is None:
        entries.pop()
    if any(a.sub is not None for a in sharding.unreduced):
        return None
    unreduced = frozenset(a.name for a in sharding.unreduced)
    return PartitionSpec(*entries, unreduced=unreduced) if unreduced else PartitionSpec(*entries)
