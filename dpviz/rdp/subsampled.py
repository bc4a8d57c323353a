"""Rényi DP of mechanisms and of their Poisson subsampling (Steinke, seed 001, §6.4-6.5).

Base curves ρ(λ) (order λ > 1):
- Gaussian, μ = Δ/σ: ρ(λ) = λμ²/2 (Steinke Lemma 33.4).
- Any finite/atomic law: ρ(λ) = ln E_Q[(P/Q)^λ]/(λ − 1) = ln E_P[e^{(λ−1)L}]/(λ − 1), exact.
- Laplace, ε0 = Δ/b: ρ(λ) = ln(λ/(2λ−1) e^{(λ−1)ε0} + (λ−1)/(2λ−1) e^{−λε0})/(λ − 1)
  (Mironov 2017, Table II).

Subsampling (Steinke Thm 34, tight, integer λ ≥ 2, Poisson rate q, add/remove neighbours):
ρ'(λ) = ln(Σ_{j=0}^{λ} C(λ, j)(1 − q)^{λ−j} q^j e^{(j−1)ρ(j)})/(λ − 1), with (j − 1)ρ(j) := 0
for j ∈ {0, 1}. Composition adds ρ (Lemma 31). The sum is done in log space.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpviz.numerics import log_comb, logsumexp
from dpviz.pld.law import LossLaw

DEFAULT_ORDERS = (*range(2, 65), 80, 96, 128, 160, 192, 256, 320, 384, 512)
"""Integer orders λ (Thm 34 needs integers); the conversion takes the best one."""


def gaussian_rdp(*, order: int, mu: float) -> float:
    """ρ(λ) = λμ²/2 (Steinke Lemma 33.4)."""
    return float(order) * mu * mu / 2.0


def laplace_rdp(*, order: int, eps0: float) -> float:
    """ρ(λ) = ln(λ/(2λ−1) e^{(λ−1)ε0} + (λ−1)/(2λ−1) e^{−λε0})/(λ − 1) (Mironov 2017, Table II)."""
    lam = float(order)
    t = [math.log(lam / (2 * lam - 1)) + (lam - 1) * eps0, math.log((lam - 1) / (2 * lam - 1)) - lam * eps0]
    return float(logsumexp(t)) / (lam - 1)


def law_rdp(law: LossLaw, *, order: int) -> float:
    """ρ(λ) = ln E_P[e^{(λ−1)L}]/(λ − 1) of an atomic law, exact; ∞ with mass at L = +∞."""
    if law.continuous is not None:
        raise NotImplementedError(f"{law.name}: RDP of a continuous law")
    if law.p_inf > 0:
        return math.inf
    lam = float(order)
    with np.errstate(divide="ignore"):  # ln 0 = −∞ for an atom without P-mass: it adds nothing
        return float(logsumexp(np.log(law.p) + (lam - 1) * law.loss)) / (lam - 1)


def subsampled_rdp(rho: NDArray[np.float64] | list[float], *, rate: float, order: int) -> float:
    """Steinke Thm 34 at integer order λ, given base ρ(j) for j = 2..λ (``rho[j-2]``)."""
    lam = int(order)
    if rate >= 1.0:
        return float(rho[lam - 2])
    j = np.arange(lam + 1, dtype=float)
    exps = np.zeros(lam + 1)
    exps[2:] = (j[2:] - 1) * np.asarray(rho[: lam - 1], dtype=float)
    terms = log_comb(lam, j) + (lam - j) * math.log1p(-rate) + j * math.log(rate) + exps
    return float(logsumexp(terms)) / (lam - 1)
