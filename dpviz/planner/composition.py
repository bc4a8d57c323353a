"""Inverse questions of classic composition (Steinke seed 001 Remark 15, §4–§5; KOV Thm 3.1–3.5):
the largest per-step ε0 for k releases, the largest common factor of a mix of levels, the
largest number of releases k — each for every method of ``dpviz.composition.METHODS``.

Every method's ε(δ) grows with each ε_i and with k, so the largest value that fits is found by
bracketing and bisecting (``dpviz.numerics``); the answer is the end of the bracket that was
evaluated and fits, never a value that does not. Budgeted methods (the exact optimum) are
bisected on δ(ε_target) ≤ δ_target, which is the same question for an exact δ(ε) and much
cheaper than solving ε(δ) at every step; the forward ε(δ) is then computed at the answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from dpviz.budget import Budget
from dpviz.composition import METHODS, Level, Levels, Method, as_levels, homogeneous, optimal
from dpviz.guarantee import Guarantee
from dpviz.planner.optimal_k import LargestK, delta_score
from dpviz.planner.result import Plan, step_budget
from dpviz.planner.search import largest, largest_int
from dpviz.validation import EPSILON_MAX, K_MAX, ParameterError, check_count, check_delta, check_epsilon

EPS0_RTOL = 4e-10
"""Relative width of the final ε0 bracket: ε0 × (1 + 1e-9) is beyond its upper end."""
SMALLEST = 1e-12
"""Below this ε0 (or factor) the search stops: nothing positive of interest fits."""


def scaled(levels: Levels, factor: float) -> Levels:
    """The levels with every ε multiplied by ``factor`` (δ and counts kept)."""
    return tuple(Level(epsilon=lv.epsilon * factor, delta=lv.delta, count=lv.count) for lv in levels)


def forward(method: Method, levels: Levels, *, delta: float, budget: Budget | None = None) -> Guarantee:
    """The method's ε at total δ for ``levels`` (the forward check)."""
    return method.epsilon_for_delta(levels, delta=delta, budget=budget)


def score_fn(method: Method, *, epsilon: float, delta: float,
             budget: Budget | None = None) -> Callable[[Levels], float]:
    """A continuous score of the levels, ≤ 0 exactly when the method's bound is within (ε, δ):
    ε(δ) − ε_target, or for budgeted methods z(δ_target) − z(δ(ε_target)) with z(δ) = √(−2 ln δ)
    (``inf``: no value)."""
    if method.budgeted:
        # the search asks each levels once: the optimum's uncached δ(ε) builds half the atoms
        ask = getattr(method.module, "delta_for_epsilon_once", None)

        def score(levels: Levels) -> float:
            g = (ask(levels, epsilon=epsilon, budget=budget) if ask is not None else
                 method.delta_for_epsilon(levels, epsilon=epsilon, budget=budget))
            return delta_score(g.delta if g.feasible else None, delta)
    else:
        def score(levels: Levels) -> float:
            g = method.epsilon_for_delta(levels, delta=delta, budget=budget)
            if not g.feasible or g.epsilon is None:
                return math.inf
            return g.epsilon - epsilon if g.epsilon != epsilon else 0.0
    return score


def _forward_fits(g: Guarantee, epsilon: float) -> bool:
    return g.feasible and g.epsilon is not None and g.epsilon <= epsilon


def largest_factor(method: Method, levels: Levels, *, epsilon: float, delta: float,
                   budget: Budget | None = None, start: float = 1.0
                   ) -> tuple[float | None, float, Guarantee | None]:
    """(lo, hi, check): lo the largest factor c found with the levels scaled by c fitting (``None``
    when even c → 0 does not fit), hi > lo the smallest found that does not (``inf``: none), and
    the forward ε(δ) at lo, which fits."""
    score_levels = score_fn(method, epsilon=epsilon, delta=delta, budget=budget)
    top = EPSILON_MAX / max(lv.epsilon for lv in levels)

    def score(c: float) -> float:
        return score_levels(scaled(levels, c))

    lo, hi = largest(score, start=start, top=top, smallest=SMALLEST * start, rtol=EPS0_RTOL,
                     narrow_rtol=EPS0_RTOL, probe=True)
    if lo is None:
        return None, hi, None
    # the forward ε(δ) at lo must itself fit (budgeted methods were bisected on δ(ε))
    for _ in range(64):
        g = forward(method, scaled(levels, lo), delta=delta, budget=budget)
        if _forward_fits(g, epsilon):
            return lo, hi, g
        hi, lo = lo, lo * (1.0 - EPS0_RTOL)
    return None, hi, None


def _plan_factor(key: str, method: Method, levels: Levels, *, name: str, epsilon: float, delta: float,
                 budget: Budget | None, start: float, unit: float = 1.0, beyond: bool = True) -> Plan:
    """The plan for the largest factor of ``levels`` (for ε0: levels of ε = 1); ``beyond``: also the
    forward check of the next value up (the tables show it; a series of answers does not)."""
    lo, hi, g = largest_factor(method, levels, epsilon=epsilon, delta=delta, budget=budget, start=start)
    if lo is None or g is None:
        g = forward(method, scaled(levels, SMALLEST * start), delta=delta, budget=budget)
        reason = g.reason if not g.feasible else (
            f"even {'ε0 =' if name == 'eps0' else 'a factor'} {SMALLEST * start:.3g} gives "
            f"ε = {g.epsilon:.6g} > {epsilon:g}")
        return Plan(key=key, name=name, value=None, check=g, target_epsilon=epsilon, target_delta=delta,
                    reason=reason)
    nxt = lo * (1.0 + 1e-9)
    after = forward(method, scaled(levels, nxt), delta=delta, budget=budget) \
        if beyond and nxt * max(lv.epsilon for lv in levels) <= EPSILON_MAX else None
    note = "" if math.isfinite(hi) else f"every ε0 up to {EPSILON_MAX:g} fits"
    n = sum(lv.count for lv in levels)
    what = (f"composing {n:,} × ε0 = {lo * unit:.10g}" if name == "eps0" else
            f"composing the {n:,} mechanisms with every ε × {lo * unit:.10g}")
    return Plan(key=key, name=name, value=lo * unit, check=g, target_epsilon=epsilon, target_delta=delta,
                beyond_value=nxt * unit if after is not None else None, beyond=after, note=note, what=what)


def max_eps0(*, k: int, epsilon: float, delta: float, delta0: float = 0.0, budget: Budget | None = None,
             methods: Sequence[str] | None = None, beyond: bool = True) -> dict[str, Plan]:
    """The largest per-step ε0 (to 1e-9 relative) with k-fold composition of (ε0, δ0)-DP steps
    within (ε, δ), for each method. ``beyond=False``: the same answers without the check of
    ε0 × (1 + 1e-9) (a series of answers, e.g. the planner's utility figure, shows no such check)."""
    budget = step_budget(budget)
    k = check_count(k, field="k")
    epsilon = check_epsilon(epsilon, field="epsilon")
    delta = check_delta(delta, field="delta")
    delta0 = check_delta(delta0, field="delta0")
    base = homogeneous(k=k, eps0=1.0, delta0=delta0)
    start = max(epsilon, SMALLEST) / k
    return _plan_all(_methods(methods), base, name="eps0", epsilon=epsilon, delta=delta, budget=budget,
                     start=start, beyond=beyond)


def _plan_all(methods: dict[str, Method], levels: Levels, *, name: str, epsilon: float, delta: float,
              budget: Budget | None, start: float, beyond: bool = True) -> dict[str, Plan]:
    """Every method's plan. The closed forms (not budgeted) cost microseconds; the largest of their
    answers starts the search of the budgeted ones (the exact optimum allows at least as much as
    any sound theorem), which saves most of its bracketing steps."""
    cheap = {key: _plan_factor(key, m, levels, name=name, epsilon=epsilon, delta=delta, budget=budget,
                               start=start, beyond=beyond)
             for key, m in METHODS.items() if not m.budgeted}
    hint = max((p.value for p in cheap.values() if p.feasible and p.value is not None), default=start)
    return {key: cheap[key] if key in cheap else
            _plan_factor(key, m, levels, name=name, epsilon=epsilon, delta=delta, budget=budget,
                         start=hint if m.budgeted else start, beyond=beyond)
            for key, m in methods.items()}


def max_factor(levels: Sequence[Level], *, epsilon: float, delta: float, budget: Budget | None = None,
               methods: Sequence[str] | None = None) -> dict[str, Plan]:
    """The largest common factor c (to 1e-9 relative) such that the mix with every ε_i × c fits
    (ε, δ) (heterogeneous levels, δ_i kept), for each method."""
    budget = step_budget(budget)
    levels = as_levels(levels)
    epsilon = check_epsilon(epsilon, field="epsilon")
    delta = check_delta(delta, field="delta")
    if max(lv.epsilon for lv in levels) <= 0:
        raise ParameterError("levels", "all ε = 0",
                             "at least one level with ε > 0 (the factor scales the ε's)")
    total = math.fsum(lv.count * lv.epsilon for lv in levels)
    start = max(epsilon, SMALLEST) / total
    return _plan_all(_methods(methods), levels, name="factor", epsilon=epsilon, delta=delta, budget=budget,
                     start=start)


def max_k(*, eps0: float, epsilon: float, delta: float, delta0: float = 0.0, budget: Budget | None = None,
          methods: Sequence[str] | None = None, k_max: int = K_MAX) -> dict[str, Plan]:
    """The largest number of (ε0, δ0)-DP releases k whose composition fits (ε, δ), for each method
    (``k_max`` when every k up to it fits, with a note)."""
    budget = step_budget(budget)
    eps0 = check_epsilon(eps0, field="eps0")
    epsilon = check_epsilon(epsilon, field="epsilon")
    delta = check_delta(delta, field="delta")
    delta0 = check_delta(delta0, field="delta0")
    def plan_one(key: str, m: Method, start: Callable[[], int]) -> Plan:
        score = score_fn(m, epsilon=epsilon, delta=delta, budget=budget)

        def score_k(k: int) -> float:
            return score(homogeneous(k=k, eps0=eps0, delta0=delta0))

        def forward_k(k: int) -> Guarantee:
            return forward(m, homogeneous(k=k, eps0=eps0, delta0=delta0), delta=delta, budget=budget)

        placed = None
        if m.module is optimal:  # two exact evaluations instead of ten (``optimal_k``), same answer
            fast = LargestK(eps0=eps0, delta0=delta0, epsilon=epsilon, delta=delta, budget=budget,
                            top=k_max, fallback_score=score_k, fallback_forward=forward_k)
            score_k, forward_k = fast.score, fast.forward
            placed = fast.search()
        found, hi = placed or largest_int(score_k, top=k_max, start=start())
        if found is None:
            g = forward_k(1)
            return Plan(key=key, name="k", value=None, check=g, target_epsilon=epsilon,
                        target_delta=delta, reason=g.reason if not g.feasible else
                        f"one release already gives ε = {g.epsilon:.6g} > {epsilon:g}")
        lo = found
        note = f"every k up to {k_max:,} fits" if hi > k_max else ""
        g = forward_k(lo)
        while not _forward_fits(g, epsilon):  # the forward ε(δ) must fit too (budgeted: bisected on δ(ε))
            if lo == 1:
                return Plan(key=key, name="k", value=None, check=g, target_epsilon=epsilon,
                            target_delta=delta, reason=g.reason if not g.feasible else
                            f"one release gives ε = {g.epsilon!r} > {epsilon!r} (ε(δ) rounded up)")
            lo, hi = lo - 1, lo
            g = forward_k(lo)
        beyond = forward_k(hi) if hi <= K_MAX else None
        return Plan(key=key, name="k", value=float(lo), check=g,
                    target_epsilon=epsilon, target_delta=delta,
                    beyond_value=float(hi) if beyond is not None else None, beyond=beyond, note=note,
                    what=f"composing {lo:,} × (ε0 = {eps0:g}, δ0 = {delta0:g})")

    cheap: dict[str, Plan] = {}

    def closed_forms() -> dict[str, Plan]:
        if not cheap:
            cheap.update({key: plan_one(key, m, lambda: 1) for key, m in METHODS.items() if not m.budgeted})
        return cheap

    def hint() -> int:
        """The closed forms' largest answer: the budgeted searches start there (asked only when
        they run the generic search)."""
        return max((int(p.value) for p in closed_forms().values() if p.feasible and p.value is not None),
                   default=1)

    return {key: closed_forms()[key] if not m.budgeted else plan_one(key, m, hint)
            for key, m in _methods(methods).items()}


def _methods(keys: Sequence[str] | None) -> dict[str, Method]:
    if keys is None:
        return dict(METHODS)
    bad = [k for k in keys if k not in METHODS]
    if bad:
        raise ParameterError("method", bad[0], "one of " + ", ".join(METHODS))
    return {k: METHODS[k] for k in keys}
