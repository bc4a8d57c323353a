"""The utility figure's Gaussian σ at many k from one search of the composed μ (Steinke Cor. 8/10;
``dpviz.planner.gaussian_sigma``) against the per-k search it replaces (``noise.searched_noise``):
the same rows without a value, each σ certified by the same route, on the sound side of the per-k
answer's optimum and no looser than it beyond the μ search's tolerance."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.mechanisms import routes
from dpviz.mechanisms.registry import make
from dpviz.planner import gaussian_sigma, noise
from dpviz.views import planner as pv
from dpviz.views.planner import utility_ks

KS = [1, 2, 3, 7, 10, 56, 100, 422, 1000, 31_623, 100_000]


def per_k(k: int, *, epsilon: float, delta: float, sensitivity: float) -> float:
    p = noise.searched_noise("gaussian", k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    return p.value if p.feasible and p.value is not None else math.nan


def certified_upper(sigma: float, k: int, *, delta: float, sensitivity: float) -> float:
    g = routes.analytic([(make("gaussian", sigma=sigma, sensitivity=sensitivity), k)], delta=delta)
    assert g is not None and g.upper is not None
    return g.upper


def check_against_per_k(ks: list[int], *, epsilon: float, delta: float, sensitivity: float) -> None:
    new = gaussian_sigma.smallest_sigmas(ks, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    for k, sigma in zip(ks, new, strict=True):
        old = per_k(k, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
        assert math.isnan(sigma) == math.isnan(old), (k, sigma, old)
        if math.isnan(old):
            continue
        # certified at k steps, as the per-k answer is
        assert certified_upper(sigma, k, delta=delta, sensitivity=sensitivity) <= epsilon
        # the per-k answer is within its search's tolerance above the optimum, which σ is not below
        assert sigma >= old * (1.0 - 2.0 * noise.RTOL_EXACT), (k, sigma, old)
        # and σ is within the μ search's tolerance of the optimum, which the per-k answer is not below
        assert sigma <= old * (1.0 + 4.0 * gaussian_sigma.MU_RTOL), (k, sigma, old)


@settings(max_examples=25, deadline=None)
@given(epsilon=st.floats(1e-3, 100.0), log_delta=st.floats(-300.0, -0.5), sensitivity=st.floats(0.01, 100.0))
def test_sigmas_match_the_per_k_search(epsilon: float, log_delta: float, sensitivity: float) -> None:
    check_against_per_k(KS[:6], epsilon=epsilon, delta=10.0**log_delta, sensitivity=sensitivity)


def test_sigmas_on_the_figure_grid() -> None:
    ks = [int(k) for k in utility_ks(100_000)]
    check_against_per_k(ks, epsilon=1.0, delta=1e-5, sensitivity=1.0)
    check_against_per_k(KS, epsilon=0.05, delta=1e-10, sensitivity=3.0)


def test_rows_without_a_value_stay_without_one() -> None:
    """ε = 0: the per-k answer is refused (its neighbour's interval is inconsistent with ε ≤ 0);
    the shortcut goes through the same check, so the curve has no point there either."""
    out = gaussian_sigma.smallest_sigmas([1, 10, 100], epsilon=0.0, delta=1e-5, sensitivity=1.0)
    assert np.isnan(out).all()
    check_against_per_k([1, 10, 100], epsilon=0.0, delta=1e-5, sensitivity=1.0)


def test_a_sigma_just_below_does_not_fit() -> None:
    """Tight: 1e-8 less noise at each k is certified above the target."""
    ks = [1, 5, 100, 5000]
    for k, sigma in zip(ks, gaussian_sigma.smallest_sigmas(ks, epsilon=0.7, delta=1e-6, sensitivity=2.0),
                        strict=True):
        assert certified_upper(sigma * (1.0 - 1e-8), k, delta=1e-6, sensitivity=2.0) > 0.7


def test_the_table_the_figure_and_the_cli_give_one_sigma():
    """The Gaussian's σ at k: the noise table (``smallest_noise``), the utility figure's curve at the
    same k (``gaussian_series``) and ``dpviz plan noise gaussian`` in a fresh process are one number."""
    ks = [int(k) for k in utility_ks(1000)]
    k = ks[len(ks) // 2]
    curve = pv.gaussian_series(epsilon=0.8, delta=2e-6, sensitivity=1.5, k_max=1000)
    table = noise.smallest_noise("gaussian", k=k, epsilon=0.8, delta=2e-6, sensitivity=1.5).value
    assert curve is not None and curve[ks.index(k)] == table
    done = subprocess.run([sys.executable, "-m", "dpviz", "plan", "noise", "gaussian", "--epsilon", "0.8",
                           "--delta", "2e-6", "--k", str(k), "--sensitivity", "1.5"],
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["sigma"] == table
