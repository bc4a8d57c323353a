"""The largest per-database ε0 in the generalized composition experiment (HBW; docs/MATH.md §5):
k databases, one (ε0, δ0)-DP mechanism each, a membership cap C or a database prior, and a total
(ε, δ) — for the exact worst case and each paper bound of ``dpviz.gce.summary``.

Every bound of the summary grows with ε0, so each row's largest ε0 is found by the planner's
search; the summaries are computed once per ε0 and shared by the rows. A row fits when it has a
value, its δ is within the target and its ε is ≤ the target ε.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.composition import Level, optimal
from dpviz.gce import paper_bounds, summary
from dpviz.guarantee import Guarantee
from dpviz.planner.result import Plan, step_budget
from dpviz.planner.search import largest
from dpviz.validation import EPSILON_MAX, ParameterError, check_count, check_delta, check_epsilon

RTOL = 1e-9
"""ε0 to 1e-9 relative, as the composition planner."""
SEARCH_EVALUATIONS = 60
"""Summaries a search over every row evaluates (≈ 62 measured for the uniform-nonzero prior)."""
PER_TERM_SECONDS = 3.0e-3
"""Fixed work of one HBW Thm 3 term for its three methods, at the best split of δ and at one common
δ̂ (measured after the best split landed: whole searches at k = 5 to 40 took 1.0 to 7.7 s, 2.2 to
3.3 ms per term and evaluation; was 1.5e-3 with the common δ̂ alone), on top of the exact
optimum's own estimate (``optimal.cost``). Thm 3's terms are not budgeted by the summary, so the
planner estimates the whole search before it starts."""
UNIFORM_NONZERO_ROWS = ("classic", "exact", "cor7",
                        *(f"theorem3_{m}{tail}" for m in paper_bounds.THEOREM3_METHODS
                          for tail in ("", "_common")))
"""The rows of ``summary.uniform_nonzero``, named when the search is not run."""


def question(*, k: int, prior: str | None = None, cap: int | None = None, neighbouring: str = "unbounded",
             delta0: float = 0.0, delta: float, budget: Budget | None = None
             ) -> Callable[[float], dict[str, Guarantee]]:
    """The summary of the question as a function of ε0 (``--prior`` or ``--cap``, as the gce CLI)."""
    if (prior is None) == (cap is None):
        raise ParameterError("prior/cap", None, "exactly one of --prior or --cap")
    common = {"delta0": delta0, "delta": delta, "budget": budget}
    if cap is not None:
        return lambda e: summary.capped(k=k, cap=cap, neighbouring=neighbouring, eps0=e, **common)  # type: ignore[arg-type]
    assert prior is not None
    if prior == "uniform-nonzero":
        return lambda e: summary.uniform_nonzero(k=k, eps0=e, **common)  # type: ignore[arg-type]
    k2 = check_count(prior.split(":", 1)[1], field="prior at-least:K2", maximum=k)
    return lambda e: summary.at_least(k=k, k2=k2, eps0=e, **common)  # type: ignore[arg-type]


def search_cost(*, k: int, prior: str | None, eps0: float, delta0: float) -> Cost:
    """Estimated work of the whole search: only the uniform-nonzero prior has unbudgeted parts
    (HBW Thm 3: min(k, 40) terms, each an exact optimum of one (ε0, δ0) and k − 1 subsampled steps)."""
    if prior != "uniform-nonzero":
        return budgets.ZERO
    e_s, d_s = paper_bounds.subsampled(eps0=eps0, delta0=delta0)
    first = Level(epsilon=eps0, delta=delta0, count=1)
    levels = (first, Level(epsilon=e_s, delta=d_s, count=k - 1)) if k > 1 else (first,)
    n = min(k, paper_bounds.TERMS)
    per = n * (PER_TERM_SECONDS + optimal.cost(levels).seconds)
    return Cost(seconds=SEARCH_EVALUATIONS * per,
                what=f"{SEARCH_EVALUATIONS} evaluations of HBW Thm 3's {n} terms")


def _fits_score(g: Guarantee | None, epsilon: float, delta: float) -> float:
    if g is None or not g.feasible or g.epsilon is None or g.delta is None or g.delta > delta:
        return math.inf
    return g.epsilon - epsilon


def max_eps0(*, k: int, epsilon: float, delta: float, delta0: float = 0.0, prior: str | None = None,
             cap: int | None = None, neighbouring: str = "unbounded",
             budget: Budget | None = None) -> dict[str, Plan]:
    """Per summary row (``classic``, ``exact``, the paper bounds): the largest ε0 that fits."""
    k = check_count(k, field="k")
    epsilon = check_epsilon(epsilon, field="epsilon")
    delta = check_delta(delta, field="delta")
    delta0 = check_delta(delta0, field="delta0")
    ask = question(k=k, prior=prior, cap=cap, neighbouring=neighbouring, delta0=delta0, delta=delta,
                   budget=step_budget(budget))
    start = max(epsilon, 1e-9) / math.sqrt(k)
    whole, work = budgets.resolve(budget), search_cost(k=k, prior=prior, eps0=start, delta0=delta0)
    if not whole.admits(work):
        reason = whole.reason(work)
        return {key: Plan(key=key, name="eps0", value=None, target_epsilon=epsilon, target_delta=delta,
                          check=Guarantee.not_computed(source="HBW, database priors", reason=reason),
                          reason=reason)
                for key in UNIFORM_NONZERO_ROWS}
    cache: dict[float, dict[str, Guarantee]] = {}

    def at(e: float) -> dict[str, Guarantee]:
        if e not in cache:
            cache[e] = ask(e)
        return cache[e]

    rows = list(at(start))
    out: dict[str, Plan] = {}
    for key in rows:
        def score(e: float, key: str = key) -> float:
            return _fits_score(at(e).get(key), epsilon, delta)

        lo, hi = largest(score, start=start, top=EPSILON_MAX, smallest=1e-12 * start, rtol=RTOL)
        if lo is None:
            g = at(start)[key]
            out[key] = Plan(key=key, name="eps0", value=None, check=g, target_epsilon=epsilon,
                            target_delta=delta, reason=g.reason if not g.feasible else
                            f"no ε0 > 0 fits (δ = {g.delta:.6g}, ε = {g.epsilon:.6g})")
            continue
        nxt = lo * (1.0 + 1e-9)
        beyond = at(nxt).get(key) if nxt <= EPSILON_MAX else None
        g = at(lo)[key]
        out[key] = Plan(key=key, name="eps0", value=lo, check=g, target_epsilon=epsilon, target_delta=delta,
                        beyond_value=nxt if beyond is not None else None, beyond=beyond,
                        note="" if math.isfinite(hi) else f"every ε0 up to {EPSILON_MAX:g} fits",
                        extra=(("directions", g.directions),))
    return out
