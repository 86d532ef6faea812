// RUN: printf '' | not shardc opt - 2>&1 | filecheck %s
// CHECK: error: <stdin>: empty input: expected an MLIR module
