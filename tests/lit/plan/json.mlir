// RUN: shardc plan --json %s | filecheck %s
// `--json` writes exactly the fixed schema: collectives (kind, axes, bytes, func, value, op,
// loc, cause, fix), total_bytes, bytes_per_axis, memory (arguments, results, peak,
// aliased).

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK: "collectives": [
// CHECK-NEXT: {
// CHECK-NEXT: "kind": "all-reduce",
// CHECK-NEXT: "axes": [
// CHECK-NEXT: "x"
// CHECK-NEXT: ],
// CHECK-NEXT: "bytes": 1024,
// CHECK-NEXT: "func": "main",
// CHECK-NEXT: "value": "%0 at json.mlir:{{[0-9]+}}",
// CHECK-NEXT: "op": "stablehlo.dot_general",
// CHECK-NEXT: "loc": "{{.*}}json.mlir:{{[0-9]+}}:{{[0-9]+}}",
// CHECK-NEXT: "cause": "reduction factor 2 (size 16) sharded on {\"x\"}: %arg0 dim 1 {\"x\"} (annotated), %arg1 dim 0 {\"x\"} (annotated)",
// CHECK-NEXT: "fix": "annotate argument %arg1 as [{}, {}]: the program then moves 512 B instead of 1.0 KiB (512 B less)"
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "total_bytes": 1024,
// CHECK-NEXT: "bytes_per_axis": {
// CHECK-NEXT: "x": 1024
// CHECK-NEXT: },
// CHECK-NEXT: "memory": {
// CHECK-NEXT: "arguments": 640,
// CHECK-NEXT: "results": 1024,
// CHECK-NEXT: "peak": 1024,
// CHECK-NEXT: "aliased": 0
// CHECK-NEXT: }
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
