"""Regions that are intersections over a slack (advanced, KOV Thm 3.4-3.5, zCDP) against dense
independent computations: the drawn region contains the theorem's (sound) and is larger by at
most 1e-4 in P_FA at every P_MD and in P_MD at every P_FA (issue 12 item 5; docs/MATH.md §13).

The oracle: the theorems' ε(s) typed in again from KOV Thm 3.2, 3.4-3.5 (numpy), the supremum
over the slack at each P_FA taken over 10^5 log-spaced slacks and then refined by a bounded
1-D maximisation (scipy) around the best one; and the Gaussian mechanism, whose privacy profile
gives back its trade-off curve Φ(Φ⁻¹(1 − x) − μ) in closed form.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_ndtr, ndtr, ndtri

from dpviz.composition import METHODS
from dpviz.composition.levels import Level, Levels, as_levels, homogeneous, sum_delta
from dpviz.regions import method_region
from dpviz.regions.boundary import Boundary
from dpviz.regions.methods import method_slack_region, region_methods, slack_module
from dpviz.regions.slack import TOLERANCE, pointwise, slack_region

Vec = Callable[[np.ndarray], np.ndarray]

XS = np.unique(np.concatenate([np.linspace(0.0, 1.0, 241), np.logspace(-320, -0.5, 120)]))
"""P_FA (and P_MD) values checked: a regular grid and the near-vertical part next to 0."""
ORACLE_SLACKS = np.logspace(-300, 0, 100_000, endpoint=False)


# ------------------------------------------------------------------ the theorems, typed in again
def _sums(levels: Levels) -> tuple[float, float, float, float, float]:
    n = [lv.count for lv in levels]
    e = [lv.epsilon for lv in levels]
    total = sum(c * x for c, x in zip(n, e, strict=True))
    var = sum(c * x * x for c, x in zip(n, e, strict=True))
    drv = sum(c * x * (math.exp(x) - 1) for c, x in zip(n, e, strict=True))  # KOV Thm 3.2
    kov = sum(c * x * (math.exp(x) - 1) / (math.exp(x) + 1) for c, x in zip(n, e, strict=True))
    keep = math.prod((1 - lv.delta) ** lv.count for lv in levels)
    return total, var, drv, kov, keep


def theorem(method: str, levels: Levels) -> tuple[Vec, Vec]:
    """(ε(s), δ(s)) of KOV Thm 3.2 (advanced) and Thm 3.4/3.5, vectorised, from the papers."""
    total, var, drv, kov, keep = _sums(levels)
    base = sum(lv.count * lv.delta for lv in levels)
    if method == "advanced":
        return (lambda s: np.sqrt(2 * var * np.log(1 / s)) + drv,
                lambda s: np.minimum(base + s, 1.0))
    assert method == "kov"

    def eps(s: np.ndarray) -> np.ndarray:
        second = kov + np.sqrt(2 * var * np.log(math.e + math.sqrt(var) / s))
        third = kov + np.sqrt(2 * var * np.log(1 / s))
        return np.minimum(total, np.minimum(second, third))
    return eps, lambda s: 1 - (1 - s) * keep


def _lines_at(x: np.ndarray, eps: np.ndarray, dlt: np.ndarray) -> np.ndarray:
    """max(0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x)) for every (x, slack) pair: rows x, columns slacks."""
    e = np.minimum(eps, 700.0)[None, :]
    b = (1 - dlt)[None, :]
    xx = x[:, None]
    return np.maximum(np.maximum(b - np.exp(e) * xx, np.exp(-e) * (b - xx)), 0.0)


def oracle(eps_fn: Vec, delta_fn: Vec, xs: np.ndarray, slacks: np.ndarray = ORACLE_SLACKS) -> np.ndarray:
    """sup_s max(0, both lines of R(ε(s), δ(s))) at each x: dense slacks, then a bounded
    maximisation in ln s between the best one's neighbours."""
    eps, dlt = eps_fn(slacks), delta_fn(slacks)
    out, best = np.empty(xs.size), np.empty(xs.size, dtype=int)
    for i in range(0, xs.size, 16):
        vals = _lines_at(xs[i:i + 16], eps, dlt)
        best[i:i + 16], out[i:i + 16] = vals.argmax(axis=1), vals.max(axis=1)
    logs = np.log(slacks)
    for i, (x, j) in enumerate(zip(xs, best, strict=True)):
        if out[i] <= 0.0:
            continue
        lo, hi = logs[max(j - 1, 0)], logs[min(j + 1, slacks.size - 1)]

        def neg(t: float, x: float = x) -> float:
            s = np.array([math.exp(t)])
            return -float(_lines_at(np.array([x]), eps_fn(s), delta_fn(s))[0, 0])
        r = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
        out[i] = max(out[i], -r.fun)
    return out


def inverse(b: Boundary, ys: np.ndarray) -> np.ndarray:
    """P_FA at which the lower boundary comes down to P_MD = y (the region's edge at that P_MD)."""
    return np.interp(-ys, -b.p_md, b.p_fa)


def assert_within(drawn: Boundary, truth: Callable[[np.ndarray], np.ndarray]) -> float:
    """Sound (never above the truth) and within the tolerance in P_MD at every checked P_FA and in
    P_FA at every checked P_MD (the true region is symmetric: its P_FA at P_MD = y is truth(y));
    returns the largest gap."""
    t = truth(XS)
    gap_md = t - drawn(XS)
    xs = XS
    ys = xs[(xs > 0) & (xs < drawn.p_md[0])]
    gap_fa = truth(ys) - inverse(drawn, ys)
    assert gap_md.min() >= -1e-9, f"drawn above the theorem's boundary by {-gap_md.min():.3g}"
    assert gap_fa.min() >= -1e-9, f"drawn right of the theorem's boundary by {-gap_fa.min():.3g}"
    worst = max(gap_md.max(), gap_fa.max())
    assert worst <= TOLERANCE, f"drawn region larger than the theorem's by {worst:.3g}"
    return float(worst)


CASES = {
    "issue k=30": homogeneous(k=30, eps0=0.1, delta0=1e-3),
    "one": homogeneous(k=1, eps0=0.7, delta0=1e-5),
    "heterogeneous": as_levels([Level(0.1, 1e-6, 30), Level(0.5, 0.0, 10), Level(1.0, 1e-3, 3)]),
    "eps0=50": homogeneous(k=3, eps0=50.0, delta0=0.0),
    "k=10^6": homogeneous(k=1_000_000, eps0=50.0, delta0=0.0),
    "k=10^6 small": homogeneous(k=1_000_000, eps0=0.001, delta0=0.0),
    "nearly vacuous": homogeneous(k=100, eps0=0.5, delta0=1e-6),
}


@pytest.mark.parametrize("method", ["advanced", "kov"])
@pytest.mark.parametrize("case", list(CASES))
def test_theorem_region_within_tolerance_of_dense_oracle(method: str, case: str) -> None:
    levels = CASES[case]
    eps_fn, delta_fn = theorem(method, levels)
    drawn = method_region(method, levels)
    memo: dict[bytes, np.ndarray] = {}

    def truth(xs: np.ndarray) -> np.ndarray:
        key = xs.tobytes()
        if key not in memo:
            memo[key] = oracle(eps_fn, delta_fn, xs)
        return memo[key]
    assert_within(drawn, truth)


def test_issue_case_was_coarse_and_is_now_exact() -> None:
    """k = 30, (0.1, 1e-3): the 400-slack sweep drew advanced and KOV 0.026 too large (issue 12)."""
    levels = CASES["issue k=30"]
    for method in ("advanced", "kov"):
        eps_fn, delta_fn = theorem(method, levels)
        coarse = np.logspace(-300, 0, 400, endpoint=False)
        from dpviz.regions import intersection_boundary
        old = intersection_boundary(eps_fn(coarse), delta_fn(coarse))
        truth = oracle(eps_fn, delta_fn, XS)
        assert (truth - old(XS)).max() > 0.02  # what the issue measured: the oracle sees it
        assert (truth - method_region(method, levels)(XS)).max() <= TOLERANCE


def gaussian(mu: float) -> tuple[Vec, Vec, Callable[[np.ndarray], np.ndarray]]:
    """ε(s) = μ ln(1/s) and the Gaussian's δ(ε) (Steinke Cor. 8): the intersection over s of
    R(ε(s), δ(ε(s))) is the Gaussian trade-off curve Φ(Φ⁻¹(1 − x) − μ), in closed form."""
    def eps(s: np.ndarray) -> np.ndarray:
        return mu * np.log(1 / s)

    def dlt(s: np.ndarray) -> np.ndarray:
        e = eps(np.where(s > 0, s, 1.0))
        v = ndtr(-e / mu + mu / 2) - np.exp(np.minimum(e + log_ndtr(-e / mu - mu / 2), 0.0))
        return np.where(s > 0, np.clip(v, 0.0, 1.0), 0.0)  # δ → 0 as ε → ∞
    return eps, dlt, lambda x: ndtr(-ndtri(x) - mu)  # Φ⁻¹(1 − x) = −Φ⁻¹(x), exact near 0


@pytest.mark.parametrize("mu", [0.1, 1.0, 3.0, 10.0])
def test_generic_sweep_recovers_the_gaussian_tradeoff_curve(mu: float) -> None:
    eps, dlt, curve = gaussian(mu)
    got = slack_region(eps, dlt)
    assert got.error_bound <= TOLERANCE
    assert_within(got.boundary, curve)


def test_error_bound_is_proved_not_just_observed() -> None:
    """The refinement's bound is larger than the actual gap of the unthinned envelope (it is an
    upper bound), and the reported total stays within the tolerance."""
    eps, dlt, curve = gaussian(1.0)
    got = slack_region(eps, dlt)
    actual = (curve(XS) - got.refined(XS)).max()
    assert 0.0 <= actual <= got.refine_bound <= TOLERANCE
    assert got.thin_error <= TOLERANCE - got.refine_bound + 1e-12


def test_coarser_tolerance_means_fewer_slacks_and_a_larger_gap() -> None:
    """The tolerance is what drives the sweep: the test could fail if it were ignored."""
    eps, dlt, curve = gaussian(1.0)
    fine, coarse = slack_region(eps, dlt, tolerance=1e-4), slack_region(eps, dlt, tolerance=1e-2)
    assert coarse.slacks.size < fine.slacks.size
    assert (curve(XS) - coarse.boundary(XS)).max() <= 1e-2
    assert (curve(XS) - coarse.boundary(XS)).max() > (curve(XS) - fine.boundary(XS)).max()


LEVELS_FOR_INTERFACE = [CASES["issue k=30"], CASES["heterogeneous"], homogeneous(k=7, eps0=2.0, delta0=0.0)]


@pytest.mark.parametrize("method", [m for m in METHODS if slack_module(m) is not None])
def test_every_slack_module_is_monotone_and_its_vector_form_agrees(method: str) -> None:
    """The error bound needs ε non-increasing and δ non-decreasing in the slack (the interface
    written in dpviz/regions/methods.py); every METHODS entry with the pair is checked."""
    module = slack_module(method)
    s = np.logspace(-300, 0, 3001)
    for levels in LEVELS_FOR_INTERFACE:
        eps = np.array([module.epsilon_at_slack(levels, slack=x) for x in s])
        dlt = np.array([module.total_delta(levels, x) for x in s])
        assert np.all(np.diff(eps) <= 1e-12 * np.maximum(eps[1:], 1.0)), method
        assert np.all(np.diff(dlt) >= 0), method
        assert module.total_delta(levels, 0.0) <= dlt[0]
        if hasattr(module, "epsilon_at_slacks"):  # never below the scalar ε (sound), and as tight
            vec = module.epsilon_at_slacks(levels, s)
            assert np.all(vec >= eps * (1 - 1e-14)), method
            np.testing.assert_allclose(vec, eps, rtol=1e-10)
        if hasattr(module, "total_deltas"):  # the same floats as the scalar δ: the drawn regions are
            # the ones the scalar sweep drew, bit for bit
            ends = np.array([0.0, *s, 1.0])
            assert module.total_deltas(levels, ends).tolist() == [module.total_delta(levels, x) for x in ends]


def test_regions_include_every_slack_method_and_zcdp_follows_its_own_theorem() -> None:
    assert region_methods()[0] == "basic" and region_methods()[-1] == "optimal"
    assert {"advanced", "kov"} <= set(region_methods())
    if "zcdp" not in region_methods():
        pytest.skip("no zcdp method yet")
    levels = CASES["issue k=30"]
    module = slack_module("zcdp")
    eps_fn = pointwise(lambda x: module.epsilon_at_slack(levels, slack=x))
    delta_fn = pointwise(lambda x: module.total_delta(levels, x))
    slacks = np.logspace(-300, 0, 20_000, endpoint=False)
    drawn = method_region("zcdp", levels)
    memo: dict[bytes, np.ndarray] = {}

    def truth(xs: np.ndarray) -> np.ndarray:
        key = xs.tobytes()
        if key not in memo:
            memo[key] = oracle(eps_fn, delta_fn, xs, slacks)
        return memo[key]
    assert_within(drawn, truth)


def test_sound_regions_contain_the_optimal_one_at_the_issue_case() -> None:
    levels = CASES["issue k=30"]
    opt = method_region("optimal", levels)(XS)
    for m in region_methods():
        assert np.all(method_region(m, levels)(XS) <= opt + 1e-12), m


def test_vacuous_theorem_draws_the_square() -> None:
    levels = homogeneous(k=2000, eps0=0.1, delta0=0.5)  # Σδ ≥ 1 and Π(1 − δ) = 0: every slack is vacuous
    assert sum_delta(levels) >= 1
    for m in ("advanced", "kov"):
        b = method_region(m, levels)
        assert np.all(b(XS) == 0.0)
        assert method_slack_region(m, levels).error_bound == 0.0


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown method"):
        method_region("nope", CASES["one"])
