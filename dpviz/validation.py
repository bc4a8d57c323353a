"""Input checks whose messages name the field, the value and the allowed range.

Every public entry point (API, CLI, UI) validates through these helpers, so a
user sees the same sentence everywhere: ``eps0 must be in [0, 100], got eps0=-1``.
"""

from __future__ import annotations

import math
import numbers

EPSILON_MAX = 100.0
"""Largest per-mechanism ε accepted (e^100 is still far from overflow)."""

K_MAX = 10_000_000
"""Largest number of compositions accepted anywhere."""


class ParameterError(ValueError):
    """A user-supplied parameter is outside its allowed range."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} must be {allowed}, got {field}={value!r}")


def _real(value: object, field: str, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
        raise ParameterError(field, value, allowed)
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int beyond float, e.g. 10**400
        raise ParameterError(field, value, allowed) from None
    if math.isnan(x):
        raise ParameterError(field, value, allowed)
    if x == 0.0 and _nonzero(value):  # e.g. "1e-400": below the smallest float, it would read as 0
        raise ParameterError(field, value, f"{allowed} (a nonzero value below 5e-324 rounds to 0)")
    return x + 0.0  # −0.0 → 0.0


def _nonzero(value: object) -> bool:
    """Whether ``value`` names a nonzero number (exactly, before rounding to float)."""
    if isinstance(value, str):  # a valid float literal (float() accepted it): check its digits
        mantissa = value.lower().split("e")[0]
        return any(c in "123456789" for c in mantissa)
    return value != 0


def check_epsilon(value: object, *, field: str = "epsilon", maximum: float = EPSILON_MAX) -> float:
    """ε ∈ [0, maximum]."""
    allowed = f"a number in [0, {maximum:g}]"
    x = _real(value, field, allowed)
    if not 0.0 <= x <= maximum:
        raise ParameterError(field, value, allowed)
    return x


def check_delta(value: object, *, field: str = "delta", positive: bool = False) -> float:
    """δ ∈ [0, 1) (or (0, 1) with ``positive``)."""
    allowed = "a number in (0, 1)" if positive else "a number in [0, 1)"
    x = _real(value, field, allowed)
    if not (0.0 < x < 1.0 if positive else 0.0 <= x < 1.0):
        raise ParameterError(field, value, allowed)
    return x


def check_probability(value: object, *, field: str, open_low: bool = True,
                      open_high: bool = False) -> float:
    """A rate or probability in (0, 1] by default; the ends are configurable."""
    lo, hi = ("(" if open_low else "["), (")" if open_high else "]")
    allowed = f"a number in {lo}0, 1{hi}"
    x = _real(value, field, allowed)
    ok_lo = x > 0.0 if open_low else x >= 0.0
    ok_hi = x < 1.0 if open_high else x <= 1.0
    if not (ok_lo and ok_hi):
        raise ParameterError(field, value, allowed)
    return x


def check_positive(value: object, *, field: str, maximum: float = 1e12) -> float:
    """A strictly positive finite number, e.g. a noise scale."""
    allowed = f"a number in (0, {maximum:g}]"
    x = _real(value, field, allowed)
    if not 0.0 < x <= maximum:
        raise ParameterError(field, value, allowed)
    return x


def check_count(value: object, *, field: str = "k", minimum: int = 1, maximum: int = K_MAX) -> int:
    """An integer count in [minimum, maximum]; floats must be whole."""
    allowed = f"a whole number in [{minimum}, {maximum:,}]"
    x = _real(value, field, allowed)
    if not math.isfinite(x) or x != int(x) or not minimum <= x <= maximum:
        raise ParameterError(field, value, allowed)
    return int(x)
