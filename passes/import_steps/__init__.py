"""Shardy's import steps, one pass per module, run before propagation (passes/pipeline.py).

Each rewrites the IR into the form propagation expects and can be dumped (`--dump-after NAME`),
left out, or tested alone (tests/lit/import/):

    split-call-sites          call_sites.py     each call site gets its own copy of the callee
    dedup-meshes              meshes.py         identical meshes become one
    remove-size-one-axes      size_one_axes.py  axes of size 1 leave every sharding
    split-constants           constants.py      each use of a constant expression gets its
                                                own copy (merge-constants folds them back
                                                after propagation)
    manual-axes-cleanup       manual_axes.py    manual axes in mesh order, size-1 axes dropped
    apply-sharding-constraints constraints.py   a closed constraint shards its unsharded input
    import-sharding-groups    sharding_groups.py members of a group (and of a while loop's
                                                value chain) start from one sharding
"""
