"""A law's support (``LossLaw.support``) is cut where its tails reach the mass asked for, not at the
first power of two beyond it: a subsampled law of width ≈ q was spanned out to loss 1, so a
q = 1e-4 step was discretised and convolved on ~200 times the cells it needs (1.3 s of a 1.3 s run)."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mechanisms import gaussian, laplace
from dpviz.mechanisms.subsampling import subsample
from dpviz.pld import discretize
from dpviz.pld.accountant import epsilon_bounds


def _tail_above(law, x: float) -> float:
    c = law.continuous
    return max(float(c.sf_p(np.array([x]))[0]), float(c.sf_q(np.array([x]))[0]))


def _tail_below(law, x: float) -> float:
    c = law.continuous
    return max(float(c.cdf_p(np.array([x]))[0]), float(c.cdf_q(np.array([x]))[0]))


@pytest.mark.parametrize("q", [1e-4, 1e-3, 0.1, 1.0])
@pytest.mark.parametrize("sigma", [0.6, 2.0, 5.0])
@pytest.mark.parametrize("tail", [1e-9, 1e-14, 1e-20])
def test_support_is_sound_and_tight(q, sigma, tail) -> None:
    for law in subsample(gaussian.loss_law(sigma=sigma), rate=q):
        lo, hi = law.support(tail)
        c = law.continuous
        # sound: the mass beyond each end is at most ``tail`` (under P and Q)
        assert _tail_above(law, hi) <= tail
        assert _tail_below(law, lo) <= tail
        # tight: a little inside either end the tail is above ``tail`` (unless that end is the law's own)
        if hi < c.hi:
            assert _tail_above(law, hi - 2e-3 * abs(hi) - 1e-12) > tail
        if lo > c.lo:
            assert _tail_below(law, lo + 2e-3 * abs(lo) + 1e-12) > tail


def test_small_q_single_step_grid_is_small() -> None:
    """q = 1e-4, σ = 2: the step's losses lie in [ln(1 − q), ≈ 0.009] at tail 1e-20; at h = 1e-5
    that is ≈ 900 cells (it was 100,000: the support reached loss 1)."""
    law = subsample(gaussian.loss_law(sigma=2.0), rate=1e-4)[0]
    g = discretize.pessimistic(law, h=1e-5, tail=1e-20)
    assert g.mass.size < 2_000


def test_laplace_support_unchanged() -> None:
    """A bounded law's support is its own range."""
    law = laplace.loss_law(scale=2.0)
    assert law.support(1e-15) == (-0.5, 0.5)


def test_small_q_interval_holds_the_reference() -> None:
    """q = 1e-4, σ = 2, 10^4 steps, δ = 1e-5 on the tighter grid: the certified interval is narrow
    and holds an independent value (the same engine on a much finer, fixed grid)."""
    parts = [(subsample(gaussian.loss_law(sigma=2.0), rate=1e-4)[0], 10_000)]
    g = epsilon_bounds(parts, delta=1e-5)
    fine = epsilon_bounds(parts, delta=1e-5, h=1e-6)
    assert g.lower <= fine.upper and fine.lower <= g.upper
    assert g.upper - g.lower < 1e-4


@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("centre", [-3e5, -0.004, 0.0, 0.004, 7.0, 5e11])
def test_tail_search_is_a_few_vector_evaluations(up, centre) -> None:
    """The search evaluates the tail on arrays, a handful of times (it was ~100 calls of one point
    each: 9 ms of a 36 ms first query at q = 2.7e-4), and lands within 1e-3 of the crossing, on the
    sound side, wherever the law sits on the line."""
    from scipy.stats import norm

    from dpviz.pld.law import _bisect_tail
    scale = max(abs(centre) * 1e-3, 1e-4)
    calls: list[int] = []

    def f(x: np.ndarray) -> np.ndarray:
        calls.append(np.size(x))
        return norm.sf((x - centre) / scale) if up else norm.cdf((x - centre) / scale)

    x = _bisect_tail(f, 1e-14, up=up)
    crossing = centre + (1 if up else -1) * scale * float(norm.isf(1e-14))
    assert f(np.array([x]))[0] <= 1e-14
    assert abs(x - crossing) <= 1e-3 * max(abs(x), abs(crossing)) + 1e-12
    assert len(calls) - 1 <= 6 and min(calls[:-1]) > 1


def test_tail_search_steps_over_a_nan_of_the_tail() -> None:
    """A NaN of f counts as ≤ tail (as a comparison with it is false); one inside the bracket before
    a point above tail once ended the search with an IndexError."""
    from dpviz.pld.law import _bisect_tail
    tail = float(np.exp(-7.99))

    def f(x: np.ndarray) -> np.ndarray:
        y = np.exp(-np.asarray(x, dtype=float))
        return np.where((x > 4.5) & (x < 4.6), np.nan, y)

    x = _bisect_tail(f, tail, up=True)
    assert f(np.array([x]))[0] <= tail and abs(x - 7.99) <= 1e-2


@pytest.mark.parametrize("tail", [1e-9, 2e-14, 1.6e-18, 1e-30])
def test_support_from_kept_probe_values_is_the_plain_search(tail) -> None:
    """A law's tail at the first probe points is kept per law (``law._probed``) and shared by its
    supports at every tail: each end is the one the search finds evaluating the tail itself."""
    from dpviz.mechanisms import gaussian, laplace
    from dpviz.mechanisms.subsampling import subsample
    from dpviz.pld.law import _bisect_tail

    for law in (*subsample(gaussian.loss_law(sigma=8.648), rate=0.00098),
                *subsample(laplace.loss_law(scale=2.0), rate=0.1), gaussian.loss_law(sigma=0.7)):
        lo, hi = law.support(tail)
        c = law.continuous
        assert c is not None
        plain_hi = _bisect_tail(lambda x, c=c: np.fmax(c.sf_p(x), c.sf_q(x)), tail, up=True) \
            if not np.isfinite(c.hi) else c.hi
        plain_lo = _bisect_tail(lambda x, c=c: np.fmax(c.cdf_p(x), c.cdf_q(x)), tail, up=False) \
            if not np.isfinite(c.lo) else c.lo
        assert (lo, hi) == (plain_lo if law.loss.size == 0 else min(plain_lo, float(law.loss.min())),
                            plain_hi if law.loss.size == 0 else max(plain_hi, float(law.loss.max())))


@pytest.mark.parametrize("tail", [1e-9, 1.96e-14, 1.56e-18, 7.9e-21, 1e-30])
def test_a_reversed_law_support_is_its_original_mirrored(tail, monkeypatch) -> None:
    """A reversed law's support is its original's mirrored (no search of its own, ``law._support``):
    the same floats as searching its own tails, and no negative zero."""
    from dpviz.mechanisms import randomized_response as rr
    from dpviz.mechanisms.subsampling import subsample_remove
    from dpviz.pld import law as law_module

    laws = [subsample_remove(gaussian.loss_law(sigma=s), rate=q) for s in (0.5, 2.683, 8.648)
            for q in (1e-4, 0.00098, 0.1)]
    laws += [subsample_remove(laplace.loss_law(scale=b), rate=q) for b in (0.7, 3.0) for q in (0.0015, 0.2)]
    laws.append(rr.loss_law(eps0=0.5))
    orig = law_module._bisect_tail
    searched: list[int] = []

    def spy(*args, **kwargs):
        searched.append(1)
        return orig(*args, **kwargs)

    for law in laws:
        rev = law.reversed()
        own = rev._support(tail)  # its own tails searched
        law.support(tail)
        searched.clear()
        monkeypatch.setattr(law_module, "_bisect_tail", spy)
        got = rev.support(tail)
        monkeypatch.setattr(law_module, "_bisect_tail", orig)
        assert got == own and not searched
        assert [np.signbit(x) for x in got] == [np.signbit(x) for x in own]
