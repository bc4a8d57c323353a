"""The binomial window (``binomial_atoms.binomial_window``) computed with scalar weights is the window the
array weights give (seed 004 KOV Thm 3.3 via eq. 16): the same (lo, hi), so the same atoms and
the same δ_opt, at a fraction of the cost (the planner's inverse evaluates it at every step)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import binomial_atoms as atoms
from dpviz.numerics import bisect_int


def reference_window(k: int, eps0: float) -> tuple[int, int]:
    """The window found with one ``binomial_log_weights`` call per index (the original route)."""
    def w(index: int) -> float:
        return float(atoms.binomial_log_weights(k, eps0, np.array([float(index)]))[0])

    mode = min(k, max(0, int((k + 1) / (1.0 + math.exp(eps0)))))
    lo = 0
    if w(0) < atoms.TAIL_LOG_MASS:
        lo = bisect_int(lambda i: w(i) < atoms.TAIL_LOG_MASS, 0, mode)[1]
    hi = k
    if w(k) < atoms.TAIL_LOG_MASS:
        hi = bisect_int(lambda i: w(i) >= atoms.TAIL_LOG_MASS, mode, k)[0]
    return lo, hi


@settings(max_examples=60, deadline=None)
@given(log_k=st.floats(0.0, 7.0), log_eps0=st.floats(-6.0, 1.5))
def test_window_matches_array_weights(log_k: float, log_eps0: float) -> None:
    k, eps0 = max(1, int(10.0**log_k)), 10.0**log_eps0
    assert atoms.binomial_window.__wrapped__(k, eps0) == reference_window(k, eps0)


@settings(max_examples=40, deadline=None)
@given(log_k=st.floats(1.3, 7.0), log_eps0=st.floats(-6.0, 1.0), u=st.floats(0.0, 1.0))
def test_scalar_weight_close_to_array_weight(log_k: float, log_eps0: float, u: float) -> None:
    k, eps0 = int(10.0**log_k), 10.0**log_eps0
    index = min(k, int(u * (k + 1)))
    exact = float(atoms.binomial_log_weights(k, eps0, np.array([float(index)]))[0])
    fast = atoms._weight_fn(k, eps0)(index)
    assert math.isclose(fast, exact, rel_tol=1e-12, abs_tol=1e-12)


def test_window_at_the_threshold_uses_array_weights(monkeypatch) -> None:
    """A scalar weight rounded to the other side of the threshold does not move the window: values
    within the slack are recomputed by the array route."""
    k, eps0 = 1_000_000, 1e-3
    lo, hi = reference_window(k, eps0)
    exact = atoms._weight_fn(k, eps0)

    def skewed(k_: int, eps0_: float):
        def w(index: int) -> float:  # the boundary weights rounded to the wrong side of the threshold
            if index in (lo - 1, hi + 1):
                return atoms.TAIL_LOG_MASS
            if index in (lo, hi):
                return atoms.TAIL_LOG_MASS * (1.0 + 1e-12)
            return exact(index)
        return w

    monkeypatch.setattr(atoms, "_weight_fn", skewed)
    assert atoms.binomial_window.__wrapped__(k, eps0) == (lo, hi)


@settings(max_examples=60, deadline=None)
@given(log_k=st.floats(0.0, 6.5), log_eps0=st.floats(-5.0, 1.0), delta0=st.sampled_from([0.0, 1e-9, 1e-3]),
       u=st.floats(-0.2, 1.2))
def test_delta_once_is_delta_bit_for_bit(log_k: float, log_eps0: float, delta0: float, u: float) -> None:
    """The planner's uncached δ_opt(ε) (atoms with loss > ε only) is the cached one's number exactly,
    from below every atom (all kept, the lower lump too) to above kε0 (the upper lump only)."""
    from dpviz.composition import homogeneous, optimal

    k, eps0 = max(1, int(10.0**log_k)), 10.0**log_eps0
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    sd = math.sqrt(k) * eps0  # the loss's spread: probe where δ(ε) is neither 0 nor its floor
    eps = max(0.0, u * min(k * eps0, k * eps0 * math.tanh(eps0 / 2) + 12 * sd))
    once = optimal.delta_for_epsilon_once(levels, epsilon=eps)
    full = optimal.delta_for_epsilon(levels, epsilon=eps)
    assert once.delta == full.delta and once.kind == full.kind and once.source == full.source


@settings(max_examples=60, deadline=None)
@given(log_k=st.floats(0.0, 7.0), log_eps0=st.floats(-6.0, 2.0))
def test_end_weights_are_the_array_weights_bit_for_bit(log_k: float, log_eps0: float) -> None:
    """The scalar weights of l = 0 and l = k (C(k, 0) = C(k, k) = 1, no Stirling terms) are the
    array route's numbers exactly, so the window's first two comparisons cannot differ."""
    k, eps0 = max(1, int(10.0**log_k)), 10.0**log_eps0
    fast = atoms._weight_fn(k, eps0)
    ends = atoms.binomial_log_weights(k, eps0, np.array([0.0, float(k)]))
    assert (fast(0), fast(k)) == (float(ends[0]), float(ends[1]))
