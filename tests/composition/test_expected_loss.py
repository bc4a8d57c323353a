"""Roth lecture 4 Lemma 7 (KL ≤ ε(e^ε − 1)) and the exact largest KL of an ε-DP pair, ε tanh(ε/2)
(docs/MATH.md §19), against brute force: the KL of random finite pairs at 50 digits, each compared
with the bounds at its own ε = max |ln P/Q|; and the teaching text on the curves page."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpviz.composition import expected_loss
from dpviz.views.curves import lemma7_text


def mp_kl(p: np.ndarray, q: np.ndarray) -> mpmath.mpf:
    with mpmath.workdps(50):
        pairs = zip(p.tolist(), q.tolist(), strict=True)
        return mpmath.fsum(mpmath.mpf(a) * mpmath.log(mpmath.mpf(a) / mpmath.mpf(b)) for a, b in pairs)


def test_random_pairs_obey_lemma7_and_the_exact_worst_case():
    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(2, 7))
        p = rng.dirichlet(np.full(n, 0.7))
        q = rng.dirichlet(np.full(n, 0.7))
        eps = float(np.max(np.abs(np.log(p / q))))
        kl = mp_kl(p, q)
        assert kl <= expected_loss.worst_kl(eps) * (1 + 1e-12)
        assert expected_loss.worst_kl(eps) <= expected_loss.zcdp_kl(eps) <= expected_loss.lemma7(eps)


@pytest.mark.parametrize("eps", [1e-6, 0.1, 0.9, 2.0, 10.0])
def test_randomized_response_attains_the_worst_case(eps):
    """The binary pair (e^ε, 1)/(1 + e^ε) against (1, e^ε)/(1 + e^ε) has KL ε tanh(ε/2) exactly."""
    with mpmath.workdps(50):
        e = mpmath.mpf(eps)
        hi, lo = mpmath.exp(e) / (1 + mpmath.exp(e)), 1 / (1 + mpmath.exp(e))
        kl = hi * mpmath.log(hi / lo) + lo * mpmath.log(lo / hi)
        assert expected_loss.worst_kl(eps) == pytest.approx(float(kl), rel=1e-14)
        assert expected_loss.lemma7(eps) == pytest.approx(float(e * mpmath.expm1(e)), rel=1e-14)


def test_the_curves_text_quotes_the_numbers_at_eps0():
    text = lemma7_text(0.1)
    assert "Roth Lemma 7" in text and "ε0(e^ε0 − 1)" in text
    assert "Lemma 7 gives 0.01052" in text          # 0.1 (e^0.1 − 1) = 0.010517…
    assert "ε0²/2 = 0.005" in text
    assert "ε0 tanh(ε0/2) = 0.004996" in text        # 0.1 tanh(0.05) = 0.0049958…
