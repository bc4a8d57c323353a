"""Poisson subsampling: the exact subsampled loss law against Steinke Thm 29 (tight)."""

from __future__ import annotations

import math

import pytest

from dpviz.mechanisms import canonical, randomized_response
from dpviz.mechanisms.subsampling import amplify, subsample
from dpviz.pld import epsilon_interval
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
    iv = epsilon_interval([(remove, 1)], delta=1e-3, h=1e-4)
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
