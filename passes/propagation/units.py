"""The propagation's data model: holders, slots and units (docs/propagation.md §3, §8).

A *unit* is one propagation step's worth of IR: an op with a rule, a data-flow edge (while, case,
optimization_barrier, manual_computation, func.call), a propagation barrier or a function-result
link. Each unit reads and writes shardings through *slots*: a value, a `Holder` (a func result, or
one use's view of a split constant), or a manual computation's local/global view of a value.
How ops become units is `unit_builder.py`; running them is `driver.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeAlias, Union

from shardc.dialect.data_flow import CALL
from shardc.dialect.ir import BlockArgument, Operation, Value
from shardc.dialect.rules.model import OpShardingRule
from shardc.dialect.shardings import DimSharding, TensorSharding
from shardc.dialect.types import TensorType

from .factor_propagation import Direction, Directions


class Writer(Protocol):
    """What a slot writes through: the driver, which re-queues the readers of a change."""

    def write(self, holder: Value | Holder, sharding: TensorSharding) -> None: ...


class Holder:
    """A sharding that is not an IR value's: a func result, one use's view of a constant, or
    the working sharding of a value whose sharding the IR keeps on an op (`of`: a constraint's or
    reshard's result, a manual computation's body argument or result)."""

    __slots__ = ("type", "sharding", "uses", "name", "of")

    def __init__(
        self,
        type: object,
        sharding: TensorSharding | None,
        name: str,
        of: Value | None = None,
    ):
        self.type = type
        self.sharding = sharding
        self.uses: list = of.uses if of is not None else []
        self.name = name
        self.of = of


def as_value(holder: object) -> object:
    """The IR value a holder stands for (itself unless it is a stand-in `Holder`)."""
    if isinstance(holder, Holder) and holder.of is not None:
        return holder.of
    return holder


def rank_of(t: object) -> int:
    return t.rank if isinstance(t, TensorType) else 0


def num_elements(t: object) -> int:
    return t.num_elements() if isinstance(t, TensorType) else 1


class Slot:
    """Where a unit reads and writes one tensor's sharding through a view of its holder (the
    manual computation's slots below). A unit reads and writes a value or holder as is through
    the holder itself in its slot list, with no `Slot` around it (see `holder_of`)."""

    __slots__ = ("holder",)

    def __init__(self, holder: Value | Holder):
        self.holder = holder

    @property
    def type(self) -> object:
        return self.holder.type

    @property
    def sharding(self) -> TensorSharding | None:
        """What the unit sees (as a plain holder's `sharding` reads)."""
        return self.get()

    def get(self) -> TensorSharding | None:
        return self.holder.sharding

    def set(self, sharding: TensorSharding, prop: Writer) -> None:
        prop.write(self.holder, sharding)


# A unit's slot: a value or holder read and written as is, or a `Slot` view of one.
SlotLike: TypeAlias = Union[Value, Holder, Slot]  # noqa: UP007 - (a runtime alias)


def holder_of(slot: SlotLike) -> Value | Holder:
    """What a slot reads and writes."""
    return slot.holder if isinstance(slot, Slot) else slot


def strip_manual(s: TensorSharding, manual: frozenset[str]) -> TensorSharding:
    dims = tuple(
        DimSharding(tuple(a for a in d.axes if a.name not in manual), d.is_closed, d.priority)
        for d in s.dims
    )
    rep = tuple(a for a in s.replicated if a.name not in manual)
    unr = tuple(a for a in s.unreduced if a.name not in manual)
    return TensorSharding(s.mesh, dims, rep, unr)


def _manual_part(s: TensorSharding | None, rank: int, manual: frozenset[str]) -> list[tuple]:
    if s is None:
        return [()] * rank
    return [tuple(a for a in d.axes if a.name in manual) for d in s.dims]


def _with_manual(local: TensorSharding, parts: list[tuple], extra_rep: tuple) -> TensorSharding:
    dims = tuple(
        DimSharding(tuple(parts[i]) + d.axes, d.is_closed, d.priority)
        for i, d in enumerate(local.dims)
    )
    return TensorSharding(local.mesh, dims, local.replicated + extra_rep, local.unreduced)


class ManualArgSlot(Slot):
    """A manual_computation block argument seen globally: its manual axes put back in front."""

    __slots__ = ("global_type", "parts", "manual", "manual_rep")

    def __init__(
        self,
        arg: Value | Holder,
        global_type: object,
        original: TensorSharding | None,
        manual: frozenset[str],
    ):
        super().__init__(arg)
        self.global_type = global_type
        self.manual = manual
        self.parts = _manual_part(original, rank_of(global_type), manual)
        self.manual_rep = tuple(
            a for a in (original.replicated if original else ()) if a.name in manual
        )

    @property
    def type(self) -> object:
        return self.global_type

    def get(self) -> TensorSharding | None:
        local = self.holder.sharding
        if local is None:
            return None
        return _with_manual(local, self.parts, self.manual_rep)

    def set(self, sharding: TensorSharding, prop: Writer) -> None:
        prop.write(self.holder, strip_manual(sharding, self.manual))


class ManualResultSlot(Slot):
    """A manual_computation result seen locally: its manual axes taken out."""

    __slots__ = ("local_type", "manual")

    def __init__(self, result: Value | Holder, local_type: object, manual: frozenset[str]):
        super().__init__(result)
        self.local_type = local_type
        self.manual = manual

    @property
    def type(self) -> object:
        return self.local_type

    def get(self) -> TensorSharding | None:
        s = self.holder.sharding
        return None if s is None else strip_manual(s, self.manual)

    def set(self, sharding: TensorSharding, prop: Writer) -> None:
        cur = self.holder.sharding
        parts = _manual_part(cur, sharding.rank, self.manual)
        rep = tuple(a for a in (cur.replicated if cur else ()) if a.name in self.manual)
        prop.write(self.holder, _with_manual(sharding, parts, rep))


# ---------------------------------------------------------------------------------------------
# Units


# `Unit.clean` of a unit whose last step saw no sharding on any slot: settled at every level
ANY_DIRS: tuple[Direction, ...] = (-1,)


class Unit:
    """One propagation step's worth of IR: an op with its rule, an edge, a barrier, a link.

    Its operand slots then its result slots are one tuple, `slots` (a module has about one unit
    per op: a slotted object with one tuple, not a dataclass with two lists)."""

    __slots__ = (
        "kind",
        "op_name",
        "rule",
        "slots",
        "n_operands",
        "op",
        "call_target",
        "multi_use",
        "elementwise",
        "fixed_direction",
        "sizes",
        "dims",
        "dirs",
        "queued",
        "step_key",
        "clean",
    )

    def __init__(
        self,
        kind: str,
        op_name: str,
        rule: OpShardingRule,
        operands: Sequence[SlotLike],
        results: Sequence[SlotLike],
        op: Operation | None = None,
        call_target: str | None = None,
        elementwise: bool = False,
        fixed_direction: Direction | None = None,
    ):
        self.kind = kind
        self.op_name = op_name
        self.rule = rule
        self.slots: tuple[SlotLike, ...] = (*operands, *results)
        self.n_operands = len(operands)
        self.op = op
        self.call_target = call_target
        self.multi_use = False
        self.elementwise = elementwise
        self.fixed_direction = fixed_direction
        # element count per slot, factors per dim per slot (interned: units alike share them)
        self.sizes: tuple[int, ...] = ()
        self.dims: tuple[tuple[tuple[int, ...], ...], ...] = ()
        self.dirs: tuple[Direction, ...] = ()
        self.queued = False
        self.step_key: int | None = None  # what besides shardings and dirs decides a step
        # the dirs of this unit's last step if it changed nothing and no slot of it was written
        # since (the driver's sweeps skip it then: the step would change nothing again);
        # `ANY_DIRS` if no slot of it had a sharding then (no step would change anything)
        self.clean: tuple[Direction, ...] | None = None

    @property
    def operands(self) -> tuple[SlotLike, ...]:
        return self.slots[: self.n_operands]

    @property
    def results(self) -> tuple[SlotLike, ...]:
        return self.slots[self.n_operands :]

    def label(self) -> str:
        return self.op_name

    def __repr__(self) -> str:
        return f"<unit {self.kind} {self.op_name}>"


def is_call_arg_edge(u: Unit) -> bool:
    """The edge from a call's operand into its callee's argument.

    Shardy (jaxlib 0.10.2) inlines the callee as a named computation whose argument edge a change
    of the call's operand does not wake: the edge only runs in each op-priority level's first
    sweep, or when the callee side changes. The driver reproduces that."""
    return (
        u.kind == "edge"
        and u.op_name == CALL
        and isinstance(holder_of(u.slots[u.n_operands]), BlockArgument)
    )


def parse_direction(raw: str) -> Direction:
    """`sdy.propagation_barrier`'s `allowed_direction` text as a factor direction."""
    table = {
        "0": Directions.NONE,
        "1": Directions.FORWARD,
        "2": Directions.BACKWARD,
        "3": Directions.BOTH,
        "NONE": Directions.NONE,
        "FORWARD": Directions.FORWARD,
        "BACKWARD": Directions.BACKWARD,
        "BOTH": Directions.BOTH,
    }
    for key, d in table.items():
        if raw == key or raw.endswith(" " + key + ">") or raw.endswith(key):
            return d
    return Directions.NONE


class ManualBoundarySlot(Slot):
    """A manual_computation result as the ops outside see it: whole, but propagation from
    outside never adds or moves its manual axes (they are the region's, fixed by its
    out_sharding; Shardy leaves them alone too)."""

    __slots__ = ("manual",)

    def __init__(self, result: Value | Holder, manual: frozenset[str]):
        super().__init__(result)
        self.manual = manual

    def set(self, sharding: TensorSharding, prop: Writer) -> None:
        cur = self.holder.sharding
        parts = _manual_part(cur, sharding.rank, self.manual)
        rep = tuple(a for a in (cur.replicated if cur else ()) if a.name in self.manual)
        new = _with_manual(strip_manual(sharding, self.manual), parts, rep)
        if new != cur:
            prop.write(self.holder, new)
