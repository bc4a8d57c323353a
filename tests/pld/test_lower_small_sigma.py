"""The lower end of a subsampled Gaussian with small σ (REVIEW finding 1, regression from 65713fe).

The bottom-up scan of the lower grid let the spike of the remove direction (loss near ln(1 − q))
take the whole far tail to rebalance itself, which at small σ it never could: the tail was then
stored below its loss and the lower end of ε was 0 (σ = 0.3, q = 1e-4, δ = 1e-8: [0, 8.07414]).
Truth here is the closed form of one step: with X ~ N(0, σ²), loss > ε iff X > x*, so
δ(ε) = (1 − q)Φ̄(x*/σ) + qΦ̄((x* − 1)/σ) − e^ε Φ̄(x*/σ), x* = σ² ln((e^ε − 1 + q)/q) + 1/2
(the remove direction has δ(ε) = 0 for ε > ln 1/(1 − q)).
"""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dpviz.mechanisms import routes
from dpviz.mechanisms.registry import make


def _delta(eps: float, sigma: float, q: float) -> float:
    x = sigma**2 * math.log((math.expm1(eps) + q) / q) + 0.5
    tail = norm.sf(x / sigma)
    return float((1 - q) * tail + q * norm.sf((x - 1) / sigma) - math.exp(eps) * tail)


def _epsilon(delta: float, sigma: float, q: float) -> float:
    return float(brentq(lambda e: _delta(e, sigma, q) - delta, 1e-3, 60.0, xtol=1e-13, rtol=1e-14))


def test_the_reported_setting_has_a_tight_lower_end() -> None:
    g = routes.pld([(make("gaussian", sigma=0.3, sampling_rate=1e-4), 1)], delta=1e-8)
    assert g.lower >= 8.07414 and g.lower <= 8.0741429729 * (1 + 1e-9)
    assert g.upper >= 8.0741429729 * (1 - 1e-9)


@pytest.mark.parametrize("sigma", [0.3, 0.5])
@pytest.mark.parametrize("q", [1e-4, 1e-3])
@pytest.mark.parametrize("delta", [1e-8, 1e-12])
def test_one_step_lower_end_is_within_1e3_of_the_closed_form(sigma, q, delta) -> None:
    truth = _epsilon(delta, sigma, q)
    g = routes.pld([(make("gaussian", sigma=sigma, sampling_rate=q), 1)], delta=delta)
    assert g.lower <= truth * (1 + 1e-9) and g.upper >= truth * (1 - 1e-9)
    assert g.lower >= truth * (1 - 1e-3)


def test_ten_steps_keep_the_lower_end() -> None:
    """k = 10 at the reported setting: before 65713fe [9.91446, 9.92298]; it had become [0, 9.92298]."""
    g = routes.pld([(make("gaussian", sigma=0.3, sampling_rate=1e-4), 10)], delta=1e-8)
    assert g.lower >= 9.9144 and g.upper - g.lower <= 1e-2
