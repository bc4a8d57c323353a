"""HBW's bounds for 0⃗ against U(B∖{0⃗}): identities, soundness per proved direction,
and the Theorem 3 reverse-direction counterexample of docs/MATH.md §5.4."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpviz.gce import hypotheses as H
from dpviz.gce import paper_bounds as PB
from dpviz.gce.exact import exact_pair

CASES = [pytest.param(k, e, d, id=f"k{k}-eps{e}-d{d:g}")
         for k, e, d in [(1, 0.5, 0.0), (2, 0.5, 1e-6), (5, 1.0, 1e-4), (12, 0.2, 1e-7), (30, 0.1, 0.0),
                         (40, 0.3, 1e-8)]]


@pytest.mark.parametrize(("k", "eps0", "delta0"), CASES)
def test_corollary7_equals_theorem3_with_basic_composition(k: int, eps0: float, delta0: float) -> None:
    """Cor. 7 (closed form) = Thm 3 with basic composition and each term's own δ (a sum
    over terms, another code path) = Eq. 3 summed over |b|. 1e-12: a few roundings."""
    c7 = PB.corollary7(k=k, eps0=eps0, delta0=delta0)
    t3 = PB.theorem3(k=k, eps0=eps0, delta0=delta0, method="basic")
    e34 = PB.eq34(k=k, eps0=eps0, delta0=delta0)
    for other in (t3, e34):
        assert other.epsilon == pytest.approx(c7.epsilon, rel=1e-12)
        assert other.delta == pytest.approx(c7.delta, rel=1e-12, abs=1e-300)
        assert other.directions == "both"


def test_corollary7_against_mpmath() -> None:
    """ln[((e^{ε0}+1)^k − 1)/(2^k − 1)] and 2^{k−1}kδ0/(2^k − 1) at 50 digits."""
    mpmath.mp.dps = 50
    for k, eps0, delta0 in [(1, 0.5, 1e-3), (7, 0.01, 1e-9), (300, 2.0, 1e-12), (5000, 0.05, 0.0)]:
        got = PB.corollary7(k=k, eps0=eps0, delta0=delta0)
        e = mpmath.mpf(eps0)
        want = mpmath.log(((mpmath.e**e + 1) ** k - 1) / (mpmath.mpf(2) ** k - 1))
        assert got.epsilon == pytest.approx(float(want), rel=1e-13)  # double rounding only
        wd = mpmath.mpf(2) ** (k - 1) * k * mpmath.mpf(delta0) / (mpmath.mpf(2) ** k - 1)
        assert got.delta == pytest.approx(float(wd), rel=1e-13, abs=0.0)


def test_corollary7_is_tight_for_pure_dp() -> None:
    """docs/MATH.md §5.5: at δ0 = 0 the exact ε at δ = 0 is Cor. 7's ε (the n_B = k class)."""
    for k, eps0 in [(1, 0.3), (4, 1.0), (50, 0.2)]:
        pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=0.0)
        assert pair.epsilon(0.0) == pytest.approx(PB.corollary7(k=k, eps0=eps0, delta0=0.0).epsilon,
                                                  rel=1e-12)


def _bounds(k: int, eps0: float, delta0: float, delta: float):
    out = [PB.corollary7(k=k, eps0=eps0, delta0=delta0), PB.eq34(k=k, eps0=eps0, delta0=delta0)]
    for m in PB.THEOREM3_METHODS:
        out.append(PB.theorem3(k=k, eps0=eps0, delta0=delta0, method=m, delta=delta))
        out.append(PB.corollary6(k=k, eps0=eps0, delta0=delta0, method=m, delta=delta))
    return [b for b in out if b.feasible]


@pytest.mark.parametrize(("k", "eps0", "delta0"), CASES)
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_exact_is_below_every_paper_bound_in_its_proved_direction(k, eps0, delta0, delta) -> None:
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=delta0)
    bounds = _bounds(k, eps0, delta0, delta)
    assert len(bounds) >= 2  # Cor. 7 and Eq. 3-4 always; Thm 3 and Cor. 6 when δ allows
    for b in bounds:
        # 1e-12 relative: the exact δ is a log-space sum; 1e-15 absolute: a loss atom that
        # sits exactly at ε (Cor. 7 is tight at δ0 = 0) may round a few ulps above it
        slack = 1e-12 * b.delta + 1e-15
        assert pair.delta_forward(b.epsilon) <= b.delta + slack, b.source
        if b.directions == "both":
            assert pair.delta_reverse(b.epsilon) <= b.delta + slack, b.source
        exact_eps = pair.epsilon(b.delta) if b.directions == "both" else pair.epsilon_forward(b.delta)
        assert exact_eps is not None and exact_eps <= b.epsilon * (1 + 1e-12) + 1e-12


def test_common_slack_is_labelled_both_and_exact_is_far_below_for_large_k() -> None:
    k, eps0, delta = 1000, 0.1, 1e-6
    t3 = PB.theorem3(k=k, eps0=eps0, delta0=0.0, method="optimal", delta=delta)
    assert t3.directions == "both" and t3.delta == delta
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=0.0)
    assert pair.epsilon(delta) < t3.epsilon


def test_truncated_terms_are_sound_and_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """k > TERMS bounds the tail by term TERMS: never below the full sum, within 2^-38."""
    k, eps0, delta0, delta = 90, 0.3, 1e-9, 1e-5
    cut = PB.theorem3(k=k, eps0=eps0, delta0=delta0, method="advanced", delta=delta)
    monkeypatch.setattr(PB, "TERMS", k)
    full = PB.theorem3(k=k, eps0=eps0, delta0=delta0, method="advanced", delta=delta)
    assert full.epsilon <= cut.epsilon <= full.epsilon + 2.0**-38


def test_theorem3_reverse_direction_counterexample() -> None:
    """docs/MATH.md §5.4: randomized response ε0 = 0.5, k = 2, total δ = 0.1. The best split of
    δ̂_1, δ̂_2 (weights 2/3, 1/3) claims ε ≈ 0.329, but the exact reverse direction needs
    more: the bound is labelled forward-only, and its reverse note is itself sound."""
    eps0, k, delta = 0.5, 2, 0.1
    best = None
    for d1 in np.linspace(0.0, 0.15, 301):
        d2 = (delta - 2 / 3 * d1) * 3
        if not 0 <= d2 < 1:
            continue
        b = PB.theorem3(k=k, eps0=eps0, delta0=0.0, method="optimal", split=[float(d1), float(d2)])
        if b.feasible and (best is None or b.epsilon < best.epsilon):
            best = b
    assert best is not None
    assert best.epsilon == pytest.approx(0.329, abs=1e-3)
    assert best.directions == "forward"
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=0.0)
    assert pair.delta_forward(best.epsilon) <= best.delta + 1e-12
    assert pair.delta_reverse(best.epsilon) > best.delta + 1e-3  # the claimed reverse fails
    assert pair.epsilon(delta) == pytest.approx(0.342, abs=1e-3)
    eps_r, delta_r = (float(x) for x in best.note.split("=")[-1].strip(" ()").split(","))
    assert pair.delta_reverse(eps_r + 1e-5) <= delta_r + 1e-5  # note rounded to 6 digits


def test_subsampled_guarantee() -> None:
    e, d = PB.subsampled(eps0=1.0, delta0=1e-4)
    assert e == pytest.approx(math.log((1 + math.e) / 2)) and d == 5e-5


def test_bad_inputs_name_the_field() -> None:
    from dpviz.validation import ParameterError
    with pytest.raises(ParameterError, match="method"):
        PB.theorem3(k=3, eps0=1.0, delta0=0.0, method="kov", delta=0.1)
    with pytest.raises(ParameterError, match="split"):
        PB.theorem3(k=3, eps0=1.0, delta0=0.0, split=[0.1])
    with pytest.raises(ParameterError, match="eps0"):
        PB.corollary7(k=3, eps0=-1, delta0=0.0)


@pytest.mark.parametrize("k", [2, 10, 13, 40, 64])
@pytest.mark.parametrize("method", PB.THEOREM3_METHODS)
def test_upper_bounds_at_eps0_zero_are_never_negative(k: int, method: str) -> None:
    """Issue 14: ln Σ w_i e^{ε_i} with every ε_i = 0 came out as −4.4e-16 (the weights sum to 1 only up
    to rounding) and was printed as an upper bound; ε ≥ 0, so clamping at 0 only raises the bound."""
    bound = PB.theorem3(k=k, eps0=0.0, delta0=0.0, method=method, delta=0.1)
    assert 0.0 <= bound.epsilon <= 1e-15  # the truth is 0; rounding may only raise it
    assert 0.0 <= PB.corollary7(k=k, eps0=0.0, delta0=0.0).epsilon <= 1e-15
