"""Random JAX programs for the differential fuzzer, as plain data that shrinks.

A `ProgramSpec` is a mesh, a list of inputs (shape, dtype, PartitionSpec, optional user
priority) and a list of `OpSpec`s, each naming its operands by value id; `build` turns it into a
JAX function, `lower` into the StableHLO + sdy text Shardy and shardc both read. Ops: einsum,
element-wise, reshape, transpose, broadcast, reduce, concatenate, slice, pad (negative and
interior padding included), dynamic_slice, dynamic_update_slice, take, where, fori_loop (an einsum
in the body), scan, cond, shard_map with collectives (psum, all_gather, ppermute, partially
manual), sharding constraints; meshes 2x4, 4x2, 2x2x2, 8. `generate(seed, index)` is a pure
function of its arguments, and every spec it makes lowers (the generator checks shapes, and
divisibility where JAX requires it).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

MESHES: tuple[tuple[tuple[int, ...], tuple[str, ...]], ...] = (
    ((2, 4), ("X", "Y")),
    ((4, 2), ("X", "Y")),
    ((2, 2, 2), ("X", "Y", "Z")),
    ((8,), ("X",)),
)
DIMS = (4, 8, 16)

Spec = tuple[Any, ...]  # a PartitionSpec as a tuple: None, an axis name or a tuple of names


@dataclass(frozen=True)
class InputSpec:
    id: int
    shape: tuple[int, ...]
    dtype: str = "float32"  # or "int32" (indices)
    spec: Spec | None = None  # None: no in_sharding
    priority: int | None = None  # a user priority edited onto its dims after lowering
    low: int = 0  # int inputs: values drawn from [low, high)
    high: int = 1


@dataclass(frozen=True)
class OpSpec:
    id: int  # the value it defines
    kind: str
    args: tuple[int, ...]  # value ids
    params: tuple[Any, ...]
    shape: tuple[int, ...]  # of the result


@dataclass(frozen=True)
class ProgramSpec:
    seed: int
    index: int
    mesh: int  # into MESHES
    inputs: tuple[InputSpec, ...]
    ops: tuple[OpSpec, ...]
    outputs: tuple[int, ...]
    out_specs: tuple[Spec | None, ...]

    @property
    def mesh_shape(self) -> tuple[tuple[int, ...], tuple[str, ...]]:
        return MESHES[self.mesh]

    def describe(self) -> str:
        """The program as readable pseudo-code (a failure's reproducer)."""
        shape, names = self.mesh_shape
        lines = [f"# seed={self.seed} index={self.index} mesh {dict(zip(names, shape, strict=True))}"]
        for i in self.inputs:
            extra = f" p{i.priority}" if i.priority is not None else ""
            rng = f" in [{i.low},{i.high})" if i.dtype == "int32" else ""
            lines.append(f"v{i.id}: {i.dtype}{list(i.shape)} input spec={i.spec}{extra}{rng}")
        for o in self.ops:
            args = ", ".join(f"v{a}" for a in o.args)
            lines.append(f"v{o.id}: {list(o.shape)} = {o.kind}({args}) {o.params}")
        outs = ", ".join(f"v{o} spec={s}" for o, s in zip(self.outputs, self.out_specs, strict=True))
        lines.append(f"return {outs}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Generation


@dataclass
class _Gen:
    rng: random.Random
    axes: tuple[str, ...]
    sizes: dict[str, int]
    inputs: list[InputSpec] = field(default_factory=list)
    ops: list[OpSpec] = field(default_factory=list)
    shapes: dict[int, tuple[int, ...]] = field(default_factory=dict)
    float_ids: list[int] = field(default_factory=list)
    next_id: int = 0

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def spec_for(self, shape: tuple[int, ...], p_open: float = 0.3) -> Spec:
        """A random PartitionSpec that divides `shape` (each axis used once)."""
        free = list(self.axes)
        self.rng.shuffle(free)
        out: list[Any] = []
        for d in shape:
            if free and self.rng.random() < 0.55:
                a = free[0]
                if d % self.sizes[a] == 0:
                    free.pop(0)
                    if free and self.rng.random() < 0.2 and (d // self.sizes[a]) % self.sizes[free[0]] == 0:
                        out.append((a, free.pop(0)))
                        continue
                    out.append(a)
                    continue
            out.append(None)
        return tuple(out)

    def add_input(self, shape: tuple[int, ...], dtype: str = "float32", high: int = 1,
                  low: int = 0) -> int:  # fmt: skip
        vid = self.new_id()
        spec = None
        prio = None
        if dtype == "float32" and self.rng.random() < 0.8:
            spec = self.spec_for(shape)
            if any(s is not None for s in spec) and self.rng.random() < 0.15:
                prio = self.rng.choice((0, 1))
        self.inputs.append(InputSpec(vid, shape, dtype, spec, prio, low, high))
        self.shapes[vid] = shape
        if dtype == "float32":
            self.float_ids.append(vid)
        return vid

    def add_op(self, kind: str, args: tuple[int, ...], params: tuple[Any, ...],
               shape: tuple[int, ...]) -> int:  # fmt: skip
        vid = self.new_id()
        self.ops.append(OpSpec(vid, kind, args, params, shape))
        self.shapes[vid] = shape
        self.float_ids.append(vid)
        return vid

    def pick(self, pred: Any = None) -> int | None:
        cands = [v for v in self.float_ids if pred is None or pred(self.shapes[v])]
        if not cands:
            return None
        # recent values more often: programs become chains with side branches
        return cands[-1 - min(int(self.rng.expovariate(0.5)), len(cands) - 1)]

    def same_shape(self, shape: tuple[int, ...]) -> int:
        v = self.pick(lambda s: s == shape)
        if v is None or self.rng.random() < 0.35:
            v = self.add_input(shape)
        return v


def _rand_shape(rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.choice(DIMS) for _ in range(rng.choice((2, 2, 3))))


def _step(g: _Gen) -> None:
    rng = g.rng
    kind = rng.choice(_KINDS)
    x = g.pick()
    assert x is not None
    s = g.shapes[x]
    r = len(s)
    if kind == "unary":
        g.add_op("unary", (x,), (rng.choice(("tanh", "abs", "neg", "exp_sq")),), s)
    elif kind == "binary":
        g.add_op("binary", (x, g.same_shape(s)), (rng.choice(("add", "mul", "max", "sub")),), s)
    elif kind == "where":
        g.add_op("where", (x, g.same_shape(s)), (), s)
    elif kind == "einsum" and s[-1] in DIMS:
        n = rng.choice(DIMS)
        w = g.add_input((s[-1], n))
        g.add_op("einsum", (x, w), (), s[:-1] + (n,))
    elif kind == "batched_einsum" and r == 3:
        n = rng.choice(DIMS)
        w = g.same_shape((s[0], s[2], n)) if rng.random() < 0.5 else g.add_input((s[0], s[2], n))
        g.add_op("batched_einsum", (x, w), (), (s[0], s[1], n))
    elif kind == "transpose" and r >= 2:
        perm = list(range(r))
        while perm == list(range(r)):
            rng.shuffle(perm)
        g.add_op("transpose", (x,), (tuple(perm),), tuple(s[p] for p in perm))
    elif kind == "reshape":
        if r >= 2 and rng.random() < 0.5 and s[0] * s[1] <= 256:
            g.add_op("reshape", (x,), (), (s[0] * s[1],) + s[2:])
        elif r <= 3:
            d = rng.randrange(r)
            if s[d] >= 4 and s[d] % 2 == 0:
                g.add_op("reshape", (x,), (), s[:d] + (2, s[d] // 2) + s[d + 1 :])
    elif kind == "broadcast" and r <= 3:
        g.add_op("broadcast", (x,), (), (rng.choice((2, 4)),) + s)
    elif kind == "reduce" and r >= 2:
        d = rng.randrange(r)
        g.add_op("reduce", (x,), (d, rng.choice(("sum", "max"))), s[:d] + s[d + 1 :])
    elif kind == "concat":
        d = rng.randrange(r)
        g.add_op("concat", (x, g.same_shape(s)), (d,), s[:d] + (2 * s[d],) + s[d + 1 :])
    elif kind == "slice":
        d = rng.randrange(r)
        lo = rng.randrange(s[d] // 2 + 1)
        hi = rng.randrange(lo + 1, s[d] + 1)
        g.add_op("slice", (x,), (d, lo, hi), s[:d] + (hi - lo,) + s[d + 1 :])
    elif kind == "pad":
        d = rng.randrange(r)
        lo, hi, interior = rng.choice(((1, 2, 0), (-1, 1, 0), (-2, 3, 1), (0, 0, 1), (2, -1, 0)))
        size = s[d] + lo + hi + interior * (s[d] - 1)
        if size > 0:
            g.add_op("pad", (x,), (d, lo, hi, interior), s[:d] + (size,) + s[d + 1 :])
    elif kind == "dynamic_slice":
        d = rng.randrange(r)
        size = rng.randrange(1, s[d] + 1)
        i = g.add_input((), "int32", high=s[d] + 3, low=-2)  # out of range: clamped
        g.add_op("dynamic_slice", (x, i), (d, size), s[:d] + (size,) + s[d + 1 :])
    elif kind == "dynamic_update_slice":
        d = rng.randrange(r)
        size = rng.randrange(1, s[d] + 1)
        upd = g.add_input(s[:d] + (size,) + s[d + 1 :])
        i = g.add_input((), "int32", high=s[d] + 3, low=-2)
        g.add_op("dynamic_update_slice", (x, upd, i), (d,), s)
    elif kind == "take":
        k = rng.choice((2, 4, 8))
        idx = g.add_input((k,), "int32", high=s[0])
        g.add_op("take", (x, idx), (), (k,) + s[1:])
    elif kind == "fori" and s[-1] in DIMS:
        w = g.add_input((s[-1], s[-1]))
        g.add_op("fori", (x, w), (rng.choice((2, 3)),), s)
    elif kind == "scan" and r >= 2:
        g.add_op("scan", (x,), (), s)
    elif kind == "cond":
        g.add_op("cond", (x,), (), s)
    elif kind == "wsc":
        g.add_op("wsc", (x,), (g.spec_for(s, 0.0), rng.random() < 0.3), s)
    elif kind == "shard_map":
        a = rng.choice(g.axes)
        n = g.sizes[a]
        if s[0] % n:
            return
        flavour = rng.choice(("psum", "all_gather", "ppermute", "partial"))
        if flavour == "psum":
            shape = (s[0] // n,) + s[1:]
        else:
            shape = s
        if flavour == "partial" and len(g.axes) < 2:
            return
        g.add_op("shard_map", (x,), (a, flavour), shape)


_KINDS = (
    "unary", "binary", "binary", "where", "einsum", "einsum", "batched_einsum", "transpose",
    "reshape", "broadcast", "reduce", "concat", "slice", "pad", "dynamic_slice",
    "dynamic_update_slice", "take", "fori", "scan", "cond", "wsc", "wsc", "shard_map",
)  # fmt: skip


def generate(seed: int, index: int) -> ProgramSpec:
    """Random program `index` of campaign `seed` (5-30 ops)."""
    rng = random.Random(f"shardc-programs:{seed}:{index}")
    mesh = rng.randrange(len(MESHES))
    shape, names = MESHES[mesh]
    g = _Gen(rng, names, dict(zip(names, shape, strict=True)))
    for _ in range(rng.choice((1, 2, 2, 3))):
        g.add_input(_rand_shape(rng))
    target = rng.randint(5, 30)
    tries = 0
    while len(g.ops) < target and tries < 200:
        tries += 1
        _step(g)
    # outputs: the last value and a few others; shapes kept small
    outs = [g.ops[-1].id] if g.ops else [g.float_ids[-1]]
    for _ in range(rng.choice((0, 0, 1, 2))):
        v = g.pick()
        if v is not None and v not in outs:
            outs.append(v)
    out_specs = tuple(
        g.spec_for(g.shapes[o]) if rng.random() < 0.4 else None for o in outs
    )
    return ProgramSpec(seed, index, mesh, tuple(g.inputs), tuple(g.ops), tuple(outs), out_specs)


# ---------------------------------------------------------------------------------------------
# Building and lowering


@functools.cache
def jax_mesh(mesh: int) -> Any:
    import jax
    from jax.sharding import AxisType

    shape, names = MESHES[mesh]
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(names))


def _pspec(spec: Spec) -> Any:
    from jax.sharding import PartitionSpec as P

    return P(*spec)


def _apply(op: OpSpec, vals: list[Any], prog: ProgramSpec) -> Any:
    import jax
    import jax.numpy as jnp
    from jax import lax

    k, p = op.kind, op.params
    if k == "unary":
        x = vals[0]
        return {"tanh": jnp.tanh, "abs": jnp.abs, "neg": jnp.negative,
                "exp_sq": lambda v: jnp.exp(-v * v)}[p[0]](x)  # fmt: skip
    if k == "binary":
        a, b = vals
        return {"add": jnp.add, "mul": jnp.multiply, "max": jnp.maximum, "sub": jnp.subtract}[p[0]](a, b)
    if k == "where":
        return jnp.where(vals[0] > 0, vals[0], vals[1])
    if k == "einsum":
        return jnp.einsum("...k,kn->...n", vals[0], vals[1]) * 0.25
    if k == "batched_einsum":
        return jnp.einsum("bij,bjk->bik", vals[0], vals[1]) * 0.25
    if k == "transpose":
        return jnp.transpose(vals[0], p[0])
    if k == "reshape":
        return jnp.reshape(vals[0], op.shape)
    if k == "broadcast":
        return jnp.broadcast_to(vals[0][None], op.shape)
    if k == "reduce":
        return (jnp.sum if p[1] == "sum" else jnp.max)(vals[0], axis=p[0])
    if k == "concat":
        return jnp.concatenate(vals, axis=p[0])
    if k == "slice":
        return lax.slice_in_dim(vals[0], p[1], p[2], axis=p[0])
    if k == "pad":
        x = vals[0]
        cfg = [(0, 0, 0)] * x.ndim
        cfg[p[0]] = (p[1], p[2], p[3])
        return lax.pad(x, jnp.float32(0.5), cfg)
    if k == "dynamic_slice":
        return lax.dynamic_slice_in_dim(vals[0], vals[1], p[1], axis=p[0])
    if k == "dynamic_update_slice":
        return lax.dynamic_update_slice_in_dim(vals[0], vals[1], vals[2], axis=p[0])
    if k == "take":
        return jnp.take(vals[0], vals[1], axis=0)
    if k == "fori":
        w = vals[1]
        return lax.fori_loop(0, p[0], lambda i, c: jnp.tanh(jnp.einsum("...k,kn->...n", c, w)), vals[0])
    if k == "scan":
        x = vals[0]

        def body(c: Any, xs: Any) -> tuple[Any, Any]:
            c = jnp.tanh(c + xs)
            return c, c * 2.0

        _, ys = lax.scan(body, jnp.zeros_like(x[0]), x)
        return ys
    if k == "cond":
        x = vals[0]
        return lax.cond(jnp.sum(x) > 0, jnp.tanh, lambda v: v * 2.0, x)
    if k == "wsc":
        m = jax_mesh(prog.mesh)
        spec = tuple((s if s is not None else (None if not p[1] else _unconstrained())) for s in p[0])
        return lax.with_sharding_constraint(vals[0], jax.sharding.NamedSharding(m, _pspec(spec)))
    if k == "shard_map":
        return _shard_map(vals[0], p[0], p[1], prog)
    raise AssertionError(k)


def _unconstrained() -> Any:
    from jax.sharding import PartitionSpec as P

    return P.UNCONSTRAINED


def _shard_map(x: Any, axis: str, flavour: str, prog: ProgramSpec) -> Any:
    import jax
    from jax import lax
    from jax.sharding import PartitionSpec as P

    m = jax_mesh(prog.mesh)
    shape, names = MESHES[prog.mesh]
    n = dict(zip(names, shape, strict=True))[axis]
    if flavour == "psum":
        return jax.shard_map(lambda a: lax.psum(a, axis), mesh=m, in_specs=P(axis), out_specs=P())(x)
    if flavour == "all_gather":
        return jax.shard_map(lambda a: lax.all_gather(a, axis, tiled=True), mesh=m,
                             in_specs=P(axis), out_specs=P(), check_vma=False)(x)  # fmt: skip
    if flavour == "ppermute":
        perm = [(i, (i + 1) % n) for i in range(n)]
        return jax.shard_map(lambda a: lax.ppermute(a, axis, perm), mesh=m, in_specs=P(axis),
                             out_specs=P(axis))(x)  # fmt: skip
    # partially manual: only `axis` is manual, the others stay automatic
    return jax.shard_map(lambda a: lax.all_gather(a, axis, tiled=True), mesh=m, in_specs=P(axis),
                         out_specs=P(), axis_names={axis}, check_vma=False)(x)  # fmt: skip


def build(prog: ProgramSpec) -> Any:
    """The JAX function of `prog` (positional args: the inputs in order)."""

    def fn(*args: Any) -> tuple[Any, ...]:
        env: dict[int, Any] = {i.id: a for i, a in zip(prog.inputs, args, strict=True)}
        for op in prog.ops:
            env[op.id] = _apply(op, [env[a] for a in op.args], prog)
        return tuple(env[o] for o in prog.outputs)

    return fn


def arguments(prog: ProgramSpec) -> list[np.ndarray]:
    """The inputs' values (seeded by the program)."""
    rng = np.random.default_rng([prog.seed, prog.index])
    out = []
    for i in prog.inputs:
        if i.dtype == "int32":
            out.append(rng.integers(i.low, i.high, size=i.shape).astype(np.int32))
        else:
            out.append(rng.standard_normal(i.shape).astype(np.float32))
    return out


def lower(prog: ProgramSpec) -> str:
    """The program lowered with its in/out shardings, user priorities edited in."""
    import jax
    from jax.sharding import NamedSharding

    m = jax_mesh(prog.mesh)
    in_sh = tuple(NamedSharding(m, _pspec(i.spec)) if i.spec is not None else None
                  for i in prog.inputs)  # fmt: skip
    out_sh = tuple(NamedSharding(m, _pspec(s)) if s is not None else None for s in prog.out_specs)
    jitted = jax.jit(build(prog), in_shardings=in_sh, out_shardings=out_sh, keep_unused=True)
    text = jitted.lower(
        *arguments(prog)
    ).as_text()
    for pos, i in enumerate(prog.inputs):
        if i.priority is not None and i.spec is not None and any(s is not None for s in i.spec):
            text = _with_priority(text, pos, i.priority)
    return text


def _with_priority(text: str, arg: int, prio: int) -> str:
    """Open every dim of `@main`'s argument `arg` and put `p<prio>` on its sharded dims."""
    pat = re.compile(
        r"(%arg" + str(arg) + r": tensor<[^>]*> \{[^}]*?sdy\.sharding = #sdy\.sharding<@\w+, \[)(.*?)(\]>)"
    )
    m = pat.search(text)
    if not m:
        return text
    dims = re.sub(r"\{\}", "{?}", m.group(2))
    dims = re.sub(r'(")\}', r"\1, ?}", dims)
    dims = re.sub(r'(["?])\}(?=,|$)', r"\1}p" + str(prio), dims)
    dims = dims.replace("{?}p" + str(prio), "{?}")
    return text[: m.start(2)] + dims + text[m.end(2) :]


# ---------------------------------------------------------------------------------------------
# Shrinking helpers


def without_op(prog: ProgramSpec, op_id: int) -> ProgramSpec | None:
    """`prog` minus the op defining `op_id`: its users read a same-shaped operand of it instead
    where one exists, else they go too; unused inputs go. None when no output would remain."""
    ops = list(prog.ops)
    idx = next(i for i, o in enumerate(ops) if o.id == op_id)
    gone = ops.pop(idx)
    subst = next((a for a in gone.args if _shape_of(prog, a) == gone.shape), None)
    removed = {gone.id}
    kept: list[OpSpec] = []
    for o in ops:
        args = tuple(subst if (a == gone.id and subst is not None) else a for a in o.args)
        if any(a in removed for a in args):
            removed.add(o.id)
            continue
        kept.append(replace(o, args=args))
    outs, specs = [], []
    for o, s in zip(prog.outputs, prog.out_specs, strict=True):
        o = subst if (o == gone.id and subst is not None) else o
        if o in removed or o in outs:
            continue
        outs.append(o)
        specs.append(s)
    if not outs:
        return None
    used = {a for o in kept for a in o.args} | set(outs)
    inputs = tuple(i for i in prog.inputs if i.id in used)
    return replace(prog, inputs=inputs, ops=tuple(kept), outputs=tuple(outs), out_specs=tuple(specs))


def _shape_of(prog: ProgramSpec, vid: int) -> tuple[int, ...] | None:
    for i in prog.inputs:
        if i.id == vid:
            return i.shape
    for o in prog.ops:
        if o.id == vid:
            return o.shape
    return None
