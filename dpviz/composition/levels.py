"""Per-mechanism guarantees to be composed: ``count`` mechanisms that are each (ε, δ)-DP."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dpviz.validation import K_MAX, ParameterError, check_count, check_delta, check_epsilon


@dataclass(frozen=True)
class Level:
    """``count`` mechanisms, each (epsilon, delta)-DP."""

    epsilon: float
    delta: float
    count: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, field="eps0"))
        object.__setattr__(self, "delta", check_delta(self.delta, field="delta0"))
        object.__setattr__(self, "count", check_count(self.count, field="k"))


Levels = tuple[Level, ...]


def homogeneous(*, k: int, eps0: float, delta0: float) -> Levels:
    """k mechanisms, each (ε0, δ0)-DP."""
    return (Level(epsilon=eps0, delta=delta0, count=k),)


def as_levels(levels: Sequence[Level]) -> Levels:
    """Validate a heterogeneous list; merge equal (ε, δ) rows."""
    if not levels:
        raise ParameterError("levels", "[]", "a non-empty list of ε:δ:count rows")
    merged: dict[tuple[float, float], int] = {}
    for lv in levels:
        merged[(lv.epsilon, lv.delta)] = merged.get((lv.epsilon, lv.delta), 0) + lv.count
    out = tuple(Level(epsilon=e, delta=d, count=n) for (e, d), n in merged.items())
    total = sum(lv.count for lv in out)
    if total > K_MAX:
        raise ParameterError("levels", f"total count {total:,}", f"at most {K_MAX:,} mechanisms in all")
    return out


def parse_levels(text: str) -> Levels:
    """Parse ``"0.1:1e-6:30,0.5:0:10"`` (ε:δ:count rows separated by commas)."""
    rows = [r.strip() for r in str(text).split(",") if r.strip()]
    allowed = 'rows "ε:δ:count" separated by commas, e.g. "0.1:1e-6:30,0.5:0:10"'
    if not rows:
        raise ParameterError("levels", text, allowed)
    out = []
    for row in rows:
        parts = row.split(":")
        if len(parts) != 3:
            raise ParameterError("levels", row, allowed)
        out.append(Level(epsilon=parts[0], delta=parts[1], count=parts[2]))  # type: ignore[arg-type]
    return as_levels(out)


def sum_epsilon(levels: Levels) -> float:
    """Σ ε_l (KOV Thm 3.5's replacement for kε0)."""
    return math.fsum(lv.count * lv.epsilon for lv in levels)


def sum_epsilon_sq(levels: Levels) -> float:
    """Σ ε_l² (replaces kε0²)."""
    return math.fsum(lv.count * lv.epsilon**2 for lv in levels)


def root_sum_epsilon_sq(levels: Levels) -> float:
    """√(Σ ε_l²), scaled by the largest ε_l so that it does not underflow: a subnormal ε0 has
    ε0² = 0 in floating point, which would make advanced and KOV composition report ε = 0."""
    top = max(lv.epsilon for lv in levels)
    if top == 0:
        return 0.0
    return top * math.sqrt(math.fsum(lv.count * (lv.epsilon / top) ** 2 for lv in levels))


def sum_delta(levels: Levels) -> float:
    """Σ δ_l (basic composition's δ)."""
    return math.fsum(lv.count * lv.delta for lv in levels)


def log_no_delta(levels: Levels) -> float:
    """ln Π_l (1 − δ_l): the log-probability that no mechanism hits its δ event."""
    return math.fsum(lv.count * math.log1p(-lv.delta) for lv in levels)


def describe_floor(log_free: float) -> str:
    """1 − e^{log_free} for a message: ``"1 − 3.2e-435"`` when it rounds to 1 in floating point,
    so that a floor just below 1 is not printed as 1 (which no δ < 1 could reach)."""
    floor = -math.expm1(log_free)
    if floor < 0.999_999:
        return f"{floor:.6g}"
    log10_gap = log_free / math.log(10.0)  # ≤ −6
    exponent = math.floor(log10_gap)
    mantissa = 10.0 ** (log10_gap - exponent)
    if mantissa >= 9.995:  # would print as "10e…"
        mantissa, exponent = 1.0, exponent + 1
    return f"1 − {mantissa:.3g}e{exponent}"
