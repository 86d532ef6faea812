"""Where each dim sharding came from: an observer the driver calls on every update.

Off (the default) costs nothing: the driver holds `None` instead of an observer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Origin:
    """One dim's origin: `source` is `annotation` or an op name with its location; `round`."""

    source: str
    round: str

    def __str__(self) -> str:
        return f"{self.source} ({self.round})"


@dataclass
class OriginRecorder:
    """Keeps, per holder (a value or a func result) and dim, the update that last grew it."""

    origins: dict[int, dict[int, Origin]] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    holders: dict[int, Any] = field(default_factory=dict)

    def annotate(self, holder: Any, name: str, sharding: Any) -> None:
        """An input annotation: every dim that has axes comes from the user."""
        key = id(holder)
        self.holders[key] = holder
        self.names[key] = name
        dims = self.origins.setdefault(key, {})
        for d, dim in enumerate(sharding.dims):
            if dim.axes:
                dims[d] = Origin("annotation", "input")

    def update(self, holder: Any, name: str, old: Any, new: Any, source: str, round: str) -> None:
        key = id(holder)
        self.holders[key] = holder
        self.names.setdefault(key, name)
        dims = self.origins.setdefault(key, {})
        for d, dim in enumerate(new.dims):
            old_axes = old.dims[d].axes if old is not None and d < len(old.dims) else ()
            if dim.axes != old_axes:
                dims[d] = Origin(source, round)

    def lines(self) -> list[str]:
        out = []
        for key, dims in self.origins.items():
            for d in sorted(dims):
                out.append(f"{self.names.get(key, '?')} dim {d}: {dims[d]}")
        return out
