// RUN: shardc diff %S/Inputs/diff_a.mlir %S/Inputs/diff_b.mlir | filecheck %s
// RUN: shardc diff --json %S/Inputs/diff_a.mlir %S/Inputs/diff_b.mlir | filecheck %s --check-prefix=JSON
// A priority change: in A the two conflicting annotations (x and y on dim 0, both p0) leave
// the add replicated, so both operands are gathered (1 KiB each); in B %arg1's y is p0 and
// wins: the add and everything after it are on y, %arg1 needs nothing, and %arg0 goes from x
// to y as XLA's partitioner moves it (`shardc plan --check` of B matches it): a
// collective-permute to the devices that hold its y rows, then a gather over the part of x
// that y does not cover. B moves 1.2 KiB less.

// CHECK: 3 values differ
// CHECK-NEXT: @main %0: replicated -> <@mesh, [{"y"}, {}]>
// CHECK-NEXT: @main %1: replicated -> <@mesh, [{"y"}, {}]>
// CHECK-NEXT: @main result 0: replicated -> <@mesh, [{"y"}, {}]>
// CHECK-NEXT: 2 collectives added
// CHECK-NEXT: + collective-permute {x, y} 256 B: %arg0 of stablehlo.add in @main
// CHECK-NEXT: + all-gather {"x":(1)2} 512 B: %arg0 of stablehlo.add in @main
// CHECK-NEXT: 2 collectives removed
// CHECK-NEXT: - all-gather {x} 1.0 KiB: %arg0 of stablehlo.add in @main
// CHECK-NEXT: - all-gather {y} 1.0 KiB: %arg1 of stablehlo.add in @main
// CHECK-NEXT: bytes delta (B - A): -1.2 KiB

// JSON: "values": [
// JSON: "collectives_added": [
// JSON: "kind": "collective-permute",
// JSON: "collectives_removed": [
// JSON: "kind": "all-gather",
// JSON: "bytes_delta": -1280
