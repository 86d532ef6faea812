"""Shardy's import steps, one pass per module, run before propagation (passes/pipeline.py).

Each rewrites the IR into the form propagation expects and can be dumped (`--dump-after NAME`),
left out, or tested alone (tests/lit/import/):

    absorb-data-flow-edges    data_flow_edges.py an input's sdy.data_flow_edge shardings go
                                                onto their owners, the edges go
    split-call-sites          call_sites.py     each call site gets its own copy of the callee
    add-func-data-flow-edges  data_flow_edges.py (dedup_functions_fully, instead of the split)
                                                callees shared by their call sites through
                                                sdy.func_data_flow_edge ops
    dedup-meshes              meshes.py         identical meshes become one
    remove-size-one-axes      size_one_axes.py  axes of size 1 leave every sharding
    split-constants           constants.py      each use of a constant expression gets its
                                                own copy (merge-constants folds the ones
                                                laid out alike back after propagation)
    manual-axes-cleanup       manual_axes.py    manual axes in mesh order, size-1 axes dropped
    apply-sharding-constraints constraints.py   a closed constraint shards its unsharded input
    import-sharding-groups    sharding_groups.py members of a group (and of a while loop's
                                                value chain) start from one sharding; members
                                                that disagree get open constraints
"""
