"""An upper grid with a tilted round-off bound reads ε as the smallest ε with δ_grid(ε) + err·e^{−θε}
≤ δ. Taking the error at the error-free solution alone over-stated ε where that error is large
but falls fast: the add direction of q = 0.001, σ = 0.6, 10^4 steps, δ = 1e-10 gave 10.98 for
a direction whose error-free ε is 1.77, and the mechanism's upper end became 10.95 (its ε is 5.81)."""

from __future__ import annotations

import math

import numpy as np

from dpviz.mechanisms import gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld.accountant import epsilon_bounds
from dpviz.pld.grid import GridPLD


def _grid(err: float, tilt: float) -> GridPLD:
    h = 0.01
    losses = np.arange(-200, 801) * h
    mass = np.exp(-0.5 * (losses - 1.0) ** 2 / 0.25)
    mass /= mass.sum()
    return GridPLD(h=h, lo=-200, mass=mass, p_inf=0.0, pessimistic=True, err=err, tilt=tilt)


def test_smallest_certified_epsilon():
    delta = 1e-10
    g = _grid(err=1e-3, tilt=3.0)
    base = g._eps_for(delta)
    assert g.err_at(base) > delta  # the case: the error at the error-free ε is above δ
    eps = g.epsilon(delta)
    assert eps is not None and g.delta(eps) <= delta  # sound
    assert g.delta(eps * (1 - 1e-9)) > delta  # and the smallest such ε (sound and minimal)
    assert eps < 6.0  # err·e^{−3ε} ≤ δ from ε ≈ 5.37; the old reading gave None (no ε)


def test_untilted_unchanged():
    g = _grid(err=1e-13, tilt=0.0)
    eps = g.epsilon(1e-10)
    assert g.delta(eps) <= 1e-10 < g.delta(eps - 1e-9)


def test_small_q_low_sigma_tiny_delta_is_narrow():
    law = subsample_remove(gaussian.loss_law(sigma=0.6), rate=0.001)
    g = epsilon_bounds([(law, 10_000)], delta=1e-10)
    assert g.relative_width < 1e-3  # [5.7518, 11.16] before
    assert math.isclose(g.upper, 5.808, rel_tol=1e-3)
