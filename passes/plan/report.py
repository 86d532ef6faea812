"""The plan as data: collectives, totals, memory; its JSON form and its table.

JSON (a fixed schema): `{"collectives": [{"kind", "axes", "bytes", "func", "value", "op",
"loc", "cause", "fix"}], "total_bytes": int, "bytes_per_axis": {axis: int}, "memory":
{"arguments": int, "results": int, "peak": int}}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .cost import KINDS


@dataclass(frozen=True)
class Collective:
    """One planned collective: what, over which mesh axes, bytes per device, where, why, fix.

    `axes` are mesh axis names, sub-axes spelled `"x":(1)2`. `trips` is the product of the known
    trip counts of the enclosing loops and of the calls of the enclosing func (already in
    `bytes`). `written` marks the program's own collectives (in shard_map bodies)."""

    kind: str
    axes: tuple[str, ...]
    bytes: int
    func: str
    value: str
    op: str
    loc: str | None
    cause: str
    fix: str
    trips: int = 1
    written: bool = False  # a collective the program writes itself (shard_map body), no reshard
    # the name XLA gives the op in its HLO metadata (`op_name`: the location's outermost name,
    # JAX's `jit(f)/dot_general`), and the value's producer's: what `--check` matches by
    source: str | None = None
    producer: str | None = None
    # annotation changes that might remove it (`fixes.Candidate`); `fix` says the one that,
    # re-planned, lowers the program's total, and by how much
    candidates: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    # the value as the module prints it (`%3`): what identifies it across two plans (`key`)
    ssa: str = ""

    def to_json(self) -> dict[str, Any]:
        """This collective's JSON object (schema above)."""
        return {
            "kind": self.kind,
            "axes": list(self.axes),
            "bytes": self.bytes,
            "func": self.func,
            "value": self.value,
            "op": self.op,
            "loc": self.loc,
            "cause": self.cause,
            "fix": self.fix,
        }

    def key(self) -> tuple[str, tuple[str, ...], str, str, str]:
        """What identifies a collective across two plans of the same program (for diff)."""
        return (self.kind, self.axes, self.func, self.ssa or self.value, self.op)


@dataclass(frozen=True)
class Memory:
    """Per-device bytes: arguments, results, the peak of live intermediates and the results
    written into donated arguments (XLA's `memory_analysis()`: argument, output, temp and
    alias sizes)."""

    arguments: int
    results: int
    peak: int
    aliased: int = 0

    @property
    def total(self) -> int:
        """Arguments + results + peak - aliased: the measure compared with XLA's
        memory_analysis (a donated argument's buffer holds its result: counted once)."""
        return self.arguments + self.results + self.peak - self.aliased

    def to_json(self) -> dict[str, int]:
        return {"arguments": self.arguments, "results": self.results, "peak": self.peak,
                "aliased": self.aliased}  # fmt: skip


@dataclass(frozen=True)
class XlaOwn:
    """XLA's own layout of the same module (its propagation of the annotations as written, no
    pin) where shardc's differs: how many values the compiled form pins to shardc's layout,
    and what XLA's layout would move and need, planned alike."""

    pinned: int  # values whose layout XLA would derive otherwise (pinned in the compiled form)
    total_bytes: int  # XLA's own layout's planned collective bytes per device
    memory: Memory

    def line(self, shardc_bytes: int) -> str:
        """`layout: shardc's differs from XLA's own at K values ...: shardc's moves N B, XLA's
        own would move M B; ...`."""
        more = shardc_bytes - self.total_bytes
        than = (
            f"{fmt_bytes(more)} more than" if more > 0 else
            f"{fmt_bytes(-more)} less than" if more < 0 else "as much as"
        )  # fmt: skip
        return (
            f"layout: shardc's differs from XLA's own at {self.pinned} value"
            f"{'s' if self.pinned != 1 else ''} (pinned in the compiled form): shardc's moves "
            f"{fmt_bytes(shardc_bytes)}, {than} XLA's own would ({fmt_bytes(self.total_bytes)}"
            f"; memory {fmt_bytes(self.memory.total)})"
        )


@dataclass
class Plan:
    """Every collective a propagated layout implies, in program order, and its memory."""

    collectives: list[Collective] = field(default_factory=list)
    memory: Memory = field(default_factory=lambda: Memory(0, 0, 0))
    # ops that do not run (no path to a result or a side effect: XLA deletes them), unplanned
    dead_ops: int = 0
    # op name -> how many ops of that name have no sharding rule (propagation moves nothing
    # through them; the plan costs them as XLA's partitioner computes them)
    ruleless: dict[str, int] = field(default_factory=dict)
    # with `--check`: the compiled program's collectives matched to these (`check.PlanCheck`)
    check: Any = None
    # with automatic sharding: what auto chose per decided dim, the alternatives it weighed and
    # their bytes and memory (its explanation lines; the table shows them, the JSON schema not)
    auto: list[str] = field(default_factory=list)
    # where shardc lays values out otherwise than XLA's own propagation of the module as
    # written would (values the compiled form pins): that layout's planned cost beside this one
    xla_own: XlaOwn | None = None

    @property
    def total_bytes(self) -> int:
        return sum(c.bytes for c in self.collectives)

    @property
    def bytes_per_axis(self) -> dict[str, int]:
        """Bytes per mesh axis name; a collective over several axes counts for each of them."""
        out: dict[str, int] = {}
        for c in self.collectives:
            for name in dict.fromkeys(axis_name(a) for a in c.axes):
                out[name] = out.get(name, 0) + c.bytes
        return out

    @property
    def bytes_per_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.kind] = out.get(c.kind, 0) + c.bytes
        return {k: out[k] for k in KINDS if k in out}

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.kind] = out.get(c.kind, 0) + 1
        return {k: out[k] for k in KINDS if k in out}

    def to_json(self) -> dict[str, Any]:
        """The JSON document (schema above)."""
        return {
            "collectives": [c.to_json() for c in self.collectives],
            "total_bytes": self.total_bytes,
            "bytes_per_axis": self.bytes_per_axis,
            "memory": self.memory.to_json(),
        }

    def json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def __str__(self) -> str:
        return self.table()

    def table(self) -> str:
        """A readable table: collectives by op with cause and fix, totals per kind and axis,
        memory."""
        lines: list[str] = []
        if not self.collectives:
            lines.append("no collectives")
        for i, c in enumerate(self.collectives, 1):
            axes = "{" + ", ".join(c.axes) + "}"
            trips = f" (x{c.trips})" if c.trips != 1 else ""
            where = f" at {c.loc}" if c.loc else ""
            lines.append(
                f"{i:>3}. {c.kind} {axes} {fmt_bytes(c.bytes)}{trips}: {c.value} "
                f"of {c.op} in @{c.func}{where}"
            )
            lines.append(f"     cause: {c.cause}")
            if c.fix:
                lines.append(f"     fix:   {c.fix}")
        lines.append("")
        lines.append(
            f"total: {fmt_bytes(self.total_bytes)} per device in "
            f"{len(self.collectives)} collectives"
        )
        for k, b in self.bytes_per_kind.items():
            lines.append(f"  {k:<19}{self.counts()[k]:>4} x  {fmt_bytes(b)}")
        for a, b in self.bytes_per_axis.items():
            lines.append(f"  axis {a:<14}       {fmt_bytes(b)}")
        m = self.memory
        lines.append(
            f"memory per device: arguments {fmt_bytes(m.arguments)}, results "
            f"{fmt_bytes(m.results)}, peak intermediates {fmt_bytes(m.peak)}"
            + (f", results in donated arguments {fmt_bytes(m.aliased)}" if m.aliased else "")
        )
        for name, n in sorted(self.ruleless.items()):
            lines.append(
                f"no sharding rule for {name} ({n} op{'s' if n != 1 else ''}): propagation "
                "moves nothing through it"
            )
        if self.dead_ops:
            lines.append(
                f"not planned: {self.dead_ops} ops whose results nothing uses (XLA deletes them)"
            )
        if self.xla_own is not None:
            lines.append(self.xla_own.line(self.total_bytes))
        if self.check is not None:
            lines.append("")
            lines.append(self.check.table().rstrip("\n"))
        if self.auto:
            lines.append("")
            lines.append("decided by automatic sharding:")
            lines.extend(f"  {line}" for line in self.auto)
        return "\n".join(lines) + "\n"


def axis_name(axis_text: str) -> str:
    """`"x":(1)2` -> `x`; `x` -> `x`."""
    name = axis_text.split(":(")[0]
    return name.strip('"')


def fmt_bytes(n: int) -> str:
    """`1536 B` below 1 KiB, else `12.0 KiB`, `3.5 MiB`, `2.0 GiB`."""
    if n < 1024:
        return f"{n} B"
    if n < 1024**2:
        return f"{n / 1024:.1f} KiB"
    if n < 1024**3:
        return f"{n / 1024**2:.1f} MiB"
    return f"{n / 1024**3:.1f} GiB"


def axis_text(a: Any) -> str:
    """An `AxisRef` as the JSON spells it: `x`, or `"x":(1)2` for a sub-axis."""
    if a.sub is None:
        return a.name
    return str(a)
