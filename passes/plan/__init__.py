"""The communication plan: collectives, bytes, causes and fixes, memory (one module per concern).

`layout` reads shardings from the IR (the one adapter to switch when the storage of shardings
changes), `cost` is the pure byte model, `common_axes` and `op_cost` the per-op model,
`trip_count` the loop counts, `causes` the texts, `memory` the memory estimate, `plan` the pass
(and the IR-level cost function), `report` the data and its JSON/table forms, `diff` the
comparison of two plans, `explicit` the plan written as explicit sdy collectives.
"""
