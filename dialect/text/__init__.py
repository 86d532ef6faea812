"""MLIR text <-> shardc IR: the one text layer.

- `generic`: MLIR's generic op form, for every op of every dialect (`parse_generic`,
  `print_generic`): lossless, attributes kept as raw text.
- `formats`: each op's pretty syntax (the dialects' own, as jaxlib prints it), declared once in
  the pieces of `directives` and `properties` (ops with regions: `regions`), which
  `pretty_printer` writes (`print_pretty`) and `pretty_parser` reads (`parse_pretty`); each
  writes or reads only what it reproduces exactly and says so (`Unsupported`, None), and the
  caller then goes through jaxlib and the generic form. `spelling`: what MLIR prints as written.
- `sharding_attrs`: the sdy attributes shardc interprets, parsed into `shardings.py` objects on
  import (`absorb_sharding_attrs`) and written back on print.
- `floats`: MLIR's spelling of float literals (what the pretty parser may keep as raw text).
"""

from .generic import parse_generic, print_generic
from .pretty_parser import parse_pretty
from .pretty_printer import Unsupported, print_pretty
from .sharding_attrs import absorb_sharding_attrs

__all__ = [
    "Unsupported",
    "absorb_sharding_attrs",
    "parse_generic",
    "parse_pretty",
    "print_generic",
    "print_pretty",
]
