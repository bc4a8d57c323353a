"""Precision of the exact optimum against mpmath (KOV Thm 3.3 binomial sum at 30+ digits)."""

from __future__ import annotations

import math

import pytest

from dpviz.composition import homogeneous, optimal
from tests.oracles import mp_delta_opt

# The brief: ≤ 1e-9 relative. Measured error grows like k·1e-15 (ln C(k, l) by log-gamma
# loses ~|gammaln(k)|·ulp absolute): ~1e-14 at k = 10, ~1e-12 at 10^3, ~2e-10 at 10^5.
REL = 1e-9


def _eps_points(k: int, eps0: float) -> list[float]:
    """0, and ε at 0.5 … 6 standard deviations above the mean loss kε0·tanh(ε0/2), capped
    below kε0: δ from ~0.5 down to ~1e-9 and less."""
    mean, sd = k * eps0 * math.tanh(eps0 / 2), math.sqrt(k) * eps0
    return [0.0] + [min(mean + c * sd, 0.95 * k * eps0) for c in (0.5, 1.0, 2.0, 4.0, 6.0)]


CASES = [
    pytest.param(10, 0.5, 0.0, id="k10-eps0.5"),
    pytest.param(10, 0.1, 1e-4, id="k10-eps0.1-d1e-4"),
    pytest.param(1000, 0.01, 0.0, id="k1000-eps0.01"),
    pytest.param(1000, 0.2, 1e-9, id="k1000-eps0.2-d1e-9"),
]


@pytest.mark.parametrize(("k", "eps0", "delta0"), CASES)
def test_delta_matches_mpmath(k: int, eps0: float, delta0: float) -> None:
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    for eps in _eps_points(k, eps0):
        want = float(mp_delta_opt(k=k, eps0=eps0, delta0=delta0, eps=eps, dps=30))
        got = optimal.delta_for_epsilon(levels, epsilon=eps).delta
        assert got == pytest.approx(want, rel=REL), f"ε={eps}"


SLOW_CASES = [
    pytest.param(100_000, 0.01, 0.0, id="k1e5-eps0.01"),
    pytest.param(100_000, 0.001, 1e-10, id="k1e5-eps0.001-d1e-10"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("k", "eps0", "delta0"), SLOW_CASES)
def test_delta_matches_mpmath_large_k(k: int, eps0: float, delta0: float) -> None:
    """k = 10^5: the mpmath sum runs over the few thousand l that matter (see reference)."""
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    for eps in _eps_points(k, eps0):
        want = float(mp_delta_opt(k=k, eps0=eps0, delta0=delta0, eps=eps, dps=30))
        got = optimal.delta_for_epsilon(levels, epsilon=eps).delta
        assert got == pytest.approx(want, rel=REL), f"ε={eps}"


@pytest.mark.parametrize(("k", "eps0", "delta"), [
    pytest.param(1000, 0.1, 1e-5, id="k1000-eps0.1"),
    pytest.param(100_000, 0.01, 1e-5, id="k1e5-eps0.01"),
])
def test_epsilon_matches_mpmath_inverse(k: int, eps0: float, delta: float) -> None:
    """ε(δ) to 1e-9 relative: mpmath δ at ε(1 ± 1e-9) brackets the target."""
    eps = optimal.epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=0.0), delta=delta).epsilon
    assert float(mp_delta_opt(k=k, eps0=eps0, delta0=0.0, eps=eps * (1 + 1e-9), dps=30)) < delta
    assert float(mp_delta_opt(k=k, eps0=eps0, delta0=0.0, eps=eps * (1 - 1e-9), dps=30)) > delta
