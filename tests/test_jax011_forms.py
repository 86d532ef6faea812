"""What newer jax (0.11) emits that jaxlib 0.10.2 cannot parse, read by shardc's own parser.

jax 0.11 writes collectives' groups as mesh axes (`#stablehlo.replica_group_mesh_axes`) naming a
second, identical mesh symbol. The text below is jax 0.11.2's lowering of a seed-000 shard_map,
in generic form, so no jaxlib parse is needed to test how shardc reads it.
"""

from __future__ import annotations

from shardc.api.check import check_module
from shardc.api.propagate import propagate_module
from shardc.backend.xla import _hlo_shardings
from shardc.dialect.text import absorb_sharding_attrs, parse_generic, print_generic
from shardc.passes.export import export_module
from shardc.passes.manual.collectives import parse_mesh_axes_groups

GROUPS_Y = '#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "y">]>'
GROUPS_X = '#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "x">]>'

JAX_011_SHARD_MAP = f'''"builtin.module"() <{{sym_name = "jit_body"}}> ({{
  "sdy.mesh"() <{{mesh = #sdy.mesh<["x"=4, "y"=2]>, sym_name = "mesh"}}> : () -> ()
  "sdy.mesh"() <{{mesh = #sdy.mesh<["x"=4, "y"=2]>, sym_name = "mesh_0"}}> : () -> ()
  "func.func"() <{{function_type = (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>, sym_name = "main", sym_visibility = "public"}}> ({{
  ^bb0(%arg0: tensor<16x16xf32>, %arg1: tensor<16x8xf32>):
    %0 = "sdy.manual_computation"(%arg0, %arg1) <{{in_shardings = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{"y"}}]>, <@mesh, [{{"y"}}, {{}}]>]>, manual_axes = #sdy<manual_axes{{"x", "y"}}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>]>}}> ({{
    ^bb0(%arg2: tensor<4x8xf32>, %arg3: tensor<8x8xf32>):
      %1 = "stablehlo.dot_general"(%arg2, %arg3) <{{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}}> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      %2 = "stablehlo.all_reduce"(%1) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {GROUPS_Y}, use_global_device_ids}}> ({{
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %9 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%9) : (tensor<f32>) -> ()
      }}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %3 = "stablehlo.all_gather"(%2) <{{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {GROUPS_X}, use_global_device_ids}}> : (tensor<4x8xf32>) -> tensor<16x8xf32>
      %4 = "stablehlo.reduce_scatter"(%3) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {GROUPS_X}, scatter_dimension = 0 : i64, use_global_device_ids}}> ({{
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %9 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%9) : (tensor<f32>) -> ()
      }}) : (tensor<16x8xf32>) -> tensor<4x8xf32>
      "sdy.return"(%4) : (tensor<4x8xf32>) -> ()
    }}) : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    "func.return"(%0) : (tensor<16x8xf32>) -> ()
  }}) : () -> ()
}}) {{mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}} : () -> ()
'''


def _module():  # type: ignore[no-untyped-def]
    module = parse_generic(JAX_011_SHARD_MAP, "jax011")
    absorb_sharding_attrs(module)
    return module


def test_mesh_axes_groups_parse() -> None:
    assert parse_mesh_axes_groups(GROUPS_Y) == ("mesh_0", ("y",))
    two = GROUPS_X.replace('name = "x">]', 'name = "x">, #stablehlo.axis_ref<name = "y">]')
    assert parse_mesh_axes_groups(two) == ("mesh_0", ("x", "y"))
    sub = GROUPS_X.replace('name = "x">', 'name = "x", sub_axis_info = #stablehlo.sub_axis<1, 2>>')
    assert parse_mesh_axes_groups(sub) == ("mesh_0", None)  # reported, not guessed
    assert parse_mesh_axes_groups("dense<[[0, 1]]> : tensor<1x2xi64>") is None


def test_collectives_over_mesh_axes_are_decoded() -> None:
    report = check_module(_module())
    (region,) = report.regions
    decoded = [(c.kind, c.axes, c.group_size) for c in region.collectives]
    assert decoded == [("all_reduce", ("y",), 2), ("all_gather", ("x",), 4), ("reduce_scatter", ("x",), 4)]


def test_a_mesh_named_by_collectives_survives_propagation() -> None:
    module = _module()
    propagate_module(module)
    export_module(module, "pin")
    text = print_generic(module)
    assert 'sym_name = "mesh_0"' in text  # still declared: the collectives refer to it
    assert "@mesh_0" in text and "replica_group_mesh_axes" in text


def test_one_device_executables_have_replicated_shardings() -> None:
    shardings = _hlo_shardings(None, 2)
    assert len(shardings) == 2 and all(s.is_replicated() for s in shardings)
