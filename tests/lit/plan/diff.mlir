// RUN: shardc diff %S/Inputs/diff_a.mlir %S/Inputs/diff_b.mlir | filecheck %s
// RUN: shardc diff --json %S/Inputs/diff_a.mlir %S/Inputs/diff_b.mlir | filecheck %s --check-prefix=JSON
// A priority change: in A the two conflicting annotations (x and y on dim 0, both p0) leave
// the add replicated, so both operands are gathered (1 KiB each); in B %arg1's y is p0 and
// wins: the add and everything after it are on y, %arg1 needs nothing, and %arg0 goes from x
// to y (gathered, then sliced). One all-gather less: B moves 1 KiB less.

// CHECK: 3 values differ
// CHECK-NEXT: @main %0: replicated -> <@mesh, [{"y"}, {}]>
// CHECK-NEXT: @main %1: replicated -> <@mesh, [{"y"}, {}]>
// CHECK-NEXT: @main result 0: replicated -> <@mesh, [{"y"}, {}]>
// CHECK-NEXT: 1 collectives added
// CHECK-NEXT: + all-slice {y} 0 B: %arg0 of stablehlo.add in @main
// CHECK-NEXT: 1 collectives removed
// CHECK-NEXT: - all-gather {y} 1.0 KiB: %arg1 of stablehlo.add in @main
// CHECK-NEXT: bytes delta (B - A): -1.0 KiB

// JSON: "values": [
// JSON: "collectives_added": [
// JSON: "kind": "all-slice",
// JSON: "collectives_removed": [
// JSON: "kind": "all-gather",
// JSON: "bytes_delta": -1024
