"""Privacy-region boundaries against independent routes: brute force over lines, 4^k enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition.levels import homogeneous
from dpviz.regions import intersection_boundary, method_region, region_polygon

XS = np.linspace(0.0, 1.0, 2001)


def brute_lower(eps: list[float], dlt: list[float], xs: np.ndarray) -> np.ndarray:
    """max(0, max_j 1 − δ_j − e^{ε_j} x, e^{−ε_j}(1 − δ_j − x)) evaluated pointwise."""
    vals = [np.zeros_like(xs)]
    for e, d in zip(eps, dlt, strict=True):
        vals.append(1 - d - np.exp(e) * xs)
        vals.append(np.exp(-e) * (1 - d - xs))
    return np.max(vals, axis=0)


@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 0.5)), min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_envelope_matches_pointwise_max(pairs):
    eps, dlt = [p[0] for p in pairs], [p[1] for p in pairs]
    b = intersection_boundary(eps, dlt)
    # 1e-12: the envelope is evaluated at exact vertices and linearly interpolated
    np.testing.assert_allclose(b(XS), brute_lower(eps, dlt, XS), atol=1e-12)


def test_region_is_symmetric_about_the_centre():
    b = intersection_boundary([0.5, 1.0], [0.01, 0.001])
    x, y = region_polygon(b)
    # the mirror (1 − x, 1 − y) of each vertex lies on the polygon too (KOV §2)
    upper = np.interp(1 - b.p_fa[::-1], 1 - b.p_fa[::-1], 1 - b.p_md[::-1])
    assert np.allclose(upper, 1 - b.p_md[::-1])
    assert x[0] == x[-1] and y[0] == y[-1]


@pytest.mark.parametrize("eps,dlt", [([0.5], [0.0]), ([0.5, 1.0], [0.01, 0.001]), ([3.0], [0.2])])
def test_polygon_is_simple_and_has_the_region_area(eps, dlt):
    """Shoelace area of the drawn polygon = ∫(upper − lower) = 1 − 2∫f; a crossing polygon fails."""
    b = intersection_boundary(eps, dlt)
    x, y = region_polygon(b)
    shoelace = 0.5 * abs(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1]))
    fine = np.linspace(0, 1, 200_001)
    integral = np.trapezoid(brute_lower(eps, dlt, fine), fine)
    assert shoelace == pytest.approx(1 - 2 * integral, abs=1e-6)  # 1e-6: trapezoid rule on 2e5 points


def test_pure_dp_region_corners():
    # R(ε, 0): P_MD ≥ max(1 − e^ε x, e^{−ε}(1 − x)); the corner is at x = 1/(1 + e^ε)
    e = 1.0
    b = intersection_boundary([e], [0.0])
    corner = 1 / (1 + np.exp(e))
    assert b(corner) == pytest.approx(corner, rel=1e-12)
    assert b(0.0) == 1.0 and b(1.0) == 0.0


def canonical(e0: float, d0: float) -> tuple[np.ndarray, np.ndarray]:
    """KOV eq. 16 on outcomes A, B, C, D."""
    a = np.exp(e0) / (1 + np.exp(e0))
    p = np.array([d0, (1 - d0) * a, (1 - d0) * (1 - a), 0.0])
    return p, p[::-1].copy()


def brute_tradeoff(p: np.ndarray, q: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Neyman-Pearson: reject H0 (P) on outcomes with the largest Q/P first; min P_MD at each P_FA."""
    ratio = np.where(p > 0, q / np.where(p > 0, p, 1), np.inf)
    order = np.argsort(-ratio, kind="stable")
    fa = np.concatenate([[0], np.cumsum(p[order])])
    md = np.concatenate([[1], 1 - np.cumsum(q[order])])
    # outcomes with P = 0 come first (ratio ∞): P_FA stays 0 while P_MD drops
    return np.interp(xs, fa, md)


@pytest.mark.parametrize("k,e0,d0", [(1, 0.5, 0.0), (3, 0.3, 0.02), (5, 0.1, 0.001), (6, 1.0, 0.05)],
                         ids=lambda v: str(v))
def test_optimal_region_equals_brute_force_product(k, e0, d0):
    p1, q1 = canonical(e0, d0)
    p, q = np.array([1.0]), np.array([1.0])
    for _ in range(k):
        p, q = np.outer(p, p1).ravel(), np.outer(q, q1).ravel()
    expected = brute_tradeoff(p, q, XS)
    got = method_region("optimal", homogeneous(k=k, eps0=e0, delta0=d0))(XS)
    # 1e-12: both are exact piecewise-linear curves; the difference is floating-point only
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize("k,e0,d0", [(10, 0.1, 0.001), (30, 0.1, 0.001), (200, 0.05, 1e-6), (5, 1.5, 0.0)],
                         ids=lambda v: str(v))
def test_theorem_regions_contain_the_optimal_region(k, e0, d0):
    """Every theorem is sound, so its region contains the optimal one: a lower P_MD boundary."""
    levels = homogeneous(k=k, eps0=e0, delta0=d0)
    opt = method_region("optimal", levels)(XS)
    for m in ("basic", "advanced", "kov"):
        other = method_region(m, levels)(XS)
        assert np.all(other <= opt + 1e-12), m  # 1e-12: interpolation rounding only


def test_optimal_region_of_thm33_grid_matches_tradeoff():
    """KOV Thm 3.3 states the region as an intersection over its grid: same set."""
    from dpviz.composition.optimal import kov_grid

    eps, dlt = kov_grid(k=40, eps0=0.2, delta0=1e-4)
    grid = intersection_boundary(eps, dlt)(XS)
    curve = method_region("optimal", homogeneous(k=40, eps0=0.2, delta0=1e-4))(XS)
    np.testing.assert_allclose(grid, curve, atol=1e-12)


def test_large_k_region_is_fast_and_finite():
    b = method_region("optimal", homogeneous(k=1_000_000, eps0=0.001, delta0=1e-9))
    assert np.all(np.isfinite(b.p_md)) and np.all(np.diff(b.p_fa) >= 0)
    assert np.all(np.diff(b.p_md) <= 1e-15)


def test_region_from_several_points_is_monotone():
    for eps0, d0 in itertools.product([0.0, 0.01, 3.0, 50.0], [0.0, 1e-300, 0.2]):
        b = intersection_boundary([eps0], [d0])
        assert np.all(np.diff(b.p_md) <= 0) and b.p_md[-1] == 0.0


@pytest.mark.parametrize("eps", [40.0, 300.0, 600.0])
def test_flat_line_survives_next_to_a_steep_one(eps):
    """R(ε, 0) at large ε: the line P_MD = e^{−ε}(1 − P_FA) is tiny but real — at P_MD = e^{−ε}/2 the
    best test has P_FA = 1/2. Built directly, the envelope lost it to the rounding of the steep
    line (P_FA ≈ 0 there: the region looked larger in P_FA by 1/2); now the boundary is its own
    mirror image exactly."""
    b = intersection_boundary([eps], [0.0])
    y = 0.5 * np.exp(-eps)
    p_fa = np.interp(-y, -b.p_md, b.p_fa)
    assert p_fa == pytest.approx(0.5, rel=1e-9)
    mirrored = sorted(zip(b.p_md.tolist(), b.p_fa.tolist(), strict=True))
    assert sorted(zip(b.p_fa.tolist(), b.p_md.tolist(), strict=True)) == mirrored
