"""RDP → (ε, δ) conversion.

For (λ, ρ)-RDP, ε = ρ + ln((λ − 1)/λ) − (ln δ + ln λ)/(λ − 1) (Canonne-Kamath-Steinke 2020,
Prop. 12; the conversion that Steinke's Lemma 33.8 states for general events). The classic
ε = ρ + ln(1/δ)/(λ − 1) (Mironov 2017, Prop. 3) is never smaller; we take the minimum of
both over all orders, each being a valid upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

_ROUND = 16.0 * 2.0**-52
"""Relative allowance for the rounding of a few-term float sum (docs/MATH.md §10.3: rounded up)."""


def _best_order(orders: Sequence[float], rho: Sequence[float] | NDArray[np.float64],
                value: Callable[[float, float], float]) -> tuple[float, float]:
    """The smallest ``value(λ, ρ)`` over the orders whose ρ is finite, and the order attaining it."""
    best, arg = math.inf, float(orders[0])
    for lam, r in zip(orders, rho, strict=True):
        if not np.isfinite(r):
            continue
        v = value(float(lam), r)
        if v < best:
            best, arg = v, float(lam)
    return best, arg


def epsilon_from_rdp(orders: Sequence[float], rho: Sequence[float] | NDArray[np.float64], *,
                     delta: float) -> tuple[float, float]:
    """Smallest certified ε over the (real) orders λ > 1, and the order attaining it."""
    def eps(lam: float, r: float) -> float:
        log_ratio = math.log((lam - 1) / lam)
        cks = r + log_ratio - (math.log(delta) + math.log(lam)) / (lam - 1)
        classic = r + math.log(1.0 / delta) / (lam - 1)
        # rounded up: an allowance of a few ulps of the terms' sizes before any cancellation
        sizes = abs(r) + abs(log_ratio) + (abs(math.log(delta)) + math.log(lam)) / (lam - 1)
        return max(0.0, min(cks, classic) + _ROUND * sizes)

    return _best_order(orders, rho, eps)


def log_delta_from_rdp(orders: Sequence[float], rho: Sequence[float] | NDArray[np.float64],
                       epsilon: float) -> tuple[float, float]:
    """Smallest ln δ over the orders for (λ, ρ)-RDP at ε: the conversions of ``epsilon_from_rdp``
    solved for δ (CKS 2020 Prop. 12 and Mironov Prop. 3), rounded up by a few ulps of the terms."""
    def log_delta(lam: float, r: float) -> float:
        log_ratio = math.log((lam - 1) / lam)
        cks = (lam - 1) * (r - epsilon + log_ratio) - math.log(lam)
        classic = (lam - 1) * (r - epsilon)
        sizes = (lam - 1) * (abs(r) + epsilon + abs(log_ratio)) + math.log(lam)
        return min(cks, classic) + _ROUND * sizes

    return _best_order(orders, rho, log_delta)
