"""`suspended_gc` promotes what it allocated without a scan, and still frees garbage cycles."""

from __future__ import annotations

import gc

from shardc.runtime import suspended_gc


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycles(n: int) -> None:
    for _ in range(n):
        a, b = _Node(), _Node()
        a.other, b.other = b, a


def test_garbage_cycles_made_while_suspended_are_collected_in_the_end() -> None:
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(40):  # 40 x 100k cyclic garbage objects: 4M if never collected
        with suspended_gc():
            _cycles(50_000)
    assert gc.isenabled()
    assert len(gc.get_objects()) - before < 1_500_000


def test_objects_made_while_suspended_live_on() -> None:
    with suspended_gc():
        kept = [_Node() for _ in range(1000)]
        kept[0].other = kept[1]
    gc.collect()
    assert kept[0].other is kept[1] and len(kept) == 1000


def test_objects_the_program_froze_stay_frozen() -> None:
    gc.collect()
    mine = [_Node() for _ in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen >= 100
        with suspended_gc():
            _cycles(1000)
        assert gc.get_freeze_count() == frozen  # the program's frozen objects were not thawed
        assert mine[0].other is None
    finally:
        gc.unfreeze()


def test_promoted_objects_freed_by_reference_counting_force_no_collection() -> None:
    full = []

    def count(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.collect()
    gc.callbacks.append(count)
    try:
        for _ in range(40):  # 40 x 50k objects promoted, each batch freed once its block ends
            with suspended_gc():
                batch = [_Node() for _ in range(50_000)]
            del batch
    finally:
        gc.callbacks.remove(count)
    assert len(full) <= 1  # (Python's own schedule may run one; the promotions forced none)


def test_the_ir_and_the_passes_leave_the_process_alone() -> None:
    """The GC and the C heap are the entry points' (shardc.runtime): no module of the IR, the
    text layer or the passes imports `gc`, `ctypes` or the runtime module."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    process_wide = {"gc", "ctypes", "shardc.runtime"}
    found = []
    for folder in ("dialect", "passes"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                found += [f"{path.relative_to(root)}: {n}" for n in names if n in process_wide]
    assert not found
