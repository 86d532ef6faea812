"""Every step model by name, with the mesh it is sharded on and its size type: what the tests
and the bench iterate over."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jax.sharding import Mesh

from . import flax_transformer, llama, lora, moe, scan_decoder, vit
from .common import auto_mesh
from .harness import Step


@dataclass(frozen=True)
class Model:
    build: Callable[..., Step]  # (mesh, size) -> Step
    mesh_axes: dict[str, int]
    size: type  # the model's `Size` dataclass (its defaults are the tests' tiny sizes)
    # another model whose step on one device is the same program (its unsharded run serves)
    unsharded_as: str | None = None

    def mesh(self) -> Mesh:
        return auto_mesh(self.mesh_axes)

    def make(self, size: Any = None) -> Callable[[Mesh], Step]:
        """`mesh -> Step` at `size` (the tests' size by default)."""
        return functools.partial(self.build, size=size if size is not None else self.size())


MODELS: dict[str, Model] = {
    "llama": Model(llama.build, llama.MESH_AXES, llama.Size),
    "lora": Model(lora.build, lora.MESH_AXES, lora.Size),
    "scan": Model(scan_decoder.build, scan_decoder.MESH_AXES, scan_decoder.Size),
    # the layouts differ only in their constraints and rules, no-ops on one device
    **{f"flax_{layout}": Model(functools.partial(flax_transformer.build, layout=layout),
                               axes, flax_transformer.Size, unsharded_as="flax_dp")
       for layout, (axes, _) in flax_transformer.LAYOUTS.items()},
    "moe": Model(moe.build, moe.MESH_AXES, moe.Size),
    "vit": Model(vit.build, vit.MESH_AXES, vit.Size),
}
