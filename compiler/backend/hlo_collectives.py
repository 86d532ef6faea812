"""The collectives of XLA's partitioned HLO text, measured as the plan measures them.

Per collective: its kind, the larger of its operand and result local bytes (the async `-start`
forms hold operands and results in one tuple), how often it runs per run of the entry (known
trip counts of enclosing while loops, calls of its computation), the device groups it acts
over (`replica_groups` in any of XLA's spellings, or a collective-permute's
`source_target_pairs`), and where it came from (`metadata={op_name=... source_file=...
source_line=...}` or a `stack_frame_id` into the module's stack frame table). Pure text
parsing: the HLO is `Compiled.as_text()` / `hlo_modules()[0].to_string()`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from shardc.dialect.shardings import Mesh

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

_HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+[\w\-]+\(")
_NAME = re.compile(r"%([\w.\-]+)")
_OP = re.compile(r"=\s*(.+?)\s+(" + "|".join(KINDS) + r")(-start)?\((.*)")
_WHILE = re.compile(r"\bwhile\(.*condition=%?([\w.\-]+).*body=%?([\w.\-]+)")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"')
_CALLS = re.compile(r"(?:calls|to_apply|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_SHAPE = re.compile(r"\b(pred|s4|s8|s16|s32|s64|u4|u8|u16|u32|u64|f16|f32|f64|bf16|c64|c128|"
                    r"f8e4m3fn|f8e5m2|f8e4m3|f8e3m4|f8e4m3fnuz|f8e5m2fnuz)\[([\d,]*)\]")  # fmt: skip
_BITS = {
    "pred": 8, "s4": 4, "u4": 4, "s8": 8, "u8": 8, "s16": 16, "u16": 16, "f16": 16, "bf16": 16,
    "s32": 32, "u32": 32, "f32": 32, "s64": 64, "u64": 64, "f64": 64, "c64": 64, "c128": 128,
}  # fmt: skip
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_SOURCE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"\s+source_line=(\d+)')
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_GROUPS = re.compile(r"replica_groups=(\{\{[\d,{}]*\}\}|\{\}|\[[\d,]+\]<=\[[\d,]+\](?:T\([\d,]+\))?|"
                     r"mesh\[[^\]]*\](?:,\s*device_ids=\(\[[\d,]+\](?:T\([\d,]+\))?\))?"
                     r"(?:\s*\{[^}]*\})?)")  # fmt: skip
_PAIRS = re.compile(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}")


@dataclass(frozen=True)
class CompiledCollective:
    """One collective of the compiled program (see the module docstring)."""

    kind: str
    bytes: int  # per execution: the larger of operand and result local bytes
    runs: int  # executions per run of the entry
    groups: tuple[tuple[int, ...], ...]  # device groups, or (source, target) pairs
    op_name: str  # metadata op_name ("" when none)
    loc: str | None  # "file:line" from the metadata, None when none
    computation: str

    @property
    def total_bytes(self) -> int:
        return self.bytes * self.runs


def element_bits(dtype: str) -> int:
    """Bits of one element of an HLO primitive type (f8 types: 8)."""
    return _BITS.get(dtype, 8)


def shape_bytes(text: str) -> int:
    """Bytes of every array shape written in `text` (a tuple's elements added)."""
    total = 0
    for dt, dims in _SHAPE.findall(text):
        n = 1
        for d in dims.split(","):
            if d:
                n *= int(d)
        total += (n * element_bits(dt) + 7) // 8
    return total


def _operand_text(rest: str) -> str:
    depth = 1
    for i, c in enumerate(rest):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return rest[:i]
    return rest


def parse_computations(hlo: str) -> tuple[str, dict[str, list[str]]]:
    """The entry computation's name and every computation's instruction lines."""
    comps: dict[str, list[str]] = {}
    entry = ""
    cur: list[str] | None = None
    for line in hlo.splitlines():
        if cur is None:
            m = _HEADER.match(line)
            if m and "=" not in line.split("(")[0]:
                cur = comps.setdefault(m.group(2), [])
                if m.group(1):
                    entry = m.group(2)
            continue
        if line.strip() == "}":
            cur = None
            continue
        cur.append(line)
    return entry, comps


def run_counts(hlo: str) -> dict[str, int]:
    """How often each computation runs per run of the entry (while trip counts, calls)."""
    entry, comps = parse_computations(hlo)
    mult: dict[str, int] = {}

    def visit(name: str, n: int, depth: int = 0) -> None:
        if name not in comps or depth > 64:
            return
        mult[name] = mult.get(name, 0) + n
        for line in comps[name]:
            w = _WHILE.search(line)
            if w:
                t = _TRIP.search(line)
                visit(w.group(2), n * (int(t.group(1)) if t else 1), depth + 1)
                continue
            for c in _CALLS.findall(line):
                visit(c, n, depth + 1)
            b = _BRANCHES.search(line)
            if b:
                for c in b.group(1).split(","):
                    visit(c.strip().lstrip("%"), n, depth + 1)

    visit(entry, 1)
    return mult


def _stack_frames(hlo: str) -> dict[int, str]:
    """`stack_frame_id -> "file:line"` from the module's FileNames/FileLocations/StackFrames."""
    section = ""
    files: dict[int, str] = {}
    locs: dict[int, tuple[int, int]] = {}
    frames: dict[int, int] = {}
    for line in hlo.splitlines():
        s = line.strip()
        if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = s
            continue
        if not s or s.startswith(("%", "ENTRY", "HloModule")):
            if s.startswith(("%", "ENTRY")):
                break
            continue
        head, _, rest = s.partition(" ")
        if not head.isdigit():
            continue
        k = int(head)
        if section == "FileNames":
            files[k] = rest.strip().strip('"')
        elif section == "FileLocations":
            f = re.search(r"file_name_id=(\d+)", rest)
            ln = re.search(r"\bline=(\d+)", rest)
            if f and ln:
                locs[k] = (int(f.group(1)), int(ln.group(1)))
        elif section == "StackFrames":
            fl = re.search(r"file_location_id=(\d+)", rest)
            if fl:
                frames[k] = int(fl.group(1))
    out: dict[int, str] = {}
    for k, loc_id in frames.items():
        if loc_id in locs:
            file_id, line_no = locs[loc_id]
            out[k] = f"{files.get(file_id, '?')}:{line_no}"
    return out


def _iota_groups(text: str) -> tuple[tuple[int, ...], ...]:
    """`[G,S]<=[dims]T(perm)`: iota over dims, transposed, reshaped to G groups of S."""
    m = re.match(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
    if m is None:
        return ()
    shape = [int(x) for x in m.group(1).split(",")]
    dims = [int(x) for x in m.group(2).split(",")]
    perm = [int(x) for x in m.group(3).split(",")] if m.group(3) else list(range(len(dims)))
    flat = _transposed_iota(dims, perm)
    size = shape[-1] if shape else 1
    return tuple(tuple(flat[i : i + size]) for i in range(0, len(flat), size))


def _transposed_iota(dims: list[int], perm: list[int]) -> list[int]:
    """The row-major list of iota(prod(dims)) reshaped to `dims` and transposed by `perm`."""
    strides = [1] * len(dims)
    for d in range(len(dims) - 2, -1, -1):
        strides[d] = strides[d + 1] * dims[d + 1]
    out_dims = [dims[p] for p in perm]
    return [
        sum(idx[k] * strides[perm[k]] for k in range(len(perm)))
        for idx in itertools.product(*[range(n) for n in out_dims])
    ]


def _mesh_groups(text: str) -> tuple[tuple[int, ...], ...]:
    """`mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'b'}`: the devices of a mesh (in the
    order device_ids give, else iota) grouped by varying the listed axes (every axis when
    none is listed)."""
    m = re.match(r"mesh\[([^\]]*)\]", text)
    if m is None:
        return ()
    axes = re.findall(r"'([^']+)'=(\d+)", m.group(1))
    names = [a for a, _ in axes]
    sizes = [int(n) for _, n in axes]
    total = 1
    for s in sizes:
        total *= s
    ids = list(range(total))
    d = re.search(r"device_ids=\(\[([\d,]+)\](?:T\(([\d,]+)\))?\)", text)
    if d is not None:
        dims = [int(x) for x in d.group(1).split(",")]
        perm = [int(x) for x in d.group(2).split(",")] if d.group(2) else list(range(len(dims)))
        ids = _transposed_iota(dims, perm)
    g = re.search(r"\{([^}]*)\}\s*$", text)
    varying = set(re.findall(r"'([^']+)'", g.group(1))) if g else set(names)
    keep = [k for k, n in enumerate(names) if n not in varying]
    groups: dict[tuple[int, ...], list[int]] = {}
    for flat, coords in enumerate(itertools.product(*[range(s) for s in sizes])):
        groups.setdefault(tuple(coords[k] for k in keep), []).append(ids[flat])
    return tuple(tuple(v) for v in groups.values())


def parse_groups(line: str) -> tuple[tuple[int, ...], ...]:
    """The device groups of a collective's HLO line (pairs for a collective-permute)."""
    p = _PAIRS.search(line)
    if p is not None:
        return tuple((int(a), int(b)) for a, b in re.findall(r"\{(\d+),(\d+)\}", p.group(1)))
    m = _GROUPS.search(line)
    if m is None:
        return ()
    text = m.group(1)
    if text.startswith("{"):
        return tuple(
            tuple(int(x) for x in g.split(",") if x) for g in re.findall(r"\{([\d,]*)\}", text)
        )
    if text.startswith("["):
        return _iota_groups(text)
    return _mesh_groups(text)


def read_collectives(hlo: str) -> list[CompiledCollective]:
    """Every collective of the HLO module, with its measure, runs, groups and source."""
    _, comps = parse_computations(hlo)
    mult = run_counts(hlo)
    frames = _stack_frames(hlo)
    out = []
    for name, lines in comps.items():
        shapes: dict[str, str] = {}
        for line in lines:
            d = _DEF.match(line)
            if d:
                shapes[d.group(1)] = d.group(2)
        for line in lines:
            m = _OP.search(line)
            if not m:
                continue
            result = shape_bytes(m.group(1))
            text = _operand_text(m.group(4))
            operand = shape_bytes(text)
            if not operand:  # operands printed by name only: look their shapes up
                operand = sum(shape_bytes(shapes.get(n, "")) for n in _NAME.findall(text))
            if m.group(3):
                result = max(result - operand, 0)
            op_name = _OP_NAME.search(line)
            src = _SOURCE.search(line)
            loc = f"{src.group(1)}:{src.group(2)}" if src else None
            if loc is None:
                frame = _FRAME_ID.search(line)
                loc = frames.get(int(frame.group(1))) if frame else None
            out.append(
                CompiledCollective(
                    m.group(2),
                    max(result, operand),
                    mult.get(name, 0),
                    parse_groups(line),
                    op_name.group(1) if op_name else "",
                    loc,
                    name,
                )
            )
    return out


def total_bytes(hlo: str) -> int:
    """The plan's measure over a whole HLO module: every collective's bytes times its runs."""
    return sum(c.total_bytes for c in read_collectives(hlo))


def group_axes(kind: str, groups: tuple[tuple[int, ...], ...], mesh: Mesh) -> tuple[str, ...]:
    """The mesh axes (sub-axes as `"x":(1)2`) along which the devices of a group differ, in
    mesh order; for a collective-permute, along which a source and its target differ."""
    sizes = [a.size for a in mesh.axes]
    order = list(mesh.device_ids) if mesh.device_ids is not None else None
    position = {dev: k for k, dev in enumerate(order)} if order is not None else None

    def coords(dev: int) -> list[int]:
        flat = position.get(dev, dev) if position is not None else dev
        out = []
        for s in reversed(sizes):
            out.append(flat % s)
            flat //= s
        return out[::-1]

    values: list[set[int]] = [set() for _ in sizes]
    if kind == "collective-permute":
        for pair in groups:
            if len(pair) < 2:
                continue
            a, b = coords(pair[0]), coords(pair[1])
            for k in range(len(sizes)):
                if a[k] != b[k]:
                    values[k].update((a[k], b[k]))
    elif groups:  # every group has the same shape: the first one says which axes vary
        cs = [coords(d) for d in groups[0]]
        for k in range(len(sizes)):
            values[k] = {c[k] for c in cs}
    out = []
    for k, axis in enumerate(mesh.axes):
        vs = sorted(values[k])
        if len(vs) < 2:
            continue
        if kind == "collective-permute" or len(vs) == axis.size:
            out.append(axis.name)
            continue
        step = min(b - a for a, b in itertools.pairwise(vs))
        size = len(vs)
        pre = axis.size // (size * step) if size * step and axis.size % (size * step) == 0 else 0
        out.append(f'"{axis.name}":({pre}){size}' if pre else axis.name)
    return tuple(out)
