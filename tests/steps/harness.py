"""One harness for every real step: compile it with `jax.jit` and with `shardc.jit` (same
function, same in/out shardings, same donation) on the step's mesh, run both and the unsharded
step once, and check what shardc.jit's compiled program promises against jax.jit's:

- `bytes`: collective bytes per device (tests/differential/hlo_bytes.py's measure on
  `compiled.as_text()`) at most jax.jit's * 1.01 + 256 B;
- `memory`: XLA's `memory_analysis()` (arguments + outputs + temps - aliased) at most 1% above
  jax.jit's;
- `numbers`: every output after one step equals the step's run on one device;
- `shardings`: the shardings XLA compiled the parameters and outputs with (the executable's own
  HLO shardings, and `Compiled.input_shardings`/`output_shardings`) hold on every device the
  blocks shardc's lowering says (`Lowered.in_shardings`/`out_shardings`);
- `op_names`, `source_lines`: at least 95% of the distinct `op_name`s, and of the distinct source
  `file:line`s, of jax.jit's compiled HLO appear in shardc.jit's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

import shardc
from shardc.api.grid import _blocks_of_jax, device_blocks
from shardc.dialect.shardings import TensorSharding
from shardc.frontend.specs import to_mesh
from tests.differential.hlo_bytes import total_bytes

from .common import named, one_device_mesh

BYTES_SLACK = (1.01, 256)  # shardc.jit's bytes <= jax.jit's * 1.01 + 256
MEMORY_SLACK = 1.01
NAME_COVERAGE = 0.95
# LLVM's optimization off for the tests' compiles (about half of XLA's CPU compile time): XLA's HLO
# passes (partitioning, scheduling, buffer assignment), which the bytes, memory and shardings
# read, are the same; checked on every step here (identical bytes and memory, both sides)
FAST_COMPILE = {"xla_backend_optimization_level": 0}


@dataclass
class Step:
    """A training step ready to compile: the function, its mesh, its arguments (abstract, and
    made concrete by `init`: the same numbers on every call) and the specs of its inputs and
    outputs (pytrees of `PartitionSpec` matching the arguments and the results).

    Outputs match the unsharded run within `rtol` plus `atol` times the output's largest
    magnitude: AdamW's first update is `lr * g / (|g| + eps)`, which turns the round-off of a
    gradient element near zero (another reduction order) into a visible part of `lr`, so a
    purely absolute bound would be either vacuous for the moments or too tight for the
    parameters (jax.jit's own sharded step is as far from the unsharded one).
    """

    name: str
    fun: Callable[..., Any]
    mesh: Mesh
    abstract: tuple[Any, ...]  # the arguments as `ShapeDtypeStruct`s
    init: Callable[[], tuple[Any, ...]]
    in_specs: Any
    out_specs: Any
    donate_argnums: tuple[int, ...] = ()
    rtol: float = 1e-4
    atol: float = 1e-3

    @property
    def in_shardings(self) -> Any:
        return named(self.mesh, self.in_specs)

    @property
    def out_shardings(self) -> Any:
        return named(self.mesh, self.out_specs)

    def jax_jit(self) -> Any:
        return jax.jit(self.fun, in_shardings=self.in_shardings,
                       out_shardings=self.out_shardings, donate_argnums=self.donate_argnums)

    def shardc_jit(self) -> Any:
        return shardc.jit(self.fun, mesh=self.mesh, in_shardings=self.in_shardings,
                          out_shardings=self.out_shardings, donate_argnums=self.donate_argnums)


def memory_bytes(compiled: Any) -> int:
    """The project's memory measure: arguments + outputs + temps - aliased, per device."""
    m = compiled.memory_analysis()
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
               - m.alias_size_in_bytes)


@dataclass
class Pair:
    """What the harness measured of one step, compiled both ways."""

    step: Step
    jax_text: str
    shardc_text: str
    jax_memory: int
    shardc_memory: int
    lowered: Any  # shardc's Lowered
    compiled: Any  # shardc's compiled function
    jax_outputs: list[np.ndarray] = field(default_factory=list)
    shardc_outputs: list[np.ndarray] = field(default_factory=list)
    reference: list[np.ndarray] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Pair({self.step.name})"

    @property
    def jax_bytes(self) -> int:
        return total_bytes(self.jax_text)

    @property
    def shardc_bytes(self) -> int:
        return total_bytes(self.shardc_text)


def compile_both(make: Callable[[Mesh], Step], mesh: Mesh,
                 reference: list[np.ndarray] | None = None,
                 compiler_options: dict[str, Any] | None = FAST_COMPILE) -> Pair:
    """Compile `make(mesh)` with jax.jit and shardc.jit from the same arguments, run both on
    fresh copies of the arguments, and take the unsharded run's outputs (`reference`, or
    `unsharded_outputs(make, mesh)`)."""
    step = make(mesh)
    args = step.init()
    jax_compiled = step.jax_jit().lower(*args).compile(compiler_options)
    lowered = step.shardc_jit().lower(*args)
    compiled = lowered.compile(compiler_options)
    pair = Pair(step, jax_compiled.as_text(), compiled.as_text(), memory_bytes(jax_compiled),
                memory_bytes(compiled), lowered, compiled)
    # fresh arguments per call: a donated call deletes its arguments' buffers
    pair.jax_outputs = _host(jax_compiled(*jax.device_put(step.init(), step.in_shardings)))
    pair.shardc_outputs = _host(compiled(*jax.device_put(step.init(), step.in_shardings)))
    if reference is None:
        reference = unsharded_outputs(make, mesh, compiler_options)
    pair.reference = reference
    return pair


def unsharded_outputs(make: Callable[[Mesh], Step], mesh: Mesh,
                      compiler_options: dict[str, Any] | None = FAST_COMPILE
                      ) -> list[np.ndarray]:
    """The step's outputs run on one device: built for a mesh with `mesh`'s axis names, each of
    size 1 (its sharding constraints are then no-ops)."""
    one = make(one_device_mesh(mesh))
    args = one.init()
    run = jax.jit(one.fun, in_shardings=one.in_shardings, out_shardings=one.out_shardings)
    return _host(run.lower(*args).compile(compiler_options)(*args))


def _host(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


# ---------------------------------------------------------------------------------------------
# The checks


def check_bytes(pair: Pair) -> None:
    """shardc.jit's collective bytes per device at most jax.jit's (1% + 256 B slack)."""
    mine, ref = pair.shardc_bytes, pair.jax_bytes
    factor, extra = BYTES_SLACK
    assert mine <= ref * factor + extra, (
        f"{pair.step.name}: shardc.jit moves {mine} B per device, jax.jit {ref} B "
        f"({mine / max(ref, 1):.2f}x)")


def check_memory(pair: Pair) -> None:
    """shardc.jit's memory per device at most 1% above jax.jit's."""
    mine, ref = pair.shardc_memory, pair.jax_memory
    assert mine <= ref * MEMORY_SLACK, (
        f"{pair.step.name}: shardc.jit needs {mine} B per device, jax.jit {ref} B "
        f"({mine / max(ref, 1):.3f}x)")


def check_numbers(pair: Pair) -> None:
    """Both compiled steps give the unsharded step's outputs."""
    step = pair.step
    assert len(pair.reference) == len(pair.shardc_outputs) == len(pair.jax_outputs) > 0
    for who, outs in (("shardc.jit", pair.shardc_outputs), ("jax.jit", pair.jax_outputs)):
        for i, (got, want) in enumerate(zip(outs, pair.reference, strict=True)):
            scale = float(np.max(np.abs(want))) if want.size else 0.0
            np.testing.assert_allclose(got, want, rtol=step.rtol, atol=step.atol * scale,
                                       err_msg=f"{step.name}: {who} output {i}")


def blocks(sharding: Any, shape: tuple[int, ...], mesh: Mesh) -> dict[int, Any]:
    """Device id -> the `[start, stop)` block it holds per dim, for a shardc `TensorSharding`
    (None: replicated) or a JAX sharding."""
    if sharding is None:
        return {d.id: tuple((0, n) for n in shape) for d in mesh.devices.flat}
    if isinstance(sharding, TensorSharding):
        by_position = device_blocks(sharding, shape, to_mesh(mesh))
        return {mesh.devices.flat[pos].id: b for pos, b in by_position.items()}
    return _blocks_of_jax(sharding, shape)


def _xla_shardings(compiled: Any, mesh: Mesh) -> tuple[list[Any], list[Any]]:
    """The parameter and output shardings of XLA's executable itself, as JAX shardings."""
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    exe = compiled.runtime_executable()
    devices = tuple(mesh.devices.flat)

    def convert(protos: Any) -> list[Any]:
        return [GSPMDSharding(devices, xc.HloSharding.from_proto(p)) for p in protos]

    return convert(exe.get_parameter_shardings()), convert(exe.get_output_shardings())


def check_shardings(pair: Pair) -> None:
    """XLA compiled every parameter and output with the layout shardc's lowering states."""
    low, mesh = pair.lowered, pair.step.mesh
    xla_in, xla_out = _xla_shardings(pair.compiled, mesh)
    sides = (
        ("input", low.in_shardings, low.in_avals, xla_in, jax.tree.leaves(pair.compiled.input_shardings)),
        ("output", low.out_shardings, low.out_avals, xla_out, jax.tree.leaves(pair.compiled.output_shardings)),
    )
    for what, stated, avals, xla, jaxs in sides:
        assert len(stated) == len(avals) == len(xla) == len(jaxs), (what, len(stated), len(xla))
        for i, (s, aval, x, j) in enumerate(zip(stated, avals, xla, jaxs, strict=True)):
            shape = tuple(aval.shape)
            want = blocks(s, shape, mesh)
            for who, got in (("XLA's executable", x), ("Compiled." + what + "_shardings", j)):
                assert blocks(got, shape, mesh) == want, (
                    f"{pair.step.name}: {what} {i} {shape}: shardc states "
                    f"{s.body() if s is not None else 'replicated'}, {who} has {got}")


_OP_NAME = re.compile(r'op_name="([^"]+)"')
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_SOURCE = re.compile(r'source_file="([^"]+)" source_line=(\d+)')
_TABLE_ROW = re.compile(r"^(\d+) (.*)$")
_FIELD = re.compile(r"(\w+)=(\d+)")


def op_names(hlo: str) -> set[str]:
    """The distinct `op_name` metadata of an HLO module's text."""
    return set(_OP_NAME.findall(hlo))


def source_lines(hlo: str) -> set[tuple[str, int]]:
    """The distinct `(file, line)` of the ops of an HLO module's text: from `source_file` /
    `source_line` metadata, or from the innermost frame of `stack_frame_id` through the
    module's `StackFrames`/`FileLocations`/`FileNames` tables."""
    out = {(f, int(n)) for f, n in _SOURCE.findall(hlo)}
    tables: dict[str, dict[int, str]] = {}
    current: dict[int, str] | None = None
    for line in hlo.splitlines():
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            current = tables.setdefault(line, {})
        elif current is not None:
            m = _TABLE_ROW.match(line)
            if m:
                current[int(m.group(1))] = m.group(2)
            elif line.strip():
                current = None
    files = {k: v.strip('"') for k, v in tables.get("FileNames", {}).items()}
    locations = {k: dict((a, int(b)) for a, b in _FIELD.findall(v))
                 for k, v in tables.get("FileLocations", {}).items()}
    frames = {k: dict((a, int(b)) for a, b in _FIELD.findall(v))
              for k, v in tables.get("StackFrames", {}).items()}
    for frame_id in {int(i) for i in _FRAME_ID.findall(hlo)}:
        loc = locations.get(frames.get(frame_id, {}).get("file_location_id", -1))
        if loc is not None and loc.get("file_name_id") in files:
            out.add((files[loc["file_name_id"]], loc["line"]))
    return out


def coverage(reference: set[Any], mine: set[Any]) -> float:
    """The fraction of `reference` found in `mine` (1.0 for an empty reference)."""
    return len(reference & mine) / len(reference) if reference else 1.0


def _check_coverage(pair: Pair, what: str, read: Callable[[str], set[Any]]) -> None:
    ref, mine = read(pair.jax_text), read(pair.shardc_text)
    assert ref, f"{pair.step.name}: jax.jit's HLO carries no {what}"
    share = coverage(ref, mine)
    missing = sorted(map(str, ref - mine))[:8]
    assert share >= NAME_COVERAGE, (
        f"{pair.step.name}: {share:.1%} of jax.jit's {len(ref)} {what} are in shardc.jit's "
        f"HLO; missing e.g. {missing}")


def check_op_names(pair: Pair) -> None:
    """At least 95% of jax.jit's distinct op names appear in shardc.jit's HLO."""
    _check_coverage(pair, "op names", op_names)


def check_source_lines(pair: Pair) -> None:
    """At least 95% of jax.jit's distinct source file:line pairs appear in shardc.jit's HLO."""
    _check_coverage(pair, "source lines", source_lines)


CHECKS: dict[str, Callable[[Pair], None]] = {
    "bytes": check_bytes,
    "memory": check_memory,
    "numbers": check_numbers,
    "shardings": check_shardings,
    "op_names": check_op_names,
    "source_lines": check_source_lines,
}
