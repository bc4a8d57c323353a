"""RDP → (ε, δ) conversion.

For (λ, ρ)-RDP, ε = ρ + ln((λ − 1)/λ) − (ln δ + ln λ)/(λ − 1) (Canonne-Kamath-Steinke 2020,
Prop. 12; the conversion that Steinke's Lemma 33.8 states for general events). The classic
ε = ρ + ln(1/δ)/(λ − 1) (Mironov 2017, Prop. 3) is never smaller; we take the minimum of
both over all orders, each being a valid upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


def epsilon_from_rdp(orders: Sequence[int], rho: Sequence[float] | NDArray[np.float64], *,
                     delta: float) -> tuple[float, int]:
    """Smallest certified ε over the orders, and the order attaining it."""
    best, arg = math.inf, int(orders[0])
    for lam, r in zip(orders, rho, strict=True):
        if not np.isfinite(r):
            continue
        lam_f = float(lam)
        cks = r + math.log((lam_f - 1) / lam_f) - (math.log(delta) + math.log(lam_f)) / (lam_f - 1)
        classic = r + math.log(1.0 / delta) / (lam_f - 1)
        eps = max(0.0, min(cks, classic))
        if eps < best:
            best, arg = eps, int(lam)
    return best, arg
