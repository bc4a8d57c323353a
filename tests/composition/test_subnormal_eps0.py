"""A subnormal ε0 (ε0² = 0 in floating point) must not turn an upper bound into ε = 0: advanced
(DRV; KOV Thm 3.2) and KOV Thm 3.4 against mpmath at 50 digits, through ``compose`` and ``plan k``."""

from __future__ import annotations

import mpmath
import pytest

from dpviz.composition import METHODS, homogeneous
from dpviz.planner.composition import max_k

DELTA = 1e-5
EPS0 = [1e-310, 5e-324, 1e-300]
KS = [1, 10, 1000]


def _advanced(k: int, eps0: float, slack: float) -> mpmath.mpf:
    e = mpmath.mpf(eps0)
    return mpmath.sqrt(2 * k * mpmath.log(1 / mpmath.mpf(slack))) * e + k * e * mpmath.expm1(e)


def _kov(k: int, eps0: float, slack: float) -> mpmath.mpf:
    e, s = mpmath.mpf(eps0), mpmath.mpf(slack)
    t, var = k * e * mpmath.tanh(e / 2), k * e**2
    return min(k * e, t + mpmath.sqrt(2 * var * mpmath.log(mpmath.e + mpmath.sqrt(var) / s)),
               t + mpmath.sqrt(2 * var * mpmath.log(1 / s)))


ORACLES = {"advanced": _advanced, "kov": _kov}


@pytest.mark.parametrize("eps0", EPS0)
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("key", sorted(ORACLES))
def test_compose_is_above_the_exact_value(key: str, k: int, eps0: float) -> None:
    with mpmath.workdps(50):
        want = ORACLES[key](k, eps0, DELTA)
        got = METHODS[key].epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=0.0), delta=DELTA).epsilon
        assert want > 0
        assert mpmath.mpf(got) >= want, (got, want)
        assert mpmath.mpf(got) <= 4 * want + mpmath.mpf(2) ** -1070  # tight: a few subnormal steps at most


@pytest.mark.parametrize("eps0", EPS0)
def test_plan_k_certifies_a_positive_upper_bound(eps0: float) -> None:
    plans = max_k(eps0=eps0, epsilon=1.0, delta=DELTA, methods=sorted(ORACLES), k_max=1000)
    for key, plan in plans.items():
        g = plan.check
        assert plan.value == 1000
        with mpmath.workdps(50):
            assert mpmath.mpf(g.epsilon) >= ORACLES[key](1000, eps0, DELTA), key


def test_delta_direction_at_a_subnormal_epsilon() -> None:
    """ε = 3·ε0 with ε0 = 1e-310: δ' = e^{−(ε − drift)²/(2kε0²)} is of order 1, not 0."""
    eps0 = 1e-310
    levels = homogeneous(k=1, eps0=eps0, delta0=0.0)
    with mpmath.workdps(50):
        want = mpmath.exp(-((3 * mpmath.mpf(eps0)) ** 2) / (2 * mpmath.mpf(eps0) ** 2))
    got = METHODS["advanced"].delta_for_epsilon(levels, epsilon=3 * eps0).delta
    assert mpmath.mpf(got) >= want
    assert got < 2 * float(want)


@pytest.mark.parametrize("key", sorted(ORACLES))
def test_delta_at_an_ordinary_epsilon_is_the_smallest_positive_float(key: str) -> None:
    """ε = 1 with ε0 = 1e-310: (ε/√k ε0)² overflows; δ' = e^{−5e619} rounds up to 5e-324, no error
    (the planner's page asked exactly this and showed the exception box)."""
    g = METHODS[key].delta_for_epsilon(homogeneous(k=10, eps0=1e-310, delta0=0.0), epsilon=1.0)
    assert 0.0 <= g.delta <= 1e-300
