"""The JAX frontend: tracing with JAX, sharding specs and meshes as users write them, the
calling convention of `shardc.jit`, calls under JAX transforms, `shardc.constrain`."""
