"""`shardc plan --check` / `Lowered.plan(check=True)`: the plan next to what XLA compiles.

The module's ops are tagged first (`tag_ops`: each op's location becomes
`loc("shardc.op.N"(original))`, so that XLA's HLO metadata names the op each collective came
from); `api_plan.check_module` then plans the tagged text and exports it in the compiled form
(`shardc.propagate(..., mode="pin")`, the program `.compile()` runs), which `compiled_hlo`
compiles for the mesh's devices: in this process when it has that many CPU devices, else in a
subprocess with virtual CPU devices (`--xla_force_host_platform_device_count`). `attach` reads
the compiled collectives from the partitioned HLO (`hlo_collectives`), matches them to the
planned ones (`passes/plan/check.py`) and translates tags back to the ops' own names and
locations.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, replace

from shardc.backend import hlo_collectives
from shardc.backend.xla import compile_text
from shardc.dialect.errors import ShardcError, xla_refused
from shardc.dialect.ir import Module
from shardc.passes.plan.check import CompiledEntry, PlanCheck, match
from shardc.passes.plan.naming import TAG_PREFIX, loc_name
from shardc.passes.plan.report import Collective, Plan

# the most virtual CPU devices a subprocess is asked to emulate (XLA's CPU client makes one
# thread pool per device: beyond this, compiling takes minutes and memory runs out)
MAX_VIRTUAL_DEVICES = 512


@dataclass(frozen=True)
class _Origin:
    name: str  # the op's own location name, else its MLIR op name
    loc: str | None  # its `file:line:col`


def tag_ops(module: Module) -> dict[str, _Origin]:
    """Give every op of `module` a location `loc("shardc.op.N"(original))`; returns what each
    tag stands for."""
    origins: dict[str, _Origin] = {}
    k = 0
    for func in module.funcs.values():
        for op in func.walk():
            if op is func:
                continue
            tag = f"{TAG_PREFIX}{k}"
            k += 1
            inner = op.loc
            origins[tag] = _Origin(loc_name(module, inner) or op.name, module.resolve_loc(inner))
            body = inner[4:-1] if inner and inner.startswith("loc(") else "unknown"
            op.loc = f'loc("{tag}")' if body == "unknown" else f'loc("{tag}"({body}))'
    return origins


def devices_needed(module: Module) -> int:
    """The device count the module is partitioned for (its largest mesh)."""
    n = 1
    for mesh in module.meshes.values():
        n = max(n, mesh.num_devices)
    return n


def compiled_hlo(text: str, num_devices: int, subprocess_ok: bool = True) -> str:
    """XLA's partitioned HLO of `text` for `num_devices` CPU devices (a subprocess with virtual
    devices when this process has fewer, or has not started jax at all: the command line)."""
    cpu: list[object] = []
    if "jax" in sys.modules or not subprocess_ok:  # (else none is started here: a subprocess)
        import jax

        cpu = list(jax.devices("cpu"))
        if len(cpu) >= num_devices:
            exe = compile_text(text, cpu[:num_devices])
            return str(exe.hlo_modules()[0].to_string())
    if num_devices > MAX_VIRTUAL_DEVICES or not subprocess_ok:
        raise ShardcError(
            f"--check needs {num_devices} devices: this process has {len(cpu)} and at most "
            f"{MAX_VIRTUAL_DEVICES} virtual CPU devices are emulated",
            hint="check a smaller mesh of the same program (shardc compile --mesh)",
        )
    flags = re.sub(
        r"--xla_force_host_platform_device_count=\d+", "", os.environ.get("XLA_FLAGS", "")
    )
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={num_devices}".strip()
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run(
        [sys.executable, "-m", "shardc.api.plan_check", str(num_devices)],
        input=text,
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise xla_refused(
            "compile the module for --check",
            lines[-1] if lines else f"exit status {proc.returncode}",
        )
    return proc.stdout


def compiled_entries(hlo: str, module: Module) -> list[CompiledEntry]:
    """The collectives of `hlo`, their device groups read as axes of the module's mesh."""
    meshes = [m for m in module.meshes.values() if m.axes]
    mesh = max(meshes, key=lambda m: m.num_devices) if meshes else None
    out = []
    for c in hlo_collectives.read_collectives(hlo):
        if c.runs == 0:
            continue
        axes = hlo_collectives.group_axes(c.kind, c.groups, mesh) if mesh else ()
        tags = _op_tags(c.op_name)
        name = tags[0] if len(tags) == 1 else c.op_name
        out.append(CompiledEntry(c.kind, axes, c.total_bytes, name, c.loc, tags or (c.op_name,)))
    return out


def _op_tags(op_name: str) -> tuple[str, ...]:
    """The tags in an HLO op name: an op of an inlined call is `caller/callee` (the callee's
    tag is the op's), a combination of several ops `(a:b:c)` (each is one of them)."""
    out = []
    for part in re.split(r"[():]", op_name):
        tags = [p for p in part.split("/") if p.startswith(TAG_PREFIX)]
        if tags:
            out.append(tags[-1])
    return tuple(dict.fromkeys(out))


def attach(planned: Plan, hlo: str, module: Module, origins: dict[str, _Origin]) -> PlanCheck:
    """Match the plan of the tagged `module` to XLA's HLO of its pin export; the plan's
    collectives and the check's entries named by the ops' own names and locations again."""
    compiled = compiled_entries(hlo, module)
    result = match(planned.collectives, compiled)
    result.planned = [_untag_planned(c, origins) for c in result.planned]
    result.compiled = [_untag_compiled(c, origins) for c in result.compiled]
    planned.collectives = list(result.planned)
    planned.check = result
    return result


def _untag_planned(c: Collective, origins: dict[str, _Origin]) -> Collective:
    o = origins.get(c.source or "")
    p = origins.get(c.producer or "")
    return replace(
        c,
        loc=o.loc if o is not None else c.loc,
        source=o.name if o is not None else c.source,
        producer=p.name if p is not None else c.producer,
    )


def _untag_compiled(c: CompiledEntry, origins: dict[str, _Origin]) -> CompiledEntry:
    found = [origins[t] for t in c.sources if t in origins]
    if not found:
        return c
    names = list(dict.fromkeys(o.name for o in found))
    name = names[0] if len(names) == 1 else "(" + ":".join(names) + ")"
    loc = next((o.loc for o in found if o.loc), c.loc)
    return replace(c, op_name=name, loc=loc, sources=tuple(o.name for o in found))


def _main() -> int:
    """`python -m shardc.api.plan_check N`: HLO of the MLIR text on stdin for N CPU devices."""
    n = int(sys.argv[1])
    text = sys.stdin.read()
    try:
        sys.stdout.write(compiled_hlo(text, n, subprocess_ok=False))
    except ShardcError as e:
        print(f"error: {e.first_line()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
