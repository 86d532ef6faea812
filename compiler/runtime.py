"""Process-wide memory management, for shardc's entry points only.

Whole-module work (import, the pipeline, export) builds many objects that all live on, and the
cyclic GC's collections over a big IR's graph would dominate its run time; a freed jaxlib module
leaves C heap pages resident under everything built next. Both remedies act on the whole
process, so the IR and the passes never call them: the entry points do (the CLI, the importer and
exporter, `shardc.propagate`, `shardc.plan`, `shardc.check`, `shardc.jit`'s pipeline), each
around the work it was asked for. Nested uses are free: only the outermost one acts.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["release_free_heap", "suspended_gc"]


@contextmanager
def suspended_gc() -> Iterator[None]:
    """Pause the cyclic GC for the work inside (also usable as a decorator: `@suspended_gc()`).
    On exit the objects allocated meanwhile go straight to the oldest generation
    (see `_promote_young`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _promote_young()
            gc.enable()


def release_free_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's `malloc_trim`; nothing
    elsewhere). Python allocates its small objects in arenas of their own, outside that heap:
    after jaxlib frees a big module, its pages would otherwise stay resident, unused, under
    every object the import builds next (at 1000 layers about 60 MiB of a 240 MiB peak)."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = _find_malloc_trim()
    if _malloc_trim is not False:
        _malloc_trim(0)


_malloc_trim: Any = None  # None: not looked up yet; False: not available


def _find_malloc_trim() -> Any:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc only (musl has none)
    except (OSError, AttributeError):
        return False


# objects `_promote_young` moved to the oldest generation since its last full collection, and
# the number of objects that collection left (the heap it must grow past before the next one)
_promoted = 0
_live_after_collect = 500_000


def _promote_young() -> None:
    """Move the objects allocated while the GC was paused to the oldest generation without a
    scan (`gc.freeze` + `gc.unfreeze` splice the generation lists): re-enabling the GC would
    otherwise traverse every one of them at the next allocation, and again when they age, a
    whole-IR scan on the hot path. Garbage cycles among them are found by the next full
    collection: one is forced once the oldest generation grew by more than the last one left
    alive (at least half a million), which bounds the garbage and amortizes the collections'
    cost; promoted objects freed since by reference counting do not count.
    Where the program has frozen objects (`gc.freeze`, as servers do before forking), the
    objects stay young and the GC ages them as usual."""
    global _promoted, _live_after_collect
    if gc.get_freeze_count():
        return  # the program froze objects of its own: `unfreeze` would thaw them too
    _promoted += gc.get_count()[0]  # net tracked allocations since the last collection
    gc.freeze()
    gc.unfreeze()
    if _promoted > _live_after_collect:
        # what the promotions left in the oldest generation: objects freed since by reference
        # counting (a released module, a dropped lowering) are gone from it; counting them is
        # a list of pointers (~15 ms per million), a full collection a traversal (~0.3 s)
        grown = len(gc.get_objects(2)) - _live_after_collect
        if grown > _live_after_collect:
            gc.collect()
            _promoted = 0
            _live_after_collect = max(len(gc.get_objects()), 500_000)
        else:
            _promoted = max(grown, 0)
