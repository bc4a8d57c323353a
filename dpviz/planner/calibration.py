"""The calibrations the noise planner searches with, and its per-k search (issue 9; Steinke seed 001
§4–§5 and §6.7 for Poisson subsampling / DP-SGD).

For each registered mechanism with a noise parameter (``NOISE``), the noise is searched as the
"spend" x (1/σ, 1/b, or the mechanism's ε0) whose certified upper ε at total δ grows with x; the
route that certifies it is the first of the exact atoms, the mechanism's closed form (the Gaussian,
Steinke Cor. 8/10) and the PLD accountant that answers at the starting point
(``dpviz.mechanisms.routes``). ``searched_noise`` searches it at k steps; ``answer`` makes the plan
of a found spend. ``dpviz.planner.noise`` chooses how each question is answered.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dpviz.budget import Budget
from dpviz.guarantee import Guarantee, Status
from dpviz.mechanisms import routes
from dpviz.mechanisms.registry import MECHANISMS, make
from dpviz.planner.result import Plan, fits_state, step_budget
from dpviz.planner.search import largest
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon, check_probability


def calibrated() -> dict[str, tuple[str, bool]]:
    """Registered mechanism key → (its noise parameter, whether a larger value is more noise), for
    every mechanism that declares one (``Mechanism.noise``), in registry order."""
    return {key: (cls.noise, cls.more_is_noise) for key, cls in MECHANISMS.items() if cls.noise is not None}


NOISE = calibrated()
"""The mechanisms calibrated at import time (the CLI's subcommands; ``calibrated()`` is live)."""

ROUTES: dict[str, Callable[..., Guarantee | None]] = {
    "exact": routes.exact, "analytic": routes.analytic, "pld": routes.pld}
"""The certified routes, in the order tried."""

RTOL_EXACT = 1e-7
"""Relative width of the final bracket for exact and closed-form routes (issue: 1e-6)."""
RTOL_PLD = 5e-5
"""… and for the PLD accountant (its own certified width is ~1e-3 of ε)."""
BELOW = 1e-4
"""The noise just below the answer: noise × (1 − 1e-4)."""
HINT_GROW = 1.01
"""The first bracketing step from a ``hint`` (``search.largest``'s ``grow``): 1 %, then 2 %, 4 %, …"""
EXACT_SECONDS = 0.015
"""The exact route's estimated work per evaluation of a search (``dpviz.budget``): beyond it the PLD
answers. A search evaluates 10-25 noises; the geometric mechanism at Δ = 3, 390 steps (1,171 lattice
points, 18 ms each) made Plan a budget's noise table cost 0.34 s where the PLD's grids take 0.16 s,
with the same answer to the search's rounding (Δ = 4, 50 steps, 201 points: still exact, 0.1 s). The
same cap for the page and the command line: one question, one answer."""
X_TOP = 100.0
"""Largest spend searched: ε0 ≤ 100, or noise ≥ Δ/100 for σ and b (per unit sensitivity)."""




def _check_key(mechanism: str) -> tuple[str, bool]:
    noise = calibrated()
    if mechanism not in noise:
        raise ParameterError("mechanism", mechanism, "one of " + ", ".join(noise))
    return noise[mechanism]


class Calibration:
    """The parts of one question: the mechanism at a spend x, and its certified route."""

    def __init__(self, mechanism: str, *, delta: float, sampling_rate: float | None,
                 neighbouring: str, budget: Budget | None, fixed: dict[str, Any]) -> None:
        self.key = mechanism
        self.param, self.is_noise = _check_key(mechanism)
        self.delta = delta
        self.rate = sampling_rate
        self.neighbouring = neighbouring
        self.budget = step_budget(budget)
        self.fixed = fixed
        self.route: str | None = None
        self.seen: dict[tuple[float, int], tuple[Guarantee, str | None]] = {}
        """Each (x, k) evaluated, with its answer and route: the search decided on that certified
        interval, so the answer's check is the same one (a PLD grid chosen again may differ)."""

    def value(self, x: float) -> float:
        """The mechanism parameter at spend x."""
        return 1.0 / x if self.is_noise else x

    def spend(self, value: float) -> float:
        return 1.0 / value if self.is_noise else value

    def mechanism(self, x: float) -> Any:
        return make(self.key, sampling_rate=self.rate, neighbouring=self.neighbouring,
                    **{self.param: self.value(x)}, **self.fixed)

    def guarantee(self, x: float, k: int) -> Guarantee:
        """The certified ε at δ of k steps at spend x: the route that answered last is tried
        first, then the others in ``ROUTES`` order, until one gives an upper bound (a route that
        is not computed here, e.g. exact atoms beyond their limit, falls through to the next);
        ``self.route`` names the route of the answer. A point asked again gets its first answer."""
        if (x, k) in self.seen:
            g, self.route = self.seen[(x, k)]
            return g
        g = self._guarantee(x, k)
        self.seen[(x, k)] = (g, self.route)
        return g

    def _guarantee(self, x: float, k: int) -> Guarantee:
        parts = [(self.mechanism(x), k)]
        order = list(ROUTES) if self.route is None else [self.route, *(r for r in ROUTES if r != self.route)]
        first: Guarantee | None = None
        for name in order:
            g = self._run(name, ROUTES[name], parts)
            if g is None:
                continue
            if g.status is Status.OK and g.upper is not None:
                self.route = name
                return g
            if g.status is Status.IMPOSSIBLE:  # proven: no other route can give a finite ε
                self.route = self.route or name
                return g
            first = first or g
        self.route = self.route or "pld"
        assert first is not None
        return first

    def _run(self, name: str, fn: Callable[..., Guarantee | None], parts: list[Any]) -> Guarantee | None:
        if name == "exact":  # at most EXACT_SECONDS an evaluation, on a page as on the command line
            return fn(parts, delta=self.delta, budget=replace(self.budget, seconds=min(
                self.budget.seconds, EXACT_SECONDS)))
        if name == "pld":  # the routes whose cost grows with the input: admitted by the budget
            return fn(parts, delta=self.delta, budget=self.budget)
        return fn(parts, delta=self.delta)

    def valid(self, x: float) -> bool:
        """Whether spend x is inside the mechanism's allowed range (e.g. discrete Gaussian σ ≤ 1000)."""
        try:
            self.mechanism(x)
        except ParameterError:
            return False
        return True

    def allowed(self, smallest: float, start: float, top: float) -> tuple[float, float] | str:
        """The allowed spends [low, high] within [smallest, top] (validity is an interval of x;
        each end found by bisection in log x, to 1e-12 relative, on the allowed side), or the
        mechanism's message when no point of the range is allowed."""
        anchor = min(max(start, smallest), top)
        if not self.valid(anchor):
            n = 64
            grid = [smallest * (top / smallest) ** (i / n) for i in range(n + 1)]
            found = [x for x in grid if self.valid(x)]
            if not found:
                try:
                    self.mechanism(anchor)
                except ParameterError as exc:
                    return str(exc)
            anchor = found[0]
        return self._edge(anchor, smallest), self._edge(anchor, top)

    def _edge(self, inside: float, outside: float) -> float:
        if self.valid(outside):
            return outside
        for _ in range(200):
            if abs(math.log(outside / inside)) <= 1e-12:
                break
            mid = math.sqrt(inside * outside)
            if self.valid(mid):
                inside = mid
            else:
                outside = mid
        return inside

    def score(self, epsilon: float, k: int) -> Callable[[float], float]:
        def s(x: float) -> float:
            try:
                g = self.guarantee(x, k)
            except ParameterError:  # a parameter outside the mechanism's range
                return math.inf
            if g.status is not Status.OK or g.upper is None:
                return math.inf
            return g.upper - epsilon
        return s


WALK = 50
"""When the value just beyond the answer is certified to fit (the PLD accountant's grid width
depends on what it measured, so a later evaluation may be finer), the answer moves on to it, at
most this many steps."""

CONSISTENCY = 0.01
"""How far (relative) the next value's certified lower ε may exceed the answer's certified upper ε
before the two are called inconsistent (a 1e-4 step in the noise moves ε by ~1e-4)."""


def disagree(check: Guarantee, beyond: Guarantee | None, *, step: float) -> str | None:
    """A reason when the next value's certified lower ε is far above the answer's certified upper
    ε (more than the ``step`` ratio the change can explain, plus ``CONSISTENCY``): one of the two
    intervals is wrong, and the answer is not certified."""
    if beyond is None or beyond.status is not Status.OK or beyond.lower is None or check.upper is None:
        return None
    if beyond.lower <= check.upper * step * (1.0 + CONSISTENCY) + 1e-12:
        return None
    return (f"not certified: the accountant's interval at the answer (ε ≤ {check.upper:.6g}) and at the "
            f"next value (ε ≥ {beyond.lower:.6g}) are inconsistent ({check.source}; {check.detail})")


def _fixed(mechanism: str, sensitivity: float | None, categories: int | None) -> dict[str, Any]:
    keys = {p.key for p in MECHANISMS[mechanism].params}
    out: dict[str, Any] = {}
    if sensitivity is not None:
        if "sensitivity" not in keys:
            raise ParameterError("sensitivity", sensitivity, f"not a parameter of {mechanism}")
        out["sensitivity"] = sensitivity
    if categories is not None:
        if "categories" not in keys:
            raise ParameterError("categories", categories, f"not a parameter of {mechanism}")
        out["categories"] = categories
    return out


def _calibration(mechanism: str, *, epsilon: float, delta: float, sensitivity: float | None,
                 sampling_rate: float | None, neighbouring: str, categories: int | None,
                 budget: Budget | None) -> tuple[float, float, float | None, Calibration]:
    """The checked targets and rate, and the calibration of ``mechanism`` they ask for."""
    epsilon = check_epsilon(epsilon, field="epsilon")
    delta = check_delta(delta, field="delta")
    if sampling_rate is not None:
        sampling_rate = check_probability(sampling_rate, field="sampling_rate")
    cal = Calibration(mechanism, delta=delta, sampling_rate=sampling_rate, neighbouring=neighbouring,
                      budget=budget, fixed=_fixed(mechanism, sensitivity, categories))
    return epsilon, delta, sampling_rate, cal


def search_range(cal: Calibration, *, epsilon: float, k: int, sensitivity: float | None,
                 sampling_rate: float | None) -> tuple[float, float, float]:
    """The search's first spend (ε/√k per unit of sensitivity, over q: Steinke Remark 15's
    scaling), its largest spend and its smallest one."""
    unit = float(sensitivity) if (sensitivity is not None and cal.is_noise) else 1.0
    start = max(epsilon, 1e-3) / math.sqrt(k) / (sampling_rate or 1.0)
    start = start / unit if cal.is_noise else start
    top = X_TOP / unit if cal.is_noise else X_TOP
    return start, top, 1e-9 * min(start, top)


def calibration(mechanism: str, *, epsilon: float, delta: float, sensitivity: float | None = None,
                sampling_rate: float | None = None, neighbouring: str = "add-remove",
                categories: int | None = None, budget: Budget | None = None) -> Calibration:
    """The calibration ``smallest_noise`` searches with these arguments (checked as it checks them)."""
    return _calibration(mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                        sampling_rate=sampling_rate, neighbouring=neighbouring, categories=categories,
                        budget=budget)[3]


def searched_noise(mechanism: str, *, k: int, epsilon: float, delta: float, sensitivity: float | None = None,
                   sampling_rate: float | None = None, neighbouring: str = "add-remove",
                   categories: int | None = None, budget: Budget | None = None,
                   hint: float | None = None) -> Plan:
    """``smallest_noise`` by a search over this mechanism's own noise at k steps (every mechanism;
    the Gaussian without subsampling is answered from the composed μ instead)."""
    k = check_count(k, field="k")
    epsilon, delta, sampling_rate, cal = _calibration(
        mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity, sampling_rate=sampling_rate,
        neighbouring=neighbouring, categories=categories, budget=budget)
    score = cal.score(epsilon, k)
    start, top, smallest = search_range(cal, epsilon=epsilon, k=k, sensitivity=sensitivity,
                                        sampling_rate=sampling_rate)
    name = cal.param
    allowed = cal.allowed(smallest, start, top)
    if isinstance(allowed, str):
        g = Guarantee.not_computed(source=MECHANISMS[mechanism].title, reason=allowed)
        return Plan(key=mechanism, name=name, value=None, check=g, target_epsilon=epsilon,
                    target_delta=delta, reason=allowed, extra=(("route", None),))
    bottom = allowed[0] if allowed[0] > smallest else None
    top = allowed[1]
    grow = 2.0
    if hint is not None and hint > 0 and math.isfinite(hint):
        start, grow = min(max(cal.spend(float(hint)), smallest), top), HINT_GROW
    score(min(max(start, bottom or 0.0), top))  # chooses the route
    rtol = RTOL_PLD if cal.route == "pld" else RTOL_EXACT
    lo, hi = largest(score, start=start, top=top, smallest=smallest, rtol=rtol,
                     narrow_rtol=rtol, steps=8, bottom=bottom, grow=grow)
    if lo is None:
        g = cal.guarantee(hi, k)
        if bottom is not None and g.status is Status.OK:  # more noise would fit, but it is outside the range
            more = "larger" if cal.is_noise else "smaller"
            reason = (f"even {name} = {cal.value(hi):.6g}, the {'largest' if cal.is_noise else 'smallest'} "
                      f"the {MECHANISMS[mechanism].title} allows here, gives ε = {g.epsilon:.6g} > "
                      f"{epsilon:g}; a {more} {name} is outside its range")
            nc = Guarantee.not_computed(source=g.source, reason=reason, epsilon=g.epsilon, delta=g.delta)
            return Plan(key=mechanism, name=name, value=None, check=nc, target_epsilon=epsilon,
                        target_delta=delta, reason=reason, extra=(("route", cal.route),))
        if bottom is not None and g.status is Status.NOT_COMPUTED:
            reason = (f"at {name} = {cal.value(hi):.6g}, the {'largest' if cal.is_noise else 'smallest'} the "
                      f"{MECHANISMS[mechanism].title} allows here: {g.reason}")
            return Plan(key=mechanism, name=name, value=None, check=g, target_epsilon=epsilon,
                        target_delta=delta, reason=reason, extra=(("route", cal.route),))
        return Plan(key=mechanism, name=name, value=None, check=g, target_epsilon=epsilon, target_delta=delta,
                    reason=g.reason if g.status is not Status.OK else
                    f"even {name} = {cal.value(hi):.6g} gives ε = {g.epsilon:.6g} > {epsilon:g}",
                    extra=(("route", cal.route),))
    return answer(cal, lo, hi, k=k, epsilon=epsilon, delta=delta, top=top, sampling_rate=sampling_rate)


def answer(cal: Calibration, lo: float, hi: float, *, k: int, epsilon: float, delta: float, top: float,
           sampling_rate: float | None) -> Plan:
    """The plan at the spend ``lo`` a search found to fit (``hi``: the smallest found not to fit,
    ``inf`` when the search stopped at ``top``): its certified check, the noise just below it
    (walking on while that fits), and the consistency of the two (``disagree``)."""
    mechanism, name = cal.key, cal.param
    g = cal.guarantee(lo, k)
    route = cal.route
    value = cal.value(lo)
    below_value = value * (1.0 - BELOW) if cal.is_noise else value / (1.0 - BELOW)
    below = cal.guarantee(cal.spend(below_value), k) if cal.spend(below_value) <= top else None
    for _ in range(WALK):  # the value just below fits after all (the accountant chose a finer grid there)
        if below is None or fits_state(below, epsilon) is not True:
            break
        lo, g, value, route = cal.spend(below_value), below, below_value, cal.route
        below_value = value * (1.0 - BELOW) if cal.is_noise else value / (1.0 - BELOW)
        below = cal.guarantee(cal.spend(below_value), k) if cal.spend(below_value) <= top else None
    clash = disagree(g, below, step=1.0)
    if clash:
        return Plan(key=mechanism, name=cal.param, value=None, check=Guarantee.not_computed(
            source=g.source, reason=clash), target_epsilon=epsilon, target_delta=delta, reason=clash,
            extra=(("route", route),))
    note = "" if math.isfinite(hi) else f"the search stopped at {name} = {value:.6g}"
    return Plan(key=mechanism, name=name, value=value, check=g, target_epsilon=epsilon, target_delta=delta,
                beyond_value=below_value if below is not None else None, beyond=below, note=note,
                extra=(("route", route), ("k", k), ("sampling_rate", sampling_rate)))
