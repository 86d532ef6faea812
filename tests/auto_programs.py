"""Programs for automatic sharding, and the four expert layouts of each.

Each program is a JAX function with its argument shapes, where only the input batch is annotated
(`batch_only`); `hand` maps each expert (data parallel, FSDP, Megatron, FSDP+TP, each written by
one function over the program's parameter tree, for every parameter and optimizer moment) to its
in/out shardings on the 4x2 mesh (data=4, model=2). Shared by the auto tests and
bench/bench_auto.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

MESH = "data=4,model=2"


def collective_bytes(hlo: str) -> int:
    """Bytes per device of the collectives in partitioned HLO, by the communication plan's
    measure (per collective the larger of its operand and result local bytes, times known loop
    trip counts): the differential suite's one reader of XLA's HLO."""
    from tests.differential.hlo_bytes import total_bytes

    return total_bytes(hlo)


# ---------------------------------------------------------------------------------------------
# the four expert layouts, written as users write them: one function per expert over a model's
# parameter tree; the same layout for the optimizer's moments as for their parameters

EXPERTS = ("data parallel", "FSDP", "Megatron", "FSDP+TP")
AXES = {"data": 4, "model": 2}
EVERY = "{data, model}"  # every mesh axis on one dim (major to minor)


def _spec(rank: int, placed: dict[int, str]) -> str:
    """A closed spec of `rank` dims with mesh axes `placed` on some (`"data, _"`)."""
    return ", ".join(placed.get(i, "_") for i in range(rank))


def _largest(shape: tuple[int, ...], by: int, but: int = -1) -> int:
    """The largest dim of `shape` that `by` divides (the first of equals), other than `but`;
    -1 where none (the leaf stays replicated there: JAX takes no uneven argument)."""
    dims = [i for i, n in enumerate(shape) if i != but and n % by == 0]
    return max(dims, key=lambda i: (shape[i], -i)) if dims else -1


def _over(params: Any, tp: Any, spec: Callable[[tuple[int, ...], int], str]) -> Any:
    import jax

    return jax.tree.map(lambda w, d: spec(np.shape(w), d), params, tp)


def data_parallel(params: Any, tp: Any) -> Any:
    """Data parallelism: every parameter replicated (the batch goes over every mesh axis)."""
    return _over(params, tp, lambda shape, _: _spec(len(shape), {}))


def fsdp(params: Any, tp: Any) -> Any:
    """FSDP: each parameter's largest dim split over every mesh axis (the batch too)."""
    size = AXES["data"] * AXES["model"]
    return _over(params, tp, lambda shape, _: _spec(len(shape), {_largest(shape, size): EVERY}))


def megatron(params: Any, tp: Any) -> Any:
    """Megatron: column-parallel weights split on their output dim, row-parallel ones on their
    input dim, on the model axis (`tp`: per leaf, the dim Megatron splits; -1 none); the batch
    on the data axis."""
    return _over(params, tp, lambda shape, d: _spec(len(shape), {d: "model"}))


def fsdp_tp(params: Any, tp: Any) -> Any:
    """FSDP+TP: Megatron, plus each weight's largest other dim on the data axis."""

    def spec(shape: tuple[int, ...], d: int) -> str:
        other = _largest(shape, AXES["data"], but=d) if len(shape) > 1 else -1
        return _spec(len(shape), {other: "data", d: "model"})

    return _over(params, tp, spec)


# expert -> (its writer, the mesh axes of the batch)
WRITERS: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "data parallel": (data_parallel, EVERY),
    "FSDP": (fsdp, EVERY),
    "Megatron": (megatron, "data"),
    "FSDP+TP": (fsdp_tp, "data"),
}


@dataclass
class Program:
    """A JAX function `fun(state, *data)` with example arguments: `state` is the parameters, or
    with `adam` (params, mu, nu); a train step returns (new state, loss). `tp` gives, per
    parameter leaf, the dim Megatron puts on the model axis (-1: none): all an expert writer
    needs besides the shapes. Only the batch (dim 0 of each data argument) is annotated in
    `batch_only`; `hand` maps each expert to its (in, out) shardings on the 4x2 mesh."""

    name: str
    fun: Callable[..., Any]
    args: Callable[[], tuple[Any, ...]]  # numpy arrays
    tp: Any
    adam: bool = False
    train: bool = True

    def _shapes(self) -> tuple[Any, list[int]]:
        args = self.args()
        return (args[0][0] if self.adam else args[0]), [np.ndim(a) for a in args[1:]]

    @property
    def batch_only(self) -> tuple[Any, ...]:
        """in_shardings with only the batch annotated (on the data axis)."""
        return (None, *(_spec(r, {0: "data"}) for r in self._shapes()[1]))

    def expert(self, name: str) -> tuple[Any, Any]:
        """(in_shardings, out_shardings) of expert `name` for every parameter and moment."""
        writer, batch = WRITERS[name]
        params, ranks = self._shapes()
        specs = writer(params, self.tp)
        state = (specs, specs, specs) if self.adam else specs
        data = tuple(_spec(r, {0: batch}) for r in ranks)
        return (state, *data), ((state, None) if self.train else None)

    @property
    def hand(self) -> dict[str, tuple[Any, Any]]:
        """Every expert's (in, out) shardings."""
        return {name: self.expert(name) for name in EXPERTS}


def _adam(loss: Callable[[Any], Any], state: tuple[Any, Any, Any]) -> Any:
    """One Adam step of `loss` over the parameters of `state` (params, mu, nu): the new state
    (a training loop's: parameters and both moments in and out) and the loss."""
    import jax
    import jax.numpy as jnp

    params, mu, nu = state
    value, grads = jax.value_and_grad(loss)(params)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, mu, grads)
    nu = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, nu, grads)
    params = jax.tree.map(lambda w, m, v: w - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, mu, nu)
    return (params, mu, nu), value


# the second moment a training loop's state holds after some steps: at zero (a first step) the
# update is about lr * sign(g), so a gradient near zero whose sign the sharded run's summation
# order flips moves its weight by 2 lr, and a right layout's numbers differ from the unsharded
# run's (seen at width 512); with nu > 0 the update is smooth in g
NU = 1e-4


def _with_moments(make: Callable[[], tuple[Any, ...]]) -> Callable[[], tuple[Any, ...]]:
    """`make`'s arguments with the parameters replaced by (params, mu, nu): mu at zero, nu at
    `NU`."""
    import jax

    def args() -> tuple[Any, ...]:
        params, *data = make()
        mu = jax.tree.map(np.zeros_like, params)
        return ((params, mu, jax.tree.map(lambda w: np.full_like(w, NU), params)), *data)

    return args


def _init(rng: np.random.Generator, shapes: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """Parameters N(0, 1/fan_in) (fan in: all dims but the last); norm scales one, biases zero."""
    out = {}
    for k, s in shapes.items():
        if k.startswith("scale"):
            out[k] = np.ones(s, np.float32)
        elif k.startswith("bias"):
            out[k] = np.zeros(s, np.float32)
        else:
            fan = int(np.prod(s[:-1])) if len(s) > 1 else 1
            out[k] = (rng.standard_normal(s) / np.sqrt(fan)).astype(np.float32)
    return out


# ---------------------------------------------------------------------------------------------
# MLP

B, D, H = 32, 128, 512
MLP_TP = [1, 0, 1]  # column, row, column


def _mlp_forward(params: list[Any], x: Any) -> Any:
    import jax

    h = x
    for i, w in enumerate(params):
        h = h @ w
        if i < len(params) - 1:
            h = jax.nn.relu(h)
    return h


def mlp_train_step(params: list[Any], x: Any, y: Any) -> Any:
    """One SGD step of a 3-layer MLP on a squared loss: new params and the loss."""
    import jax
    import jax.numpy as jnp

    def loss(p: list[Any]) -> Any:
        return jnp.mean((_mlp_forward(p, x) - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return [w - 0.05 * g for w, g in zip(params, grads, strict=True)], value


def mlp_forward(params: list[Any], x: Any) -> Any:
    """The MLP's forward pass."""
    return _mlp_forward(params, x)


def mlp_adam_step(state: tuple[Any, Any, Any], x: Any, y: Any) -> Any:
    """One Adam step of the 3-layer MLP on a squared loss."""
    import jax.numpy as jnp

    return _adam(lambda p: jnp.mean((_mlp_forward(p, x) - y) ** 2), state)


def _mlp_params(rng: np.random.Generator) -> list[np.ndarray]:
    shapes = [(D, H), (H, H), (H, D)]
    return [(rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for s in shapes]


def _mlp_train_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    return (_mlp_params(rng), rng.standard_normal((B, D)).astype(np.float32),
            rng.standard_normal((B, D)).astype(np.float32))  # fmt: skip


def _mlp_fwd_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(1)
    return (_mlp_params(rng), rng.standard_normal((B, D)).astype(np.float32))


def mlp_adam_program() -> Program:
    """The MLP's Adam step (parameters and both moments in and out)."""
    return Program("MLP Adam train step", mlp_adam_step, _with_moments(_mlp_train_args), MLP_TP,
                   adam=True)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# transformer layer

TB, TS, TE, TH, TD, TF = 8, 16, 64, 4, 16, 256
TF_SHAPES = {"wq": (TE, TH, TD), "wk": (TE, TH, TD), "wv": (TE, TH, TD), "wo": (TH, TD, TE),
             "w_in": (TE, TF), "w_out": (TF, TE)}  # fmt: skip
# heads and the hidden dim on the model axis: q, k, v and w_in column-, wo and w_out row-parallel
TF_TP = {"wq": 1, "wk": 1, "wv": 1, "wo": 0, "w_in": 1, "w_out": 0}


def _layer(p: dict[str, Any], x: Any) -> Any:
    import jax
    import jax.numpy as jnp

    def norm(v: Any) -> Any:
        m = v.mean(-1, keepdims=True)
        return (v - m) * jax.lax.rsqrt(((v - m) ** 2).mean(-1, keepdims=True) + 1e-5)

    h = norm(x)
    q = jnp.einsum("bse,ehd->bshd", h, p["wq"])
    k = jnp.einsum("bse,ehd->bshd", h, p["wk"])
    v = jnp.einsum("bse,ehd->bshd", h, p["wv"])
    s = jnp.einsum("bshd,bthd->bhst", q, k) / np.sqrt(TD)
    a = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhst,bthd->bshd", a, v)
    x = x + jnp.einsum("bshd,hde->bse", o, p["wo"])
    h = norm(x)
    h = jax.nn.gelu(jnp.einsum("bse,ef->bsf", h, p["w_in"]))
    return x + jnp.einsum("bsf,fe->bse", h, p["w_out"])


def transformer_train_step(params: dict[str, Any], x: Any, y: Any) -> Any:
    """One SGD step of a transformer layer (attention + MLP) on a squared loss."""
    import jax
    import jax.numpy as jnp

    def loss(p: dict[str, Any]) -> Any:
        return jnp.mean((_layer(p, x) - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda w, g: w - 0.05 * g, params, grads), value


def transformer_forward(params: dict[str, Any], x: Any) -> Any:
    """The transformer layer's forward pass."""
    return _layer(params, x)


def adam_train_step(state: tuple[Any, Any, Any], x: Any, y: Any) -> Any:
    """One Adam step of a stack of transformer layers on a squared loss."""
    import jax.numpy as jnp

    def loss(p: dict[str, Any]) -> Any:
        h = x
        for layer in p["layers"]:
            h = _layer(layer, h)
        return jnp.mean((h - y) ** 2)

    return _adam(loss, state)


def _tf_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(2)
    params = {
        k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for k, s in TF_SHAPES.items()
    }
    x = rng.standard_normal((TB, TS, TE)).astype(np.float32)
    return params, x, rng.standard_normal((TB, TS, TE)).astype(np.float32)


def adam_args(layers: int, width: int = TE, ffn: int = TF) -> Callable[[], tuple[Any, ...]]:
    """The arguments of `adam_train_step` with `layers` layers of model width `width` and hidden
    width `ffn` (moments start at zero)."""
    shapes = {"wq": (width, TH, TD), "wk": (width, TH, TD), "wv": (width, TH, TD),
              "wo": (TH, TD, width), "w_in": (width, ffn), "w_out": (ffn, width)}  # fmt: skip

    def make() -> tuple[Any, ...]:
        rng = np.random.default_rng(3)
        stack = [
            {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
             for k, s in shapes.items()}
            for _ in range(layers)
        ]  # fmt: skip
        x = rng.standard_normal((TB, TS, width)).astype(np.float32)
        return {"layers": stack}, x, rng.standard_normal((TB, TS, width)).astype(np.float32)

    return _with_moments(make)


def adam_program(layers: int, width: int = TE, ffn: int = TF) -> Program:
    """The transformer stack's Adam step (parameters and both moments in and out)."""
    name = f"{layers}-layer Adam train step" + (f" (width {width})" if width != TE else "")
    return Program(name, adam_train_step, adam_args(layers, width, ffn),
                   {"layers": [dict(TF_TP) for _ in range(layers)]}, adam=True)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# mixture of experts: top-2 routing with a capacity per expert (tests/steps/moe.py's router),
# dispatch and combine as einsums over one-hot tensors, a GELU MLP per expert

MG, MS, MD, ME, MF = 8, 16, 32, 8, 64  # groups, group size, width, experts, expert hidden
MOE_SHAPES = {"router": (MD, ME), "w_in": (ME, MD, MF), "w_out": (ME, MF, MD)}
# the experts dim on the model axis (expert parallelism: the MoE's own model-axis split)
MOE_TP = {"router": -1, "w_in": 0, "w_out": 0}


def moe_layer(p: dict[str, Any], x: Any) -> Any:
    """The layer's residual output `[groups, group_size, width]`."""
    import jax
    import jax.numpy as jnp

    from tests.steps.moe import Size, route

    size = Size(experts=ME, top_k=2, dim=MD, ffn=MF, groups=MG, group_size=MS)
    dispatch, combine, _ = route(jnp.einsum("gsd,de->gse", x, p["router"]), size)
    expert_in = jnp.einsum("gsec,gsd->egcd", dispatch, x)
    hidden = jax.nn.gelu(jnp.einsum("egcd,edf->egcf", expert_in, p["w_in"]))
    out = jnp.einsum("egcf,efd->egcd", hidden, p["w_out"])
    return x + jnp.einsum("gsec,egcd->gsd", combine, out)


def moe_adam_step(state: tuple[Any, Any, Any], x: Any, y: Any) -> Any:
    """One Adam step of the mixture-of-experts layer on a squared loss."""
    import jax.numpy as jnp

    return _adam(lambda p: jnp.mean((moe_layer(p, x) - y) ** 2), state)


def _moe_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(4)
    params = _init(rng, MOE_SHAPES)
    # router logits far apart, so that no top-2 choice is a near tie that the sharded and the
    # unsharded run's round-off could break differently
    params["router"] = (rng.standard_normal(MOE_SHAPES["router"]) * 2).astype(np.float32)
    x = rng.standard_normal((MG, MS, MD)).astype(np.float32)
    return params, x, rng.standard_normal((MG, MS, MD)).astype(np.float32)


def moe_adam_program() -> Program:
    """The mixture-of-experts layer's Adam step."""
    return Program("MoE Adam train step", moe_adam_step, _with_moments(_moe_args), MOE_TP,
                   adam=True)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# conv net: two 3x3 convolutions (NHWC), each with batch-statistics normalization and ReLU,
# global average pooling, a dense head

CB, CHW, CIN, C1, C2, CO = 8, 8, 4, 32, 64, 16
CONV_SHAPES = {"conv1": (3, 3, CIN, C1), "scale1": (C1,), "bias1": (C1,),
               "conv2": (3, 3, C1, C2), "scale2": (C2,), "bias2": (C2,), "head": (C2, CO)}  # fmt: skip
# conv1 column-parallel (its output channels, and their norm, on model), conv2 row-parallel
# (its input channels), the head column-parallel
CONV_TP = {"conv1": 3, "scale1": 0, "bias1": 0, "conv2": 2, "scale2": -1, "bias2": -1, "head": 1}


def conv_net(p: dict[str, Any], x: Any) -> Any:
    """The conv net's output `[batch, CO]`."""
    import jax

    def block(h: Any, i: int) -> Any:
        h = jax.lax.conv_general_dilated(h, p[f"conv{i}"], (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))  # fmt: skip
        m = h.mean((0, 1, 2))
        v = ((h - m) ** 2).mean((0, 1, 2))
        return jax.nn.relu((h - m) * jax.lax.rsqrt(v + 1e-5) * p[f"scale{i}"] + p[f"bias{i}"])

    return block(block(x, 1), 2).mean((1, 2)) @ p["head"]


def conv_adam_step(state: tuple[Any, Any, Any], x: Any, y: Any) -> Any:
    """One Adam step of the conv net on a squared loss."""
    import jax.numpy as jnp

    return _adam(lambda p: jnp.mean((conv_net(p, x) - y) ** 2), state)


def _conv_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((CB, CHW, CHW, CIN)).astype(np.float32)
    return _init(rng, CONV_SHAPES), x, rng.standard_normal((CB, CO)).astype(np.float32)


def conv_adam_program() -> Program:
    """The conv net's Adam step."""
    return Program("conv net Adam train step", conv_adam_step, _with_moments(_conv_args),
                   CONV_TP, adam=True)  # fmt: skip


def transformer_forward_program() -> Program:
    """The transformer layer's forward pass."""
    return Program("transformer forward", transformer_forward, lambda: _tf_args()[:2], TF_TP,
                   train=False)  # fmt: skip


def model_set() -> list[Program]:
    """Issue 23's model set: the MLP's and a transformer layer's Adam steps, a transformer
    forward, a mixture-of-experts layer's and a conv net's Adam steps."""
    return [mlp_adam_program(), adam_program(1), transformer_forward_program(),
            moe_adam_program(), conv_adam_program()]  # fmt: skip


# budgets (bytes) per program for the bench table: one every expert meets, then tighter ones
BUDGETS: dict[str, tuple[int, ...]] = {
    "MLP Adam train step": (11_000_000, 6_000_000, 1_600_000),
    "1-layer Adam train step": (1_300_000, 700_000, 390_000),
    "transformer forward": (300_000, 250_000, 160_000, 120_000),
    "MoE Adam train step": (850_000, 400_000, 250_000),
    "conv net Adam train step": (600_000, 350_000, 270_000),
    # issue 23's measured failures at their sizes: 19.1 MiB at 3 layers, 76.3 MiB at 12
    "3-layer Adam train step (width 512)": (20_000_000,),
    "12-layer Adam train step (width 512)": (80_000_000,),
}
# (width, hidden width) of the transformer stacks of issue 23's measured failures, whose dims
# the issue did not record: at these, FSDP+TP needs 19.1 MiB at 3 layers by XLA (the issue's
# 3-layer budget) and at 12 layers meets 76.3 MiB at 75.4 MiB moving 64.3 MiB (the issue: 67.4
# MiB moving 66.0 MiB); FSDP meets both budgets too
FULL = (512, 768)


def programs() -> list[Program]:
    """MLP train step, transformer layer train step (SGD), MLP forward, transformer forward."""
    return [Program("MLP train step", mlp_train_step, _mlp_train_args, MLP_TP),
            Program("transformer train step", transformer_train_step, _tf_args, TF_TP),
            Program("MLP forward", mlp_forward, _mlp_fwd_args, MLP_TP, train=False),
            transformer_forward_program()]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# measuring


@dataclass
class Measured:
    """What XLA made of one layout: collective bytes, memory_analysis, numbers."""

    bytes: int
    memory: int  # argument + output + temp - alias, per device
    outputs: list[np.ndarray]
    in_shardings: tuple[Any, ...] = ()
    auto: Any = None  # auto's report (`AutoReport`), where auto chose the layout
    seconds: float = 0.0  # the lower + compile, auto's solves and XLA checks included


def fresh(fun: Callable[..., Any]) -> Callable[..., Any]:
    """A new function object for `fun`: JAX caches lowerings per function, and shardc's
    frontend writes a trace's shardings into that cached module, so a second trace of the same
    function inherits the first one's specs where it passes None (seen while writing these
    tests; reported, not fixed here)."""

    def call(*args: Any) -> Any:
        return fun(*args)

    return call


def measure(prog: Program, in_sh: Any, out_sh: Any = None, **jit_kwargs: Any) -> Measured:
    """Lower with shardc.jit, compile as `.compile()` does (what a call runs), run it, read the
    compiled program's collective bytes and memory_analysis."""
    import jax

    import shardc

    f = shardc.jit(fresh(prog.fun), mesh=MESH, in_shardings=in_sh, out_shardings=out_sh,
                   **jit_kwargs)  # fmt: skip
    args = prog.args()
    t0 = time.perf_counter()
    lowered = f.lower(*args)
    compiled = lowered.compile()
    seconds = time.perf_counter() - t0
    exe = compiled.executable
    stats = exe.memory_analysis()
    mem = (stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
           - stats.alias_size_in_bytes)  # fmt: skip
    outs = [np.asarray(x) for x in jax.tree.leaves(compiled(*args))]
    auto = getattr(lowered.report, "auto", None)
    return Measured(collective_bytes(exe.as_text()), mem, outs, lowered.in_shardings, auto, seconds)


def jax_bytes(prog: Program, in_sh: Any, out_sh: Any = None) -> int:
    """Collective bytes of plain `jax.jit`'s compiled program with the same in/out shardings
    (the spec texts as NamedShardings on the 4x2 mesh, `None` left to XLA): the reference a
    layout written through shardc.jit must not move more than."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardc.frontend.specs import parse_spec

    mesh = jax.make_mesh(tuple(AXES.values()), tuple(AXES),
                         axis_types=(jax.sharding.AxisType.Auto,) * len(AXES))  # fmt: skip

    def named(spec: str | None) -> Any:
        if spec is None:
            return None
        dims = [tuple(a.name for a in d.axes) for d in parse_spec(spec).dims]
        return NamedSharding(mesh, P(*(d if len(d) > 1 else (d[0] if d else None) for d in dims)))

    def tree(specs: Any) -> Any:
        return jax.tree.map(named, specs, is_leaf=lambda v: v is None or isinstance(v, str))

    f = jax.jit(fresh(prog.fun), in_shardings=tree(in_sh), out_shardings=tree(out_sh))
    text = f.lower(*prog.args()).compile().as_text()
    assert text is not None
    return collective_bytes(text)


def check_fits(prog: Program, budget: int, experts: dict[str, Measured], auto: Measured) -> None:
    """Issue 23's promise for auto's layout `auto` at `budget`: it fits by XLA's
    memory_analysis, computes the unsharded numbers, and moves at most 1.1x (+256 B) the
    collective bytes of the best of `experts` that fits (some must)."""
    fitting = {k: m.bytes for k, m in experts.items() if m.memory <= budget}
    assert fitting, ("some expert must fit the budget", {k: m.memory for k, m in experts.items()})
    assert auto.memory <= budget, (auto.memory, budget)
    for got, want in zip(auto.outputs, reference(prog), strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
    assert auto.bytes <= 1.1 * min(fitting.values()) + 256, (auto.bytes, fitting)


def check_prediction(auto: Measured) -> None:
    """What auto reports (the plan's figures of the layout it chose) is within 10% (+256 B) of
    XLA's collective bytes and 20% of its memory (issue 23 item 1)."""
    report = auto.auto
    assert report.planned_bytes is not None and report.planned_memory is not None
    assert abs(report.planned_memory - auto.memory) <= 0.2 * auto.memory, (
        report.planned_memory, auto.memory)  # fmt: skip
    assert abs(report.planned_bytes - auto.bytes) <= 0.1 * auto.bytes + 256, (
        report.planned_bytes, auto.bytes)  # fmt: skip


def reference(prog: Program) -> list[np.ndarray]:
    """The unsharded result (plain jax.jit on one device)."""
    import jax

    out = jax.jit(prog.fun)(*prog.args())
    return [np.asarray(x) for x in jax.tree.leaves(out)]
