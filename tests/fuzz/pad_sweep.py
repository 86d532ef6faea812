"""`python -m tests.fuzz.pad_sweep`: which pads XLA partitions wrongly when pinned sharded.

Compiles every pad of f32[N] (N in 8, 16) with low and high edge padding in -3..3 and interior
padding 1 and 2, its result pinned (a closed constraint) over 2, 4 and 8 devices along the
padded dim, its operand laid out alike (`same`) or replicated (`rep`), and compares the numbers
with the unsharded pad. Prints one line per outcome other than right and a summary; with
`--check` it also checks `passes/pin_hazards.py`'s predicate against the sweep (the dims it
replicates are exactly the pads that fail with the operand laid out alike). XLA aborts the
process on some pads, so the pads compile in a worker subprocess that the sweep restarts after
each abort (a few seconds each). 1,176 pads, about fifteen minutes on two cores.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

Case = tuple[int, int, int, int, int, str]  # (size, devices, low, high, interior, operand)

EDGES = range(-3, 4)


def cases() -> list[Case]:
    out = []
    for n, k, lo, hi, it, operand in itertools.product(
        (8, 16), (2, 4, 8), EDGES, EDGES, (1, 2), ("same", "rep")
    ):
        if n + (n - 1) * it + lo + hi >= 1:
            out.append((n, k, lo, hi, it, operand))
    return out


def module(case: Case) -> str:
    """The pad of `case` between two closed constraints, as the compiled form pins it."""
    n, k, lo, hi, it, operand = case
    m = n + (n - 1) * it + lo + hi
    mesh = f'["X"={k}, "R"={8 // k}]' if k < 8 else '["X"=8]'
    arg = '{"X"}' if operand == "same" else "{}"
    return f"""
sdy.mesh @mesh = <{mesh}>
func.func public @main(%x: tensor<{n}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{arg}]>}})
    -> (tensor<{m}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"X"}}]>}}) {{
  %t = stablehlo.tanh %x : tensor<{n}xf32>
  %c = sdy.sharding_constraint %t <@mesh, [{arg}]> : tensor<{n}xf32>
  %z = stablehlo.constant dense<0.5> : tensor<f32>
  %p = stablehlo.pad %c, %z, low = [{lo}], high = [{hi}], interior = [{it}]
      : (tensor<{n}xf32>, tensor<f32>) -> tensor<{m}xf32>
  %q = sdy.sharding_constraint %p <@mesh, [{{"X"}}]> : tensor<{m}xf32>
  %r = stablehlo.tanh %q : tensor<{m}xf32>
  return %r : tensor<{m}xf32>
}}
"""


def _worker(path: str, start: int) -> None:
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    from tests.differential import harness as H

    with open(path, encoding="utf-8") as f:
        todo = [tuple(c) for c in json.load(f)]
    for i in range(start, len(todo)):
        n, _, lo, hi, it, _ = todo[i]
        print(json.dumps({"start": i}), flush=True)
        x = np.random.default_rng(i).standard_normal((n,)).astype(np.float32)
        ref = np.tanh(np.asarray(lax.pad(jnp.tanh(x), jnp.float32(0.5), [(lo, hi, it)])))
        try:
            exe = H.compile_mlir(module(todo[i]), 8, as_jax_jit=False)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - the verifier's rejection is an outcome here
            print(json.dumps({"i": i, "r": "rejected"}), flush=True)
            continue
        out = H.run_executable(exe, [x])[0]
        right = out.shape == ref.shape and np.allclose(out, ref, atol=1e-5)
        print(json.dumps({"i": i, "r": "right" if right else "wrong"}), flush=True)


def sweep(todo: list[Case]) -> dict[Case, str]:
    """Each case's outcome: right, wrong, rejected (an error) or aborted (XLA killed the worker)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(todo, f)
        path = f.name
    got: dict[int, str] = {}
    nxt = 0
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    while nxt < len(todo):
        cmd = [sys.executable, "-m", "tests.fuzz.pad_sweep", "--worker", path, str(nxt)]
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
        current = nxt
        for line in proc.stdout.splitlines():
            rec = json.loads(line)
            if "start" in rec:
                current = rec["start"]
            else:
                got[rec["i"]] = rec["r"]
                nxt = rec["i"] + 1
        if nxt < len(todo) and current not in got:
            got[current] = "aborted"
            nxt = current + 1
    os.unlink(path)
    return {todo[i]: r for i, r in got.items()}


def predicted(case: Case) -> bool:
    """Whether `pin_hazards` replicates the pad's dim (it must exactly when XLA fails)."""
    from shardc.backend.importer import import_text
    from shardc.passes.pin_hazards import pad_negative_edge_with_interior

    pad = next(op for op in import_text(module(case)).walk() if op.name == "stablehlo.pad")
    return bool(pad_negative_edge_with_interior(pad))


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]))
        return 0
    outcomes = sweep(cases())
    for case, r in sorted(outcomes.items()):
        if r != "right":
            print(case, r)
    print(Counter((c[5], r) for c, r in outcomes.items()))
    if "--check" not in sys.argv:
        return 0
    wrong = [c for c, r in outcomes.items() if c[5] == "same" and (r != "right") != predicted(c)]
    print(f"predicate disagrees with the sweep on {len(wrong)} pads", *wrong[:10], sep="\n")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
