"""MLIR's spelling of float literals, and the test that a literal is spelled that way.

The pretty-text importer (pretty_parser.py) keeps a constant's literal as raw text, so it may
only keep text that jaxlib's print of the parsed module would spell the same. MLIR prints a float
as `APFloat::toString(6, 0, false)` (`3.200000e+01`) when that reads back to the same bits,
else as the default `APFloat::toString()` (`0.353553385`, `9.99999974E-6`) when that contains a
`.`, else in hex (`0xFF800000`); this module reproduces those rules (LLVM's APFloat.cpp, including
its digit truncation and round-half-up) for f64, f32, f16 and bf16.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

# element type -> (significand precision in bits incl. the implicit one, min exponent, max
# exponent, storage bits)
FLOAT_FORMATS: dict[str, tuple[int, int, int, int]] = {
    "f64": (53, -1022, 1023, 64),
    "f32": (24, -126, 127, 32),
    "f16": (11, -14, 15, 16),
    "bf16": (8, -126, 127, 16),
}

_DECIMAL = re.compile(r"[-+]?(\d+)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$")
_HEX = re.compile(r"0x[0-9A-F]+$")


def _round_exact(x: Fraction, element: str) -> tuple[int, int] | None:
    """|x| rounded to nearest-even in the format: (significand, exponent) with value m * 2**e,
    or None when it overflows to infinity."""
    prec, emin, emax, _ = FLOAT_FORMATS[element]
    x = abs(x)
    if x == 0:
        return 0, 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    # now 2**e <= x < 2**(e+1); the quantum is 2**(e - prec + 1), not below the subnormal one
    q = max(e, emin) - (prec - 1)
    scaled = x / (Fraction(2) ** q)
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2 == 1):
        m += 1
    if m == 1 << prec:
        m >>= 1
        q += 1
    if m and m.bit_length() + q - 1 > emax:
        return None
    return m, q


def _to_string(m: int, e: int, negative: bool, element: str, precision: int, padding: int,
               truncate_zero: bool) -> str:
    """LLVM `APFloat::toString(precision, padding, truncate_zero)` of the finite m * 2**e."""
    sign = "-" if negative else ""
    if m == 0:
        if not padding:
            if truncate_zero:
                return sign + "0.0E+0"
            return sign + "0.0" + "0" * max(precision - 1, 0) + "e+00"
        return sign + "0"
    if not precision:
        precision = 2 + FLOAT_FORMATS[element][0] * 59 // 196
    tz = (m & -m).bit_length() - 1
    m >>= tz
    e += tz
    exp = e
    if exp > 0:
        m <<= exp
        exp = 0
    elif exp < 0:
        m *= 5 ** (-exp)
    # AdjustToPrecision on the integer: drop (floor) decimal digits beyond what is needed
    bits = m.bit_length()
    bits_required = (precision * 196 + 58) // 59
    if bits > bits_required:
        tens = (bits - bits_required) * 59 // 196
        if tens:
            exp += tens
            m //= 10**tens
    digits = str(m)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    # AdjustToPrecision on the digits: round half up on the first dropped digit
    if len(digits) > precision:
        dropped = len(digits) - precision
        first = digits[precision]
        kept = digits[:precision]
        if first < "5":
            s = kept.rstrip("0")
            exp += dropped + (len(kept) - len(s))
            digits = s
        else:
            s = kept.rstrip("9")
            exp += dropped + (len(kept) - len(s))
            if not s:
                digits = "1"
            else:
                digits = s[:-1] + str(int(s[-1]) + 1)
    n = len(digits)
    if not padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > padding or n + exp > precision
    else:
        msd = exp + n - 1
        scientific = False if msd >= 0 else -msd > padding
    if scientific:
        exp += n - 1
        out = digits[0] + "."
        if n == 1 and truncate_zero:
            out += "0"
        else:
            out += digits[1:]
        if not truncate_zero and precision > n - 1:
            out += "0" * (precision - n + 1)
        out += "E" if truncate_zero else "e"
        out += "+" if exp >= 0 else "-"
        ed = str(abs(exp))
        if not truncate_zero and len(ed) < 2:
            ed = "0" + ed
        return sign + out + ed
    if exp >= 0:
        return sign + digits + "0" * exp
    whole = exp + n
    if whole > 0:
        return sign + digits[:whole] + "." + digits[whole:]
    return sign + "0." + "0" * (-whole) + digits


def _bits(m: int, e: int, negative: bool, element: str) -> int:
    """The storage bits of the finite m * 2**e."""
    prec, emin, _, width = FLOAT_FORMATS[element]
    ebits = width - prec  # exponent field width (the sign bit and implicit bit cancel)
    bias = (1 << (ebits - 1)) - 1
    sign = (1 << (width - 1)) if negative else 0
    if m == 0:
        return sign
    top = m.bit_length() + e - 1  # unbiased exponent of the leading bit
    if top < emin:  # subnormal: the quantum is 2**(emin - prec + 1)
        return sign | (m << (e - (emin - prec + 1)))
    frac = (m << (prec - m.bit_length())) & ((1 << (prec - 1)) - 1)
    return sign | ((top + bias) << (prec - 1)) | frac


@lru_cache(maxsize=4096)
def canonical_float(literal: str, element: str) -> bool:
    """Whether MLIR prints the float `literal` of type `element` exactly as it is written."""
    if element not in FLOAT_FORMATS:
        return False
    if _HEX.match(literal):
        return _canonical_hex(literal, element)
    m = _DECIMAL.match(literal)
    if m is None:
        return False
    value = Fraction(int(m.group(1) + (m.group(2) or "")), 10 ** len(m.group(2) or ""))
    if m.group(3):
        value *= Fraction(10) ** int(m.group(3))
    negative = literal.startswith("-")
    rounded = _round_exact(value, element)
    if rounded is None:
        return False
    sig, exp = rounded
    return mlir_float(sig, exp, negative, element) == literal


def _canonical_hex(literal: str, element: str) -> bool:
    """Whether MLIR prints the bits `literal` in hex: inf and nan, and finite values whose
    decimal forms have no `.`."""
    prec, emin, _, width = FLOAT_FORMATS[element]
    bits = int(literal, 16)
    if bits >> width or literal != f"0x{bits:X}":
        return False
    negative = bool(bits >> (width - 1))
    field = (bits >> (prec - 1)) & ((1 << (width - prec)) - 1)
    frac = bits & ((1 << (prec - 1)) - 1)
    if field == (1 << (width - prec)) - 1:
        return True  # inf or nan
    if field == 0:
        m, e = frac, emin - prec + 1
    else:
        bias = (1 << (width - prec - 1)) - 1
        m, e = frac | (1 << (prec - 1)), field - bias - prec + 1
    return mlir_float(m, e, negative, element) is None


def mlir_float(m: int, e: int, negative: bool, element: str) -> str | None:
    """How MLIR prints the finite m * 2**e of type `element` (None where it prints hex)."""
    text = _to_string(m, e, negative, element, 6, 0, False)
    back = _round_exact(_decimal_value(text), element)
    if back is not None and _bits(*back, negative, element) == _bits(m, e, negative, element):
        return text
    text = _to_string(m, e, negative, element, 0, 3, True)
    return text if "." in text else None


def _decimal_value(text: str) -> Fraction:
    m = _DECIMAL.match(text)
    assert m is not None
    value = Fraction(int(m.group(1) + (m.group(2) or "")), 10 ** len(m.group(2) or ""))
    if m.group(3):
        value *= Fraction(10) ** int(m.group(3))
    return value
