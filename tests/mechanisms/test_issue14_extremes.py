"""Issue 14: mechanism inputs at the edges of the float range.

Each reproducer from the issue runs through ``dpviz.cli.main`` under the fuzz harness (no
exception, no warning on stderr, strict JSON, lower ≤ upper across routes); the numbers behind
each fix are checked against closed forms or mpmath.
"""

from __future__ import annotations

import json
import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from dpviz.buckets import Buckets, epsilon_from_delta_curve
from dpviz.mechanisms import gaussian, geometric, laplace, routes
from dpviz.mechanisms.registry import make
from dpviz.mechanisms.subsampling import amplify
from dpviz.pld import discretize
from tests.fuzz.harness import check

REPRODUCERS = (  # the commands, verbatim
    "mechanism gaussian --sigma 0.0003 --k 200 --delta 1e-3 --compare",
    "mechanism laplace --scale 5e-324 --k 827 --sampling-rate 1e-300 --delta 2.88e-10",
    "mechanism laplace --scale 5e-324 --sensitivity 0.5 --k 5 --sampling-rate 1 --delta 3.04052e-05 "
    "--h 1.107941e-08",
    "mechanism gaussian --sigma 33.96365522581371 --sensitivity 2 --k 23906 --delta 1e-320 --compare",
    "mechanism gaussian --sigma 1 --k 10 --delta 1e-400",
    # found by the fuzz suite
    "mechanism geometric --eps0 100 --k 31 --delta 0.5 --sensitivity 18",
    "mechanism geometric --eps0 5e-324 --k 2 --delta 1e-12 --sensitivity 2 --compare",
    "mechanism gaussian --sigma 10000000 --k 27 --delta 0.056 --sensitivity 1e-300",
    "mechanism laplace --scale 0.001 --k 100 --delta 1e-3 --compare",
)


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("command", REPRODUCERS)
def test_reproducer_has_no_traceback_and_a_consistent_answer(command: str) -> None:
    o = check(command.split(), timeout=120)
    assert o.problems == [], o.problems


def test_tiny_laplace_scale_is_refused_naming_scale() -> None:
    """ε0 = Δ/b = 0.5/5e-324 is beyond the float range (the old code crashed converting ∞ to int)."""
    o = check(REPRODUCERS[2].split())
    assert o.code == 2 and o.stderr.startswith("python -m dpviz mechanism: error: scale must be at least")
    with pytest.raises(ValueError, match="scale must be"):
        laplace.epsilon0(scale=5e-324, sensitivity=1.0)
    assert laplace.epsilon0(scale=1e-6, sensitivity=1.0) == pytest.approx(1e6)  # the largest allowed


def test_tiny_gaussian_sigma_is_refused_naming_sigma() -> None:
    with pytest.raises(ValueError, match="sigma must be at least"):
        gaussian.mu(sigma=1e-300)


def test_buckets_withheld_with_a_reason_when_the_factor_would_overflow() -> None:
    """σ = 0.0003: losses reach 8.4e6, so ln f ≈ 168 before any squaring; the old code overflowed."""
    out = json.loads(check(REPRODUCERS[0].split(), timeout=120).stdout)
    b = out["routes"]["buckets"]  # ln f ≈ 168 at the leaves, ≈ 4e4 after the squarings
    assert b["lower"] is None and b["upper"] is None and "not computed" in b["detail"]
    exact = out["routes"]["analytic"]
    pld = out["routes"]["pld"]
    assert pld["status"] in ("ok", "not_computed")  # the grid may decline these losses (±8.4e6), saying why
    if pld["status"] == "ok":
        assert pld["lower"] <= exact["exact"] <= pld["upper"]
    assert out["epsilon"] == exact["upper"] and out["method"] == "analytic"


def test_gaussian_bracket_at_zero_delta_is_infinite() -> None:
    """δ/(2k) = 1e-320/47812 underflows to 0: the Gaussian needs ε = ∞ there (no domain error)."""
    assert gaussian.epsilon_bracket(delta=0.0, sigma=1.0) == (math.inf, math.inf)
    g = routes.generic([(make("gaussian", sigma=33.96365522581371, sensitivity=2.0), 23906)], delta=1e-320)
    assert g.upper is None and "underflows to 0" in (g.reason or "")
    _, hi = gaussian.epsilon_bracket(delta=1e-320, sigma=33.96365522581371, sensitivity=2.0, k=23906)
    assert gaussian.delta_for_epsilon(epsilon=hi, sigma=33.96365522581371, sensitivity=2.0, k=23906) <= 1e-320


def test_laplace_tails_in_log_space_match_mpmath_at_large_eps0() -> None:
    """ε0 = 1000: e^{−ε0} underflows and e^{(ε0+ℓ)/2} overflows; the old product was 0·∞ = NaN."""
    mp.mp.dps = 40
    e0 = 1000.0
    c = laplace.loss_law(scale=1.0 / e0).continuous
    for x in (-999.0, -500.0, 0.0, 500.0, 990.0, 999.9):
        half = mp.mpf(1) / 2
        cdf_p = half * mp.e ** (-e0) * mp.expm1((e0 + mp.mpf(x)) / 2)
        sf_q = half * mp.e ** (-e0) * mp.expm1((e0 - mp.mpf(x)) / 2)
        assert float(c.cdf_p(np.array([x]))[0]) == pytest.approx(float(cdf_p), rel=1e-13, abs=1e-300)
        assert float(c.sf_q(np.array([x]))[0]) == pytest.approx(float(sf_q), rel=1e-13, abs=1e-300)


def test_geometric_q_masses_without_exp_overflow() -> None:
    law = geometric.loss_law(eps0=100.0, sensitivity=18)
    assert np.all(np.isfinite(law.q)) and law.q.sum() == pytest.approx(1.0)
    small = geometric.loss_law(eps0=0.7, sensitivity=3)
    np.testing.assert_allclose(small.q, small.p * np.exp(-small.loss), rtol=1e-14)


@pytest.mark.parametrize("e, q", [(1000.0, 0.5), (800.0, 1e-300), (0.3, 0.2), (5.0, 1.0)])
def test_amplification_in_log_space(e: float, q: float) -> None:
    mp.mp.dps = 40
    expected = mp.log(1 + q * (mp.e ** mp.mpf(e) - 1))
    assert amplify(epsilon=e, delta=0.0, rate=q).epsilon == pytest.approx(float(expected), rel=1e-14)


def test_pld_grids_beyond_e_to_the_700_stay_bounds() -> None:
    """μ = 100: losses ≈ 5000 ± 800. Pessimistic δ ≥ exact, the rounded-down optimistic δ ≤ exact."""
    mp.mp.dps = 30
    law = gaussian.loss_law(sigma=0.01)
    h = 0.5
    up, low = discretize.pessimistic(law, h=h), discretize.optimistic(law, h=h)
    for eps in (4500.0, 5000.0, 5600.0):
        m = mp.mpf(100)  # Steinke Cor. 8 in 30 digits: e^ε Φ(−ε/μ − μ/2) underflows in floats
        exact = float(mp.ncdf(-eps / m + m / 2) - mp.e ** mp.mpf(eps) * mp.ncdf(-eps / m - m / 2))
        assert low.delta(eps) <= exact <= up.delta(eps)
        assert up.delta(eps) - low.delta(eps) < 0.05  # first order in h, but a real interval


def test_optimistic_grid_at_a_denormal_width_is_a_lower_bound() -> None:
    """h = 5e-324 collapses α = e^{ih} to 1; the lowered-chord hull divided by zero."""
    law = geometric.loss_law(eps0=5e-324, sensitivity=2)
    low = discretize.optimistic(law, h=5e-324)
    assert low.delta(0.0) <= float(law.delta(0.0)[0]) + 1e-300


def test_buckets_lower_bound_stays_below_the_truth_when_the_infinity_bucket_underflows() -> None:
    """Laplace ε0 = 1000, k = 100: the ∞ bucket's B-mass is ~e^{−2000}·A; stored untilted it
    underflowed to 0 and the lower curve counted it as infinite loss (certified ε > 6.5e6 against
    a true ε < 1e5). It is now kept in log space."""
    g = routes.buckets([(make("laplace", scale=0.001), 100)], delta=1e-3)
    assert g.lower is not None and g.lower <= 100 * 1000.0  # pure 100 ε0-DP: ε ≤ k ε0 at any δ


def test_lower_curve_above_delta_everywhere_returns_the_last_checked_point() -> None:
    assert epsilon_from_delta_curve(lambda e: 0.5, delta=0.1, lower=True) == 200.0 * 2**15  # last hi ≤ 1e7
    assert epsilon_from_delta_curve(lambda e: 0.5, delta=0.1) is None


def test_swamped_buckets_give_trivial_bounds() -> None:
    b = Buckets.from_law(gaussian.loss_law(sigma=1.0), log_f=0.001, n=100)._trivial()
    assert b.swamped and b.delta_upper(3.0) == 1.0 and b.delta_lower(3.0) == 0.0


def test_grid_errors_name_what_the_user_gave() -> None:
    """'h must be …, got h=0.456' (a coarsened h the user never typed) named the wrong value; a
    too-fine h names the user's own h, and without one the grid is the route's concern (no error)."""
    from dpviz.validation import ParameterError

    g = make("gaussian", sigma=1.0)
    with pytest.raises(ParameterError, match=r"^h must be coarse enough .*got h=1e-09$"):
        routes.pld([(g, 7)], delta=1e-5, h=1e-9)
    auto = routes.pld([(g, 7)], delta=1e-5)
    assert auto.status.value == "ok" and auto.lower is not None and auto.lower <= auto.upper
