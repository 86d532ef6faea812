"""The jaxlib/XLA edge: MLIR text in and out through jaxlib's bindings (importer, exporter),
the module XLA is handed and compiles, and the collectives read back from its HLO."""
