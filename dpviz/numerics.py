"""Log-space helpers used wherever binomials or tiny probabilities appear."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln, logsumexp

__all__ = ["log1mexp", "log_comb", "log_one_minus_product", "logsumexp", "one_minus_product", "softplus"]

LN2 = float(np.log(2.0))


def log_comb(n: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """ln C(n, k) via log-gamma; exact to ~1e-15 relative, no overflow."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def log1mexp(x: ArrayLike) -> NDArray[np.float64]:
    """ln(1 − e^x) for x ≤ 0, accurate for x near 0 and for x → −∞ (Mächler 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -LN2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def softplus(x: ArrayLike) -> NDArray[np.float64]:
    """ln(1 + e^x) without overflow."""
    return np.logaddexp(0.0, np.asarray(x, dtype=float))


def one_minus_product(delta0: float, k: float, extra: float = 0.0) -> float:
    """1 − (1 − δ0)^k (1 − extra), accurate when the result is tiny (δ0 = 1e-300)."""
    return float(-np.expm1(k * np.log1p(-delta0) + np.log1p(-extra)))


def log_one_minus_product(delta0: float, k: float) -> float:
    """ln(1 − δ0)^k = k·ln(1 − δ0)."""
    return float(k * np.log1p(-delta0))
