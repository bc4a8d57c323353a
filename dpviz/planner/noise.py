"""Smallest noise for k releases, and the largest number of steps for a given noise (issue 9;
Steinke seed 001 §4–§5 and §6.7 for Poisson subsampling / DP-SGD).

For each registered mechanism with a noise parameter (``NOISE``), the noise is searched as the
"spend" x (1/σ, 1/b, or the mechanism's ε0) whose certified upper ε at total δ grows with x;
the route that certifies it is the first of the exact atoms, the mechanism's closed form (the
Gaussian, Steinke Cor. 8/10) and the PLD accountant that answers at the starting point
(``dpviz.mechanisms.routes``). The answer is the smallest noise whose certified upper ε is ≤ the
target; the noise 1e-4 below it is checked too (``Plan.beyond``): its lower ε is above the
target, or its bracket straddles it (the accountant cannot tell).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from dpviz.budget import Budget
from dpviz.guarantee import Guarantee, Status
from dpviz.planner import gaussian_sigma
from dpviz.planner.calibration import (  # named here too: the CLI, the views and the tests ask this module
    NOISE,
    RTOL_EXACT,
    RTOL_PLD,
    WALK,
    _calibration,
    disagree,
    searched_noise,
)
from dpviz.planner.result import Plan, fits_state
from dpviz.planner.search import largest_int
from dpviz.validation import K_MAX, ParameterError, check_count

__all__ = ["HINTS", "NOISE", "RTOL_EXACT", "RTOL_PLD", "disagree", "largest_steps", "searched_noise",
           "smallest_noise"]

HINTS: dict[str, tuple[str, Callable[[float], float]]] = {
    "discrete-gaussian": ("gaussian", lambda sigma: sigma),
    "laplace": ("geometric", lambda eps0: 1.0 / eps0),
}
"""Mechanism → (a mechanism whose answer is close to its own, the map from that answer to a
``hint`` of its noise): the discrete Gaussian's privacy curve is the Gaussian's at the same σ up to
a tiny correction (Canonne, Kamath, Steinke 2020, Thm 7), and the geometric mechanism is the
discrete Laplace of scale b = 1/ε0. Only where the search starts: see ``smallest_noise``."""


def _hinted(mechanism: str, *, k: int, epsilon: float, delta: float, sensitivity: float | None,
            neighbouring: str, budget: Budget | None) -> float | None:
    """Where ``mechanism``'s search starts: its close mechanism's answer (``HINTS``), mapped to its
    own noise parameter; None where that one has no value (or refuses these arguments)."""
    source, to_hint = HINTS[mechanism]
    try:
        p = _source_plan(source, k, epsilon, delta, sensitivity, neighbouring, budget)
    except ParameterError:
        return None
    return to_hint(p.value) if p.feasible and p.value else None


@lru_cache(maxsize=32)
def _source_plan(source: str, k: int, epsilon: float, delta: float, sensitivity: float | None,
                 neighbouring: str, budget: Budget | None) -> Plan:
    """``smallest_noise`` of a hint's source, remembered: the page and ``dpviz plan noise`` ask for it
    as a plan of its own too (``smallest_noise`` answers those from here), and it was searched twice
    (the geometric mechanism at Δ = 2, 390 steps: 0.15 s, once for the Laplace row's hint and once
    for its own row)."""
    return _smallest_noise(source, k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                           neighbouring=neighbouring, budget=budget)


_SOURCES = frozenset(source for source, _ in HINTS.values())


def smallest_noise(mechanism: str, *, k: int, epsilon: float, delta: float, sensitivity: float | None = None,
                   sampling_rate: float | None = None, neighbouring: str = "add-remove",
                   categories: int | None = None, budget: Budget | None = None,
                   hint: float | None = None) -> Plan:
    """The smallest noise (σ, b) — or the largest ε0 for geometric and randomized response — whose
    k-fold composition has certified upper ε ≤ ``epsilon`` at ``delta``. ``hint``: a value of the
    noise parameter believed within about ``HINT_GROW`` of the answer; the search starts there with
    a bracket that narrow. By default the answer of a close mechanism (``HINTS``: the Gaussian's
    for the discrete Gaussian, the geometric's for Laplace, not subsampled), so that the page and
    ``dpviz plan noise`` ask the same search and get one answer. It only chooses where to look: the
    answer is certified as without it, and equal to it within the search's tolerance. The Gaussian
    without subsampling is answered from the composed μ* (``dpviz.planner.gaussian_sigma``, Steinke
    Cor. 10): the same number the utility figure draws at k, the table shows and the CLI prints."""
    if mechanism in _SOURCES and sampling_rate is None and categories is None and hint is None:
        return _source_plan(mechanism, k, epsilon, delta, sensitivity, neighbouring, budget)
    return _smallest_noise(mechanism, k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                           sampling_rate=sampling_rate, neighbouring=neighbouring, categories=categories,
                           budget=budget, hint=hint)


def _smallest_noise(mechanism: str, *, k: int, epsilon: float, delta: float, sensitivity: float | None = None,
                    sampling_rate: float | None = None, neighbouring: str = "add-remove",
                    categories: int | None = None, budget: Budget | None = None,
                    hint: float | None = None) -> Plan:
    """``smallest_noise`` without the memory of the hints' sources."""
    k = check_count(k, field="k")
    epsilon, delta, sampling_rate, cal = _calibration(
        mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity, sampling_rate=sampling_rate,
        neighbouring=neighbouring, categories=categories, budget=budget)
    if mechanism == "gaussian" and sampling_rate is None and neighbouring == "add-remove" and hint is None:
        return gaussian_sigma.smallest_sigma(cal, k=k, epsilon=epsilon, delta=delta,
                                             sensitivity=1.0 if sensitivity is None else float(sensitivity))
    if hint is None and sampling_rate is None and categories is None and mechanism in HINTS:
        hint = _hinted(mechanism, k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                       neighbouring=neighbouring, budget=budget)
    return searched_noise(mechanism, k=k, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                          sampling_rate=sampling_rate, neighbouring=neighbouring, categories=categories,
                          budget=budget, hint=hint)


def largest_steps(mechanism: str, *, noise: float, epsilon: float, delta: float,
                  sensitivity: float | None = None, sampling_rate: float | None = None,
                  neighbouring: str = "add-remove", categories: int | None = None,
                  budget: Budget | None = None, k_max: int = K_MAX) -> Plan:
    """The largest number of steps k (e.g. DP-SGD with σ and rate q) whose certified upper ε at
    ``delta`` is ≤ ``epsilon``; ``noise`` is the mechanism's parameter of ``NOISE``."""
    epsilon, delta, sampling_rate, cal = _calibration(
        mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity, sampling_rate=sampling_rate,
        neighbouring=neighbouring, categories=categories, budget=budget)
    x = cal.spend(float(noise))
    cal.mechanism(x)  # the noise value checked once, named by its parameter

    def score(k: int) -> float:
        g = cal.guarantee(x, k)
        return g.upper - epsilon if g.status is Status.OK and g.upper is not None else math.inf

    lo, hi = largest_int(score, top=k_max)
    if lo is None:
        g = cal.guarantee(x, 1)
        return Plan(key=mechanism, name="k", value=None, check=g, target_epsilon=epsilon, target_delta=delta,
                    reason=g.reason if g.status is not Status.OK else
                    f"one step already gives ε = {g.epsilon:.6g} > {epsilon:g}",
                    extra=(("route", cal.route),))
    g = cal.guarantee(x, lo)
    route = cal.route
    beyond = cal.guarantee(x, hi) if hi <= K_MAX else None
    for _ in range(WALK):  # k + 1 fits after all (the accountant chose a finer grid there)
        if beyond is None or hi > k_max or fits_state(beyond, epsilon) is not True:
            break
        lo, g, route, hi = hi, beyond, cal.route, hi + 1
        beyond = cal.guarantee(x, hi) if hi <= K_MAX else None
    clash = disagree(g, beyond, step=1.0 + 2.0 / lo)
    if clash:
        return Plan(key=mechanism, name="k", value=None, check=Guarantee.not_computed(
            source=g.source, reason=clash), target_epsilon=epsilon, target_delta=delta, reason=clash,
            extra=(("route", route),))
    return Plan(key=mechanism, name="k", value=float(lo), check=g, target_epsilon=epsilon,
                target_delta=delta, beyond_value=float(hi) if beyond is not None else None, beyond=beyond,
                note=f"every k up to {k_max:,} fits" if hi > k_max else "",
                extra=(("route", route), (cal.param, float(noise)), ("sampling_rate", sampling_rate)))
