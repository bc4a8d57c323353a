"""The certified interval of Poisson-subsampled Gaussian compositions against an exact route that
shares nothing with the PLD engine: Fourier inversion of the composed law along Re z = θ.

For a pair (P, Q) with privacy loss L = ln P/Q and M(z) = E_P[e^{zL}] = E_Q[(P/Q)^{1+z}], the
k-fold δ(ε) = E_P[(1 − e^{ε−S})_+], S the sum of k losses, is for any θ > 0

    δ(ε) = (1/2π) ∫ G(u)·exp(k·ln M(θ − iu) − (θ − iu)·ε) du,   G(u) = 1/(θ − iu) − 1/(θ + 1 − iu),

G the transform of v ↦ (1 − e^{−v})·e^{−θv} on v > 0 (Parseval on the tilted law; no approximation).
M is one integral over the Gaussian's outcome x, done by the trapezoid rule (spectrally accurate for
these smooth, fast-decaying integrands); the u-integral is done where |integrand| is above 1e-15 of
its peak (the range grows until it is), so a law whose tilted sum is far from Gaussian (a small σ, where
the integrand barely decays) fails loudly instead of giving a wrong number.
The add direction is the reversed pair: M_add(z) = M(−1 − z).

The first setting is the PLD benchmark's (benchmarks/results/pld_grid.md) where dp-accounting 0.6.0
(h = 1e-4: 33.931; h = 3e-6: 34.041) and the PRV accountant 0.2.0 (its "upper" 34.0566 at
eps_error = 0.005) are below dpviz's certified [34.0631, 34.0674] (it was [34.0627, 34.0675] in one
stage); this route puts the truth inside both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.mechanisms import gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld.accountant import epsilon_bounds
from dpviz.pld.refine import composition


class _Contour:
    """δ(ε) of k steps of one direction of the Poisson-subsampled Gaussian (module docstring)."""

    def __init__(self, sigma: float, q: float, k: int, *, add: bool) -> None:
        self.k, self.add = k, add
        reach = 60.0  # the tilted integrand peaks near x = 1 + θ (θ ≤ 50 here)
        self.x = np.arange(-14.0 * sigma, 1.0 + reach + 14.0 * sigma, sigma / 40.0)
        self.dx = sigma / 40.0
        self.log_phi = -self.x**2 / (2 * sigma**2) - 0.5 * math.log(2 * math.pi * sigma**2)
        a = (2.0 * self.x - 1.0) / (2.0 * sigma**2)
        # ln P/Q of the remove direction, (1 − q)N(0, σ²) + qN(1, σ²) against N(0, σ²)
        self.loss = a if q == 1.0 else np.logaddexp(math.log1p(-q), math.log(q) + a)

    def ln_m(self, z: complex | float) -> complex:
        w = (-1.0 - z) if self.add else z
        e = (1.0 + w) * self.loss + self.log_phi
        top = float(np.max(np.real(e)))
        return top + np.log(np.sum(np.exp(e - top)) * self.dx)

    def cumulant(self, t: float) -> float:
        return self.k * float(np.real(self.ln_m(t)))

    def delta(self, eps: float) -> float:
        d1 = lambda t: (self.cumulant(t + 1e-5) - self.cumulant(t - 1e-5)) / 2e-5  # noqa: E731
        lo, hi = 1e-4, 50.0
        if d1(hi) < eps:
            raise AssertionError("ε beyond the tilts this route covers")
        if d1(lo) > eps:
            raise AssertionError("ε below the tilts this route covers")
        for _ in range(100):  # Λ′(θ) = ε: the saddlepoint, where the integrand is flattest
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if d1(mid) < eps else (lo, mid)
        th = 0.5 * (lo + hi)
        base = self.cumulant(th) - th * eps
        d2 = (self.cumulant(th + 1e-4) - 2 * self.cumulant(th) + self.cumulant(th - 1e-4)) / 1e-8
        for reach in (12.0, 24.0, 48.0, 96.0):  # in units of the tilted sum's sd: until decayed
            u = np.linspace(-reach, reach, int(100 * reach) + 1) / math.sqrt(d2)
            z = th - 1j * u
            g = 1.0 / z - 1.0 / (z + 1.0)
            vals = np.array([gi * np.exp(self.k * self.ln_m(zi) - zi * eps - base)
                             for gi, zi in zip(g, z, strict=True)])
            if max(abs(vals[0]), abs(vals[-1])) < 1e-15 * float(np.abs(vals).max()):
                break
        else:
            raise AssertionError("the u-integrand has not decayed: this route does not apply")
        return math.exp(base) * float(np.real(np.trapezoid(vals, u))) / (2.0 * math.pi)


def test_the_contour_route_reproduces_the_gaussian_closed_form():
    """q = 1: k Gaussian steps are one Gaussian with μ = √k/σ (Steinke Cor. 8)."""
    route = _Contour(2.0, 1.0, 10, add=False)
    closed = gaussian.delta_for_epsilon(epsilon=3.0, sigma=2.0, k=10)
    assert route.delta(3.0) == pytest.approx(closed, rel=1e-7)


@pytest.mark.parametrize(("sigma", "q", "k", "delta"), [
    (3.213, 0.04282, 82321, 3.3e-12),  # the benchmark's: other accountants are below the interval
    (1.0, 0.01, 1000, 1e-5),           # DP-SGD-like
    (2.0, 0.2, 300, 1e-9),
    (1.691, 0.0007, 61858, 3.3e-6),    # composed in two stages (docs/MATH.md §17.10)
    (1.0, 0.01, 100_000, 1e-6),        # two stages
    (0.8, 0.005, 1_000_000, 1e-9),     # two stages, 10^6 steps
])
def test_the_certified_interval_holds_the_exact_epsilon(sigma, q, k, delta):
    """ε* = max over the two directions: some direction has δ(lower) ≥ δ, and every one δ(upper) ≤ δ."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=sigma), rate=q), k)]
    if k >= 60_000:  # the settings meant for the two stages are composed in them
        assert "two stages" in composition(parts, delta=delta).note
    g = epsilon_bounds(parts, delta=delta)
    assert g.lower is not None and g.upper is not None
    routes = [_Contour(sigma, q, k, add=add) for add in (False, True)]
    at_lower = [r.delta(g.lower) for r in routes]
    at_upper = [r.delta(g.upper) for r in routes]
    assert max(at_lower) >= delta
    assert max(at_upper) <= delta
