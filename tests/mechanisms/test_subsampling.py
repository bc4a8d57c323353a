"""Poisson subsampling: the exact subsampled loss law against Steinke Thm 29 (tight)."""

from __future__ import annotations

import math

import pytest

from dpviz.mechanisms import canonical, randomized_response
from dpviz.mechanisms.subsampling import amplify, subsample
from dpviz.pld import epsilon_bounds
from dpviz.validation import ParameterError


@pytest.mark.parametrize(("eps0", "rate"), [(1.0, 0.1), (0.3, 0.5), (3.0, 0.01)])
def test_pure_dp_amplification_is_tight(eps0, rate):
    """Thm 29 with δ = 0: the subsampled RR is exactly ln(1 + q(e^ε0 − 1))-DP, no better."""
    eps_amp = amplify(epsilon=eps0, delta=0.0, rate=rate).epsilon
    laws = subsample(randomized_response.loss_law(eps0=eps0), rate=rate)
    assert max(float(law.delta(eps_amp)[0]) for law in laws) <= 1e-15  # round-off of the loss
    assert max(float(law.delta(eps_amp * 0.99)[0]) for law in laws) > 0


@pytest.mark.parametrize(("eps0", "delta0", "rate"), [(1.0, 1e-3, 0.1), (0.5, 0.02, 0.3)])
def test_approximate_dp_amplification_is_tight(eps0, delta0, rate):
    """Thm 29 for the canonical pair: δ(ε') equals qδ0 exactly (the theorem is tight)."""
    g = amplify(epsilon=eps0, delta=delta0, rate=rate)
    laws = subsample(canonical.loss_law(eps0=eps0, delta0=delta0), rate=rate)
    worst = max(float(law.delta(g.epsilon)[0]) for law in laws)
    assert worst == pytest.approx(g.delta, rel=1e-9)  # float evaluation of the mixture


def test_directions_differ_and_pld_brackets_them():
    """For subsampled mechanisms the remove direction dominates at large ε; the PLD interval
    contains the exact ε of the worse direction."""
    base = randomized_response.loss_law(eps0=2.0)
    remove, add = subsample(base, rate=0.2)
    assert float(remove.delta(0.3)[0]) != pytest.approx(float(add.delta(0.3)[0]))
    iv = epsilon_bounds([(remove, 1)], delta=1e-3, h=1e-4)
    exact = max(_exact_eps(law, 1e-3) for law in (remove, add))
    assert iv.lower <= exact <= iv.upper


def _exact_eps(law, delta):
    lo, hi = 0.0, 20.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if float(law.delta(mid)[0]) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def test_rate_validation():
    with pytest.raises(ParameterError, match="sampling_rate must be a number in \\(0, 1\\]"):
        amplify(epsilon=1.0, delta=0.0, rate=1.5)
    assert math.isclose(amplify(epsilon=1.0, delta=0.1, rate=1.0).epsilon, 1.0)


def _subsampled_gaussian_delta(eps: float, *, mu: float, q: float) -> float:
    """δ(ε) of (P', Q) = ((1 − q)N(0,1) + qN(μ,1), N(0,1)) in closed form: L' > ε ⇔ x > x*, with
    x* = (ℓ + μ²/2)/μ and ℓ = ln((e^ε − 1 + q)/q) written for ε > 0 without overflow; the e^ε·Q term
    in log space (for ε ≳ 700)."""
    from scipy.special import log_ndtr, ndtr

    ell = eps + math.log1p(-(1 - q) * math.exp(-eps)) - math.log(q)
    x = (ell + mu * mu / 2) / mu
    p_tail = (1 - q) * ndtr(-x) + q * ndtr(-(x - mu))
    return float(p_tail - math.exp(eps + log_ndtr(-x)))


@pytest.mark.parametrize(("sigma", "rate"), [(0.02, 0.5), (0.025, 0.01)])
def test_subsampled_gaussian_with_losses_beyond_709_keeps_its_tails(sigma: float, rate: float) -> None:
    """ln(e^y − 1 + q) overflowed past y ≈ 709, so the subsampled law lost its tail mass there: for
    σ = 0.02, q = 0.5 the PLD and buckets said ε ∈ [709.75, 709.80] at δ = 1e-3; the truth is 1392.2
    (the add direction's loss is ≤ ln(1/(1 − q)), so the remove direction's closed form is the truth)."""
    from dpviz.mechanisms import routes
    from dpviz.mechanisms.registry import make

    g = routes.pld([(make("gaussian", sigma=sigma, sampling_rate=rate), 1)], delta=1e-3)
    assert g.status.value == "ok" and g.lower is not None and g.upper is not None
    mu = 1.0 / sigma
    # the closed form is accurate to ~1e-12 relative in δ; ε's certified ends must straddle 1e-3
    assert _subsampled_gaussian_delta(g.upper, mu=mu, q=rate) <= 1e-3 * (1 + 1e-9)
    assert _subsampled_gaussian_delta(g.lower, mu=mu, q=rate) >= 1e-3 * (1 - 1e-9)


def test_epsilon_is_zero_where_no_step_samples_the_person_with_probability_one_minus_delta() -> None:
    """Subsampled.closed_form: ε = 0 exactly at δ ≥ 1 − (1 − q)^k (the PLD's interval agrees), None
    just below; and the planner's σ search at such a q answers from it without a PLD grid (it once
    spent 30-110 s on grids whose every ε read 0)."""
    from dpviz.guarantee import Kind
    from dpviz.mechanisms import routes as R
    from dpviz.mechanisms.registry import make

    mech = make("gaussian", sigma=0.2, sampling_rate=1e-4, neighbouring="add-remove")  # TV of N, N + 1: 0.988
    sampled = 1.0 - (1.0 - 1e-4) ** 10
    g = mech.closed_form(10, delta=sampled * 1.01)
    assert g is not None and g.kind is Kind.EXACT and g.epsilon == 0.0
    assert mech.closed_form(10, delta=sampled * 0.99) is None
    pld = R.pld([(mech, 10)], delta=sampled * 1.01)
    assert pld.lower == 0.0
    below = R.pld([(mech, 10)], delta=sampled * 0.5)
    assert below.upper > 0.0  # the bound is not loose by much: half of it needs ε > 0


def test_the_planner_search_at_a_tiny_rate_needs_no_grid(monkeypatch) -> None:
    from dpviz.mechanisms.subsampling import SOURCE_UNSAMPLED
    from dpviz.planner import calibration
    from dpviz.views import planner

    def no_grid(*args, **kwargs):
        raise AssertionError("the PLD grid was composed")

    monkeypatch.setitem(calibration.ROUTES, "pld", no_grid)
    plans = planner.noise_plans(epsilon=1.0, delta=1e-5, k=20, sensitivity=1.0, sampling_rate=1.25e-10)
    check = plans["gaussian"].check
    assert check.epsilon == 0.0 and check.source == SOURCE_UNSAMPLED
