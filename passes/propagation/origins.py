"""Where each dim sharding came from: an observer the driver calls on every update.

Off (the default) costs nothing: the driver holds `None` instead of an observer. On, it keeps for
every holder (a value or a func result) and dim the annotation its axes trace back to, the unit
that wrote them and the round; `explain.py` turns that into text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shardc.dialect.shardings import AxisRef, TensorSharding

from .units import as_value, holder_of


@dataclass(frozen=True, slots=True)
class Origin:
    """One dim's origin: the axes it got, from which annotated holder, by which unit, when.

    `via` is None for an annotation itself; `root` is None when no source tensor of the unit
    had the axes (which would be a bug in the strategy)."""

    axes: tuple[AxisRef, ...]
    root: Any
    round: str
    via: Any = None

    @property
    def is_annotation(self) -> bool:
        return self.via is None


class OriginRecorder:
    """Keeps, per holder and dim, the update that last grew the dim (see `Origin`)."""

    __slots__ = ("origins", "holders")

    def __init__(self) -> None:
        self.origins: dict[int, dict[int, Origin]] = {}
        self.holders: dict[int, Any] = {}

    def annotate(self, holder: Any, sharding: TensorSharding) -> None:
        """A user annotation: every dim with axes comes from `holder` itself, in round pN."""
        holder = as_value(holder)  # kept per IR value: a stand-in holder is its value here
        dims: dict[int, Origin] = {}
        for d, dim in enumerate(sharding.dims):
            if dim.axes:
                dims[d] = Origin(dim.axes, holder, f"p{dim.priority or 0}")
        if dims:
            self.holders[id(holder)] = holder
            self.origins.setdefault(id(holder), {}).update(dims)

    def fold(self, copies: dict[int, Any]) -> None:
        """Forget the values in `copies` (id -> the value it was folded into); an origin whose
        root is one of them traces to that value instead."""
        for key in copies:
            self.origins.pop(key, None)
            self.holders.pop(key, None)
        for dims in self.origins.values():
            for d, o in dims.items():
                if o.root is not None and id(o.root) in copies:
                    dims[d] = Origin(o.axes, copies[id(o.root)], o.round, o.via)

    def get(self, holder: Any, dim: int) -> Origin | None:
        return self.origins.get(id(as_value(holder)), {}).get(dim)

    def record(
        self,
        unit: Any,
        index: int,
        before: Sequence[TensorSharding | None],
        new: TensorSharding,
        targets: list[Any],
        round: str,
    ) -> None:
        """`unit` wrote `new` into its slot `index` (and so into every holder in `targets`).

        `before` holds the shardings of all the unit's slots as the step read them; a grown
        dim's source is the first other slot whose dim on a shared factor had the gained axes."""
        old = before[index]
        changed: dict[int, Origin] = {}
        for d, dim in enumerate(new.dims):
            old_axes = old.dims[d].axes if old is not None and d < len(old.dims) else ()
            if not dim.axes or dim.axes == old_axes:
                continue
            names = {a.name for a in dim.axes}
            gained = (names - {a.name for a in old_axes}) or names
            root = self._source(unit, index, unit.dims[index][d], gained, before)
            changed[d] = Origin(dim.axes, root, round, unit)
        if not changed:
            return
        for t in map(as_value, targets):
            self.holders[id(t)] = t
            self.origins.setdefault(id(t), {}).update(changed)

    def _source(
        self,
        unit: Any,
        index: int,
        factors: tuple[int, ...],
        gained: set[str],
        before: Sequence[TensorSharding | None],
    ) -> Any:
        slots = unit.slots
        for j, s in enumerate(before):
            if j == index or s is None:
                continue
            for e, fs in enumerate(unit.dims[j]):
                if e >= len(s.dims) or not any(f in factors for f in fs):
                    continue
                if gained & {a.name for a in s.dims[e].axes}:
                    holder = as_value(holder_of(slots[j]))
                    o = self.get(holder, e)
                    return o.root if o is not None else holder
        return None
