"""Rényi DP of mechanisms and of their Poisson subsampling (Steinke, seed 001, §6.4-6.5).

Base curves ρ(λ) (order λ > 1):
- Gaussian, μ = Δ/σ: ρ(λ) = λμ²/2 (Steinke Lemma 33.4).
- Any finite/atomic law: ρ(λ) = ln E_Q[(P/Q)^λ]/(λ − 1) = ln E_P[e^{(λ−1)L}]/(λ − 1), exact.
- Laplace, ε0 = Δ/b: ρ(λ) = ln(λ/(2λ−1) e^{(λ−1)ε0} + (λ−1)/(2λ−1) e^{−λε0})/(λ − 1)
  (Mironov 2017, Table II).

Subsampling (Steinke Thm 34, tight, integer λ ≥ 2, Poisson rate q, add/remove neighbours):
ρ'(λ) = ln(Σ_{j=0}^{λ} C(λ, j)(1 − q)^{λ−j} q^j e^{(j−1)ρ(j)})/(λ − 1), with (j − 1)ρ(j) := 0
for j ∈ {0, 1}. Composition adds ρ (Lemma 31). The sum is done in log space.

Non-integer orders (the remark after Thm 34): D_λ is non-decreasing in λ (Lemma 33 part 3), so the
subsampled mechanism is (λ, ρ'(⌈λ⌉))-RDP for every real λ > 1 (``subsampled_rdp`` and
``at_real_orders``); mechanisms without subsampling are exact at real orders. docs/MATH.md §11.4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from dpviz.numerics import log_comb, logsumexp, logsumexp_rows
from dpviz.pld.law import LossLaw

DEFAULT_ORDERS = (*range(2, 65), 80, 96, 128, 160, 192, 256, 320, 384, 512)
"""Integer orders λ (Thm 34 needs integers); the conversion takes the best one."""

FRACTIONAL_ORDERS = (1.1, 1.25, 1.5, 1.75, 2.25, 2.5, 2.75, 3.5, 4.5, 5.5, 6.5, 7.5, 9.5, 11.5, 15.5)
"""Real orders between the integers: exact for mechanisms without subsampling, ρ'(⌈λ⌉) for
subsampled ones (Lemma 33 part 3); they help where parts of a mix are exact at real orders."""

REAL_ORDERS = tuple(sorted({*map(float, DEFAULT_ORDERS), *FRACTIONAL_ORDERS}))
"""The orders of the RDP route: ``DEFAULT_ORDERS`` and ``FRACTIONAL_ORDERS``."""


def ceiling_orders(orders: tuple[float, ...]) -> tuple[int, ...]:
    """The integer orders ⌈λ⌉ (at least 2) whose values bound every λ of ``orders``, sorted."""
    return tuple(sorted({max(2, math.ceil(o)) for o in orders}))


def at_real_orders(orders: tuple[float, ...], integer_curve: NDArray[np.float64] | list[float]
                   ) -> NDArray[np.float64]:
    """ρ(λ) ≤ ρ(⌈λ⌉) (Steinke Lemma 33 part 3: D_λ non-decreasing in λ) at each real order, from a
    curve given at ``ceiling_orders(orders)``."""
    ints = ceiling_orders(orders)
    values = np.asarray(integer_curve, dtype=float)
    return np.array([values[ints.index(max(2, math.ceil(o)))] for o in orders], dtype=float)


def gaussian_rdp(*, order: int, mu: float) -> float:
    """ρ(λ) = λμ²/2 (Steinke Lemma 33.4)."""
    return float(order) * mu * mu / 2.0


def laplace_rdp(*, order: int, eps0: float) -> float:
    """ρ(λ) = ln(λ/(2λ−1) e^{(λ−1)ε0} + (λ−1)/(2λ−1) e^{−λε0})/(λ − 1) (Mironov 2017, Table II)."""
    lam = float(order)
    return float(logsumexp(_laplace_terms(lam, eps0))) / (lam - 1)


def _laplace_terms(lam: float, eps0: float) -> list[float]:
    """The two log-terms of Mironov's Laplace ρ(λ) (``math.log``: the same floats everywhere)."""
    return [math.log(lam / (2 * lam - 1)) + (lam - 1) * eps0,
            math.log((lam - 1) / (2 * lam - 1)) - lam * eps0]


def laplace_rdp_curve(orders: Sequence[int], *, eps0: float) -> NDArray[np.float64]:
    """``laplace_rdp`` at each order, its two terms per order (``_laplace_terms``) summed in one array
    pass: the same numbers bit for bit (tested)."""
    lam = [float(o) for o in orders]
    terms = np.array([_laplace_terms(x, eps0) for x in lam]).reshape(len(lam), 2)
    return logsumexp_rows(terms) / (np.asarray(lam) - 1.0)


def law_rdp(law: LossLaw, *, order: int) -> float:
    """ρ(λ) = ln E_P[e^{(λ−1)L}]/(λ − 1) of an atomic law, exact; ∞ with mass at L = +∞."""
    if law.continuous is not None:
        raise NotImplementedError(f"{law.name}: RDP of a continuous law")
    if law.p_inf > 0:
        return math.inf
    lam = float(order)
    with np.errstate(divide="ignore"):  # ln 0 = −∞ for an atom without P-mass: it adds nothing
        return float(logsumexp(np.log(law.p) + (lam - 1) * law.loss)) / (lam - 1)


def law_rdp_curve(law: LossLaw, orders: Sequence[int]) -> NDArray[np.float64]:
    """``law_rdp`` at each order, in one array pass (a row per order): the same numbers bit for bit
    (tested), without a Python call per order (a subsampled law's curve asks for orders 2 … 512)."""
    lam = np.asarray(orders, dtype=float)
    if law.continuous is not None:
        raise NotImplementedError(f"{law.name}: RDP of a continuous law")
    if law.p_inf > 0:
        return np.full(lam.size, math.inf)
    with np.errstate(divide="ignore"):
        log_p = np.log(law.p)
    out = np.empty(lam.size)
    step = max(1, _ROWS_ENTRIES // max(1, law.p.size))
    for start in range(0, lam.size, step):
        rows = lam[start:start + step, np.newaxis] - 1.0
        out[start:start + step] = logsumexp_rows(log_p + rows * law.loss) / rows[:, 0]
    return out


_ROWS_ENTRIES = 1 << 20
"""Entries of one block of ``law_rdp_curve`` (orders × atoms; 8 MiB)."""


def subsampled_rdp(rho: NDArray[np.float64] | list[float], *, rate: float, order: float) -> float:
    """Steinke Thm 34 at integer order λ, given base ρ(j) for j = 2..λ (``rho[j-2]``); at a
    non-integer order the value at ⌈λ⌉ (Lemma 33 part 3), never the one at ⌊λ⌋."""
    lam = max(2, math.ceil(order))
    if rate >= 1.0:
        return float(rho[lam - 2])
    j = np.arange(lam + 1, dtype=float)
    exps = np.zeros(lam + 1)
    exps[2:] = (j[2:] - 1) * np.asarray(rho[: lam - 1], dtype=float)
    terms = log_comb(lam, j) + (lam - j) * math.log1p(-rate) + j * math.log(rate) + exps
    return float(logsumexp(terms)) / (lam - 1)
