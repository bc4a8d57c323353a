"""The smallest Gaussian σ at every k from one search (``smallest_noise`` of the Gaussian without
subsampling: the table, the utility figure's curve and ``dpviz plan noise gaussian``; issue 20).

k steps of the Gaussian mechanism with μ = Δ/σ compose to one Gaussian with μ√k (Steinke seed 001
Cor. 10), whose exact δ(ε) is Cor. 8. So the largest composed μ* whose certified ε at δ fits the
target does not depend on k (nor on Δ), and the smallest σ for k steps is Δ√k/μ*. One search finds
μ* (to ``MU_RTOL``, tighter than the per-k search's ``RTOL_EXACT``); each σ_k is then checked
by the same certified route as the per-k search ``searched_noise`` (its ``Calibration``), and
where the check fails by rounding (μ = Δ/σ_k·√k is not μ* to the last bit), σ_k is moved up until
it passes. The shown σ_k is therefore certified exactly as the per-k search's answer is, and no
larger than it beyond ``MU_RTOL``. A k outside the range the per-k search covers (its largest spend
``X_TOP``, its smallest) is searched by ``searched_noise``. μ* is remembered per (ε, δ),
so the table, the figure and the CLI give the same σ at k, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from dpviz.planner import calibration
from dpviz.planner.result import Plan
from dpviz.planner.search import largest
from dpviz.validation import K_MAX

MU_RTOL = 1e-10
"""Relative width of the final bracket on the composed μ*."""
NUDGES = 64
"""Steps (each twice the last, from 2⁻⁵⁰ relative) that may move σ_k up to a certified fit."""


MU_TOP = calibration.X_TOP * math.sqrt(K_MAX)
"""Largest composed μ searched: the per-k search's largest spend at the most steps allowed."""


@lru_cache(maxsize=64)
def largest_mu(*, epsilon: float, delta: float, top: float = MU_TOP) -> tuple[float | None, float]:
    """(μ*, μ_hi): the largest composed μ ≤ ``top`` found whose certified ε at ``delta`` (one
    Gaussian step of σ = 1/μ, Δ = 1: Steinke Cor. 8) is ≤ ``epsilon`` (None when none fits down
    to the smallest the per-k search tries at k = 1, ``search_range``), and the smallest μ
    found not to fit (``inf``: ``top`` fits). Remembered: the table, the figure and the CLI ask for
    the μ* of one (ε, δ) at every k."""
    cal = calibration.calibration("gaussian", epsilon=epsilon, delta=delta, sensitivity=1.0)
    start = max(epsilon, 1e-3)
    return largest(cal.score(epsilon, 1), start=min(start, top), top=top,
                   smallest=1e-9 * min(start, calibration.X_TOP), rtol=MU_RTOL, narrow_rtol=MU_RTOL, steps=8)


def _fitted(cal: calibration.Calibration, x: float, *, epsilon: float, k: int) -> float | None:
    """The spend x = 1/σ, moved down (σ up) until its certified ε at k steps fits; None if it never does."""
    score = cal.score(epsilon, k)
    step = 2.0**-50
    for _ in range(NUDGES):
        if score(x) <= 0:
            return x
        x *= 1.0 - step
        step = min(2.0 * step, 0.5)
    return None


def gaussian_plan_at(cal: calibration.Calibration, mu: float | None, mu_hi: float, *, k: int, epsilon: float,
            delta: float, sensitivity: float) -> Plan:
    """The plan for k steps (``answer``, as ``smallest_noise`` makes it) from the composed
    μ* and the smallest composed μ found not to fit; the per-k search where μ*/√k is not well
    inside that search's range (``search_range``: below ``X_TOP``, at least twice its smallest)."""
    _, top, smallest = calibration.search_range(cal, epsilon=epsilon, k=k, sensitivity=sensitivity,
                                          sampling_rate=None)
    root = math.sqrt(k)
    if mu is not None and 2.0 * smallest <= mu / root / sensitivity < top:
        x = _fitted(cal, mu / root / sensitivity, epsilon=epsilon, k=k)
        if x is not None:
            return calibration.answer(cal, x, max(mu_hi / root / sensitivity, x), k=k, epsilon=epsilon,
                                delta=delta, top=top, sampling_rate=None)
    return calibration.searched_noise("gaussian", k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity)


def smallest_sigmas(ks: Sequence[int] | NDArray[np.int_], *, epsilon: float, delta: float,
                    sensitivity: float) -> NDArray[np.float64]:
    """The smallest σ at each k whose k-fold certified ε at ``delta`` is ≤ ``epsilon`` (module
    docstring); NaN where ``smallest_noise`` has no value (nothing fits, or not certified)."""
    ks = [int(k) for k in ks]
    out = np.full(len(ks), np.nan)
    if not ks:
        return out
    cal = calibration.calibration("gaussian", epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    for i, k in enumerate(ks):
        p = smallest_sigma(cal, k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
        out[i] = p.value if p.feasible and p.value is not None else np.nan
    return out


def smallest_sigma(cal: calibration.Calibration, *, k: int, epsilon: float, delta: float,
                   sensitivity: float) -> Plan:
    """``smallest_noise`` of the Gaussian without subsampling: ``gaussian_plan_at`` from the remembered μ*."""
    mu, mu_hi = largest_mu(epsilon=epsilon, delta=delta)
    return gaussian_plan_at(cal, mu, mu_hi, k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity)
