"""Optimal composition against brute-force enumeration of all 4^k outcomes.

The product of canonical pairs (KOV eq. 16) is built outcome by outcome in
``tests.oracles.canonical_product``; its hockey-stick divergence in both directions is the
exact δ(ε) that ``optimal`` must reproduce, and basic / advanced / KOV must never go
below it (they are upper bounds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.composition import METHODS, Level, homogeneous, optimal
from tests.oracles import canonical_product as product_pair
from tests.oracles import hockey_stick, smallest_eps

# Agreement of two float computations of the same sum of ≤ 4^6 = 4096 terms: the
# brute force sums in linear space (fsum), the code in log space; 1e-12 relative
# (plus 1e-15 absolute for values that are 0 on one side) is ~1000 ulps of slack.
REL, ABS = 1e-12, 1e-15

HOMOGENEOUS = [
    pytest.param(1, 0.5, 0.0, id="k1-eps0.5-pure"),
    pytest.param(2, 0.1, 1e-3, id="k2-eps0.1-d1e-3"),
    pytest.param(3, 1.0, 0.0, id="k3-eps1-pure"),
    pytest.param(4, 0.3, 1e-2, id="k4-eps0.3-d1e-2"),
    pytest.param(5, 2.0, 1e-4, id="k5-eps2-d1e-4"),
    pytest.param(6, 0.1, 1e-3, id="k6-eps0.1-d1e-3"),
    pytest.param(6, 0.7, 0.0, id="k6-eps0.7-pure"),
]


def _eps_grid(k: int, eps0: float) -> list[float]:
    """Thm 3.3 grid points (k − 2i)ε0, midpoints between them, 0, and beyond kε0."""
    grid = [(k - 2 * i) * eps0 for i in range(k // 2 + 1)]
    mids = [g - eps0 for g in grid if g - eps0 > 0]
    return sorted({0.0, *grid, *mids, 0.37 * eps0, k * eps0, k * eps0 + 0.5, 3 * k * eps0 + 1})


@pytest.mark.parametrize(("k", "eps0", "delta0"), HOMOGENEOUS)
def test_optimal_delta_matches_brute_force(k: int, eps0: float, delta0: float) -> None:
    p, q = product_pair([(eps0, delta0)] * k)
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    for eps in _eps_grid(k, eps0):
        got = optimal.delta_for_epsilon(levels, epsilon=eps)
        assert got.kind.value == "exact"
        assert got.delta == pytest.approx(hockey_stick(p, q, eps), rel=REL, abs=ABS), f"ε={eps}"


@pytest.mark.parametrize(("k", "eps0", "delta0"), HOMOGENEOUS)
def test_beyond_k_eps0_only_the_delta_events_remain(k: int, eps0: float, delta0: float) -> None:
    """For ε ≥ kε0 the brute force gives exactly 1 − (1 − δ0)^k."""
    p, q = product_pair([(eps0, delta0)] * k)
    floor = 1 - (1 - delta0) ** k
    assert hockey_stick(p, q, k * eps0) == pytest.approx(floor, rel=REL, abs=ABS)
    got = optimal.delta_for_epsilon(homogeneous(k=k, eps0=eps0, delta0=delta0), epsilon=k * eps0)
    assert got.delta == pytest.approx(floor, rel=REL, abs=ABS)


@pytest.mark.parametrize(("k", "eps0", "delta0"), HOMOGENEOUS)
@pytest.mark.parametrize("delta", [1e-6, 1e-3, 0.05, 0.3], ids=lambda d: f"delta{d:g}")
def test_optimal_epsilon_matches_brute_force(k: int, eps0: float, delta0: float, delta: float) -> None:
    p, q = product_pair([(eps0, delta0)] * k)
    got = optimal.epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=delta0), delta=delta)
    want = smallest_eps(p, q, delta, hi=k * eps0 + 1.0, two_sided=True)
    if want is None:
        assert got.kind.value == "infeasible" and got.epsilon is None and got.reason
        return
    # The bisection reference is exact to ~1e-15; the code's ε is moved up by a few ulps
    # for soundness, so 1e-9 absolute is generous; soundness is checked exactly below.
    assert got.epsilon == pytest.approx(want, rel=1e-9, abs=1e-12)
    # Sound: the returned ε really achieves δ (brute-force δ, 1e-15 absolute for fsum rounding).
    assert hockey_stick(p, q, got.epsilon) <= delta + 1e-15


@pytest.mark.parametrize(("k", "eps0", "delta0"), HOMOGENEOUS)
def test_classic_bounds_never_below_brute_force(k: int, eps0: float, delta0: float) -> None:
    """Basic, advanced and KOV are upper bounds on the true (brute-force) δ(ε) and ε(δ)."""
    p, q = product_pair([(eps0, delta0)] * k)
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    for key in ("basic", "advanced", "kov"):
        method = METHODS[key]
        for eps in _eps_grid(k, eps0):
            g = method.delta_for_epsilon(levels, epsilon=eps)
            if g.feasible:
                # The bound may touch the truth (basic at ε = kε0): 1e-12 relative, and 1e-15
                # absolute because the linear-space brute force gives ~1e-16 where the truth is 0.
                assert g.delta >= hockey_stick(p, q, eps) * (1 - 1e-12) - ABS, f"{key} ε={eps}"
        for delta in (1e-6, 1e-3, 0.05, 0.3):
            g = method.epsilon_for_delta(levels, delta=delta)
            if g.feasible:
                assert g.delta <= delta * (1 + 1e-12), f"{key} δ={delta}"
                assert hockey_stick(p, q, g.epsilon) <= delta + 1e-15, f"{key} δ={delta}"


HETEROGENEOUS = [
    pytest.param([(0.1, 1e-3, 2), (0.5, 0.0, 2)], id="2x0.1d1e-3+2x0.5"),
    pytest.param([(1.0, 0.0, 1), (0.2, 1e-2, 3)], id="1x1.0+3x0.2d1e-2"),
    pytest.param([(0.3, 0.0, 2), (0.7, 1e-4, 2), (2.0, 0.0, 1)], id="3levels"),
    pytest.param([(0.0, 1e-2, 1), (0.4, 0.0, 3)], id="eps0-zero-level"),
]


def _expand(mechs: list[tuple[float, float, int]]) -> list[tuple[float, float]]:
    return [(e, d) for e, d, n in mechs for _ in range(n)]


@pytest.mark.parametrize("mechs", HETEROGENEOUS)
def test_heterogeneous_optimal_matches_brute_force(mechs: list[tuple[float, float, int]]) -> None:
    p, q = product_pair(_expand(mechs))
    levels = tuple(Level(epsilon=e, delta=d, count=n) for e, d, n in mechs)
    total = sum(e * n for e, _, n in mechs)
    for eps in np.linspace(0.0, total + 0.5, 23):
        got = optimal.delta_for_epsilon(levels, epsilon=float(eps))
        assert got.delta == pytest.approx(hockey_stick(p, q, float(eps)), rel=REL, abs=ABS), f"ε={eps}"
    for delta in (1e-5, 1e-2, 0.2):
        got = optimal.epsilon_for_delta(levels, delta=delta)
        want = smallest_eps(p, q, delta, hi=total + 1.0, two_sided=True)
        if want is None:
            assert not got.feasible and got.reason
            continue
        assert got.epsilon == pytest.approx(want, rel=1e-9, abs=1e-12)  # see the homogeneous test
        assert hockey_stick(p, q, got.epsilon) <= delta + 1e-15


@pytest.mark.parametrize("mechs", HETEROGENEOUS)
def test_heterogeneous_bounds_never_below_brute_force(mechs: list[tuple[float, float, int]]) -> None:
    p, q = product_pair(_expand(mechs))
    levels = tuple(Level(epsilon=e, delta=d, count=n) for e, d, n in mechs)
    for key in ("basic", "advanced", "kov"):
        for delta in (1e-5, 1e-2, 0.2):
            g = METHODS[key].epsilon_for_delta(levels, delta=delta)
            if g.feasible:
                assert hockey_stick(p, q, g.epsilon) <= delta + 1e-15, f"{key} δ={delta}"


def test_brute_force_is_symmetric_in_direction() -> None:
    """Sanity check of the reference itself: the reverse pair gives the same δ(ε)
    (the canonical pair is its own mirror image), so 'both directions' is not hiding a gap."""
    p, q = product_pair([(0.3, 1e-3), (0.9, 0.0), (0.3, 1e-3)])
    for eps in (0.0, 0.3, 1.1):
        w = math.exp(eps)
        assert math.fsum(np.maximum(0, p - w * q)) == pytest.approx(math.fsum(np.maximum(0, q - w * p)),
                                                                     rel=1e-13)  # fsum of mirrored terms
