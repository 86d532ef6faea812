"""Differential harness: shardc.propagate against Shardy's own `sdy-propagation-pipeline`.

Steps (each a function, so tests and scripts can use them separately):

* `tag_module(text)`: give every op a unique `shardc.tag = "tN"` attribute (Shardy keeps
  discardable attributes on the ops it clones, moves or rewrites: split constants, cloned callees,
  `sdy.sharding_constraint` -> `sdy.reshard` all keep the tag), so values can be matched across
  outputs whatever the pipeline did to the op list.
* `run_shardy(text)`: jaxlib's PassManager with `sdy-propagation-pipeline`.
* `read_shardings(text)`: every tagged op result's sharding and every func arg/result sharding,
  in closed canonical form (`Canon`): mesh (by content, not by symbol name), the axes of every
  dim, the unreduced axes. Open/closed flags, priorities and `replicated` lists are ignored (the
  pipeline closes everything and drops `replicated`); an absent sharding is fully replicated.
  `keep_open=True` marks open dims instead (an absent sharding is then fully open), for the
  outputs of propagation passes run alone; data-flow edges' and named computations' shardings
  are read too.
* `compare(shardy, shardc)`: every mismatch, naming the op and value and giving both shardings.
* `compile_mlir` / `run_executable` / `collective_stats`: XLA on the host's CPU devices
  (`XLA_FLAGS=--xla_force_host_platform_device_count=8`, set by `tests/conftest.py` before jax
  is imported), as docs/xla_boundary.md §4 describes.

Only jaxlib's MLIR bindings read the outputs; nothing of shardc's IR is used to judge shardc.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TAG = "shardc.tag"

# Ops that define no value worth comparing (terminators, symbols).
_SKIP_TAG = {
    "func.func",
    "func.return",
    "sdy.mesh",
    "sdy.return",
    "stablehlo.return",
    "builtin.module",
}


# ops whose one result's sharding is their `sharding` attribute
_SHARDING_ATTR_OPS = frozenset(
    {"sdy.sharding_constraint", "sdy.reshard", "sdy.data_flow_edge", "sdy.func_data_flow_edge"}
)


def _jax_mlir() -> tuple[Any, Any, Any]:
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir, passmanager

    return jmlir, ir, passmanager


_CTX: list[Any] = []


def ir_context() -> Any:
    """One MLIR context (stablehlo, chlo, sdy, func registered) for the whole harness."""
    if not _CTX:
        jmlir, _, _ = _jax_mlir()
        _CTX.append(jmlir.make_ir_context())
    return _CTX[0]


def _walk(op: Any):  # noqa: ANN202 - generator of jaxlib operations, pre-order
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _walk(child.operation)


# ---------------------------------------------------------------------------------------------
# Tagging and running Shardy


def tag_module(text: str) -> str:
    """`text` with a unique `shardc.tag = "tN"` attribute on every value-defining op."""
    _, ir, _ = _jax_mlir()
    with ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        n = 0
        for op in _walk(module.operation):
            if op.name in _SKIP_TAG:
                continue
            op.attributes[TAG] = ir.StringAttr.get(f"t{n}")
            n += 1
        return str(module)


def run_shardy(text: str, pipeline: str = "sdy-propagation-pipeline") -> str:
    """Shardy's own pipeline on `text`, printed back (pretty form)."""
    _, ir, passmanager = _jax_mlir()
    with ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
        return str(module)


# ---------------------------------------------------------------------------------------------
# Reading shardings


@dataclass(frozen=True)
class Canon:
    """A sharding in closed canonical form."""

    mesh: str | None  # mesh body text, e.g. '<["x"=2, "y"=4]>'; None when nothing is sharded
    dims: tuple[tuple[str, ...], ...]
    unreduced: tuple[str, ...] = ()

    def __str__(self) -> str:
        dims = ", ".join("{" + ", ".join(d) + "}" for d in self.dims)
        s = f"[{dims}]"
        if self.unreduced:
            s += ", unreduced={" + ", ".join(self.unreduced) + "}"
        return s if self.mesh is None else f"<{self.mesh}, {s}>"

    @property
    def is_replicated(self) -> bool:
        return not any(self.dims) and not self.unreduced


def _replicated(rank: int, keep_open: bool = False) -> Canon:
    """No axes anywhere; with `keep_open`, every dim open (what an absent sharding means)."""
    return Canon(None, tuple(("?",) if keep_open else () for _ in range(rank)))


def _unsharded(dims: tuple[tuple[str, ...], ...]) -> Canon:
    """A sharding without axes (its dims' open marks kept)."""
    return Canon(None, tuple(("?",) if "?" in d else () for d in dims))


@dataclass
class ValueInfo:
    """One value as read from a module: where it is and its sharding."""

    key: str  # "t5#0" (tag#result) or "@main:arg0" / "@main:result1"
    where: str  # human-readable: op name, result index, source tag
    sharding: Canon


@dataclass
class ModuleShardings:
    """Every comparable value of a module; tagged values may occur several times (clones)."""

    values: dict[str, list[ValueInfo]] = field(default_factory=dict)
    untagged_ops: int = 0
    unannotated: set[str] = field(default_factory=set)  # values with no sharding by design

    def add(self, info: ValueInfo) -> None:
        self.values.setdefault(info.key, []).append(info)


def _meshes(module: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "sdy.mesh":
            name = str(op.attributes["sym_name"]).strip('"')
            out[name] = str(op.attributes["mesh"]).removeprefix("#sdy.mesh")
    return out


def _axis(a: Any) -> str:
    """`"x"` or `"x":(1)2` from an AxisRefAttr (printed as `#sdy<axis_ref"x":(1)2>`)."""
    t = str(a)
    if t.startswith("#sdy<axis_ref"):
        t = t[len("#sdy<axis_ref") : -1]
    return t.strip()


def _canon(attr: Any, meshes: dict[str, str], rank: int, keep_open: bool = False) -> Canon:
    """`attr` in closed canonical form; with `keep_open`, an open dim ends with a `?` entry."""
    from jaxlib.mlir.dialects import sdy

    ts = sdy.TensorShardingAttr(attr)
    mesh_attr = ts.mesh_or_ref
    mesh_txt = str(mesh_attr)
    if mesh_txt.startswith("@"):
        mesh = meshes.get(mesh_txt[1:], mesh_txt)
    else:
        mesh = mesh_txt.removeprefix("#sdy.mesh")
    dims = []
    for d in ts.dimension_shardings:
        dim = sdy.DimensionShardingAttr(d)
        axes = tuple(_axis(a) for a in dim.axes)
        dims.append(axes + ("?",) if keep_open and not dim.is_closed else axes)
    unreduced = tuple(_axis(a) for a in ts.unreduced_axes)
    if len(dims) != rank and rank >= 0:
        dims += [() for _ in range(rank - len(dims))]
    c = Canon(mesh, tuple(dims), unreduced)
    if not any(a != "?" for d in c.dims for a in d) and not unreduced:
        return _unsharded(c.dims)
    return c


def _rank(t: Any) -> int:
    _, ir, _ = _jax_mlir()
    try:
        return ir.RankedTensorType(t).rank
    except Exception:  # noqa: BLE001 - tokens, tuples: no dims
        return 0


def read_shardings(text: str, keep_open: bool = False) -> ModuleShardings:
    """Every tagged op result and every func arg/result with its canonical sharding.

    With `keep_open`, open dims keep a `?` mark (an absent sharding is fully open), for outputs
    of Shardy's propagation passes run alone, which leave open dims open."""
    _, ir, _ = _jax_mlir()
    from jaxlib.mlir.dialects import sdy

    def canon(attr: Any, rank: int) -> Canon:
        return _canon(attr, meshes, rank, keep_open)

    def per_value(op: Any, name: str) -> list[Any]:
        if name not in op.attributes:
            return []
        return list(sdy.TensorShardingPerValueAttr(op.attributes[name]).shardings)

    res = ModuleShardings()
    with ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        meshes = _meshes(module)
        for top in module.body.operations:
            top = top.operation
            if top.name != "func.func":
                continue
            fname = str(top.attributes["sym_name"]).strip('"')
            ftype = ir.FunctionType(ir.TypeAttr(top.attributes["function_type"]).value)
            for kind, types, attr_name in (
                ("arg", ftype.inputs, "arg_attrs"),
                ("result", ftype.results, "res_attrs"),
            ):
                attrs = top.attributes[attr_name] if attr_name in top.attributes else None
                for i, t in enumerate(types):
                    rank = _rank(t)
                    s = _replicated(rank, keep_open)
                    if attrs is not None:
                        d = ir.DictAttr(ir.ArrayAttr(attrs)[i])
                        if "sdy.sharding" in d:
                            s = canon(d["sdy.sharding"], rank)
                    key = f"@{fname}:{kind}{i}"
                    res.add(ValueInfo(key, f"func @{fname} {kind} #{i}", s))
            for op in _walk(top):
                if op.name in _SKIP_TAG:
                    continue
                if TAG not in op.attributes:
                    res.untagged_ops += 1
                    continue
                tag = ir.StringAttr(op.attributes[TAG]).value
                results = list(op.results)
                shardings: list[Canon | None] = [None] * len(results)
                if "sdy.sharding" in op.attributes:
                    for i, a in enumerate(per_value(op, "sdy.sharding")):
                        if i < len(results):
                            shardings[i] = canon(a, _rank(results[i].type))
                elif op.name in _SHARDING_ATTR_OPS and "sharding" in op.attributes:
                    shardings[0] = canon(op.attributes["sharding"], _rank(results[0].type))
                elif op.name == "stablehlo.while":
                    # shardc's export leaves a while's op-level sharding off (XLA drops it:
                    # docs/xla_boundary.md §2); such values are reported as skipped, not compared.
                    for i in range(len(results)):
                        res.unannotated.add(f"{tag}#{i}")
                if op.name in ("sdy.manual_computation", "sdy.named_computation"):
                    for i, a in enumerate(per_value(op, "in_shardings")):
                        t = op.operands[i].type
                        res.add(
                            ValueInfo(
                                f"{tag}:in#{i}",
                                f"{op.name} in_sharding #{i} [{tag}] in @{fname}",
                                canon(a, _rank(t)),
                            )
                        )
                    for i, a in enumerate(per_value(op, "out_shardings")):
                        shardings[i] = canon(a, _rank(results[i].type))
                for i, r in enumerate(results):
                    rank = _rank(r.type)
                    s = shardings[i] if shardings[i] is not None else _replicated(rank, keep_open)
                    res.add(
                        ValueInfo(f"{tag}#{i}", f"{op.name} result #{i} [{tag}] in @{fname}", s)
                    )
    return res


# ---------------------------------------------------------------------------------------------
# Comparison


@dataclass
class Mismatch:
    where: str
    shardy: str
    shardc: str

    def __str__(self) -> str:
        return f"{self.where}: shardy {self.shardy} vs shardc {self.shardc}"


@dataclass
class Comparison:
    compared: int
    agreed: int
    mismatches: list[Mismatch]
    missing_in_shardc: list[str]
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.missing_in_shardc

    def report(self) -> str:
        lines = [f"{self.agreed}/{self.compared} values agree with Shardy"]
        lines += [f"  MISMATCH {m}" for m in self.mismatches]
        lines += [f"  MISSING in shardc output: {k}" for k in self.missing_in_shardc]
        lines += [f"  not annotated by shardc (while): {k}" for k in self.skipped]
        return "\n".join(lines)


def compare(shardy: ModuleShardings, shardc: ModuleShardings) -> Comparison:
    """Every value present in Shardy's output must carry the same sharding in shardc's.

    Shardy clones constants per use and callees per call site; shardc annotates the single op.
    When all of Shardy's copies agree, shardc must give that sharding; when they differ, shardc's
    must equal one of them (every sharding shardc gives must be one of Shardy's). Funcs that exist only in one output (Shardy's renamed clones) are
    compared through their tagged ops, not their signatures.
    """
    compared = agreed = 0
    mismatches: list[Mismatch] = []
    missing: list[str] = []
    skipped: list[str] = []
    for key, infos in shardy.values.items():
        if key.startswith("@") and key not in shardc.values:
            if key.startswith("@main:"):
                missing.append(infos[0].where)
            continue
        compared += 1
        if key not in shardc.values:
            missing.append(infos[0].where)
            continue
        mine = shardc.values[key]
        if key in shardc.unannotated and key not in shardy.unannotated:
            skipped.append(mine[0].where + f" (shardy: {infos[0].sharding})")
            compared -= 1
            continue
        wanted = {i.sharding for i in infos}
        got = {i.sharding for i in mine}
        if got <= wanted:
            agreed += 1
            continue
        want_txt = " | ".join(sorted(str(w) for w in wanted))
        got_txt = " | ".join(sorted(str(g) for g in got))
        mismatches.append(Mismatch(mine[0].where, want_txt, got_txt))
    return Comparison(compared, agreed, mismatches, missing, skipped)


# ---------------------------------------------------------------------------------------------
# XLA: compile, run, count collectives

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

_DTYPE_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip
_SHAPE = re.compile(r"\b(pred|[suf]\d+|bf16|c64|c128)\[([0-9,]*)\]")


def compile_mlir(text: str, num_partitions: int = 8, as_jax_jit: bool = True) -> Any:
    """Compile StableHLO + sdy text for `num_partitions` CPU devices (shardc's backend), with
    the options jax.jit compiles its own lowering with: XLA chooses the layout of each `@main`
    argument and result that has no sharding (`as_jax_jit=False`: it keeps what propagation
    gives it)."""
    import jax

    from shardc.backend.xla import compile_text

    devices = jax.devices("cpu")[:num_partitions]
    assert len(devices) == num_partitions, "set XLA_FLAGS before jax is imported"
    return compile_text(text, devices, open_io=as_jax_jit)


def run_executable(exe: Any, args: list[np.ndarray]) -> list[np.ndarray]:
    """Run a compiled executable on host arrays placed per its parameter shardings."""
    import jax
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    devices = list(exe.local_devices())
    dev_list = xc.DeviceList(tuple(devices))
    placed = []
    for a, proto in zip(args, exe.get_parameter_shardings(), strict=True):
        sh = GSPMDSharding(dev_list, xc.HloSharding.from_proto(proto))
        placed.append(jax.device_put(a, sh))
    results = exe.execute_sharded(placed)
    per_out = results.disassemble_into_single_device_arrays()
    outs = []
    for shards, proto in zip(per_out, exe.get_output_shardings(), strict=True):
        hs = xc.HloSharding.from_proto(proto)
        sh = GSPMDSharding(dev_list, hs)
        # global shape from the shards and the sharding
        local = shards[0].shape
        tile = list(hs.tile_assignment_dimensions()) if hs.is_tiled() else []
        if hs.is_tiled() and hs.replicate_on_last_tile_dim():
            tile = tile[:-1]
        tile = tile[: len(local)]
        tile += [1] * (len(local) - len(tile))
        shape = tuple(d * t for d, t in zip(local, tile, strict=True))
        arr = jax.make_array_from_single_device_arrays(shape, sh, shards)
        outs.append(np.asarray(arr))
    return outs


@dataclass
class CollectiveStats:
    counts: dict[str, int]
    bytes: dict[str, int]

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes.values())

    @property
    def total_count(self) -> int:
        return sum(self.counts.values())

    def __str__(self) -> str:
        parts = [f"{k}={self.counts[k]}({self.bytes[k]}B)" for k in COLLECTIVES if self.counts[k]]
        return ", ".join(parts) or "no collectives"


def _shape_bytes(text: str) -> int:
    total = 0
    for dt, dims in _SHAPE.findall(text):
        n = 1
        for d in dims.split(","):
            if d:
                n *= int(d)
        total += n * _DTYPE_BYTES.get(dt, 4)
    return total


def collective_stats(hlo: str) -> CollectiveStats:
    """Collectives in optimized per-device HLO text and the bytes of their (local) results.

    `-start` forms of async collectives count once; their tuple result holds operands and
    results, so half its bytes are counted.
    """
    counts = dict.fromkeys(COLLECTIVES, 0)
    nbytes = dict.fromkeys(COLLECTIVES, 0)
    line_re = re.compile(r"=\s*(.+?)\s+(" + "|".join(COLLECTIVES) + r")(-start)?\(")
    for line in hlo.splitlines():
        m = line_re.search(line)
        if not m:
            continue
        kind = m.group(2)
        b = _shape_bytes(m.group(1))
        if m.group(3):
            b //= 2
        counts[kind] += 1
        nbytes[kind] += b
    return CollectiveStats(counts, nbytes)


def hlo_text(exe: Any) -> str:
    return exe.hlo_modules()[0].to_string()


def shardy_output_for_xla(text: str) -> str:
    """Shardy's pipeline output in the form XLA compiles and shardc's export writes:
    `sdy.reshard` -> `sdy.sharding_constraint` (XLA rejects reshards), and no op-level
    `sdy.sharding` on `stablehlo.while` (docs/xla_boundary.md §2)."""
    _, ir, _ = _jax_mlir()
    text = text.replace("sdy.reshard", "sdy.sharding_constraint")
    with ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        for op in _walk(module.operation):
            if op.name == "stablehlo.while" and "sdy.sharding" in op.attributes:
                del op.attributes["sdy.sharding"]
        return str(module)
