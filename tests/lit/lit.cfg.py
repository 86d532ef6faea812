# lit configuration for shardc's golden tests: `// RUN: shardc ... %s | filecheck %s`.
import os

import lit.formats

config.name = "shardc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.environment["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
config.environment["JAX_PLATFORMS"] = "cpu"
for var in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
