"""The largest per-database ε0 in the generalized composition experiment (HBW; docs/MATH.md §5):
k databases, one (ε0, δ0)-DP mechanism each, a membership cap C or a database prior, and a total
(ε, δ) — for the exact worst case and each paper bound of ``dpviz.gce.summary``.

Every bound of the summary grows with ε0, so each row's largest ε0 is found by the planner's
search on that row's own bound. For the uniform-nonzero prior and for a cap each row is evaluated
alone (a cheap row is searched fast, an exact optimum at its own cost); the uniform-nonzero prior's
searches are estimated by counted work before they run. The at-least prior's summary is computed
once per ε0 and shared by its rows. A row fits when it has a value, its δ is within the target and its ε
is ≤ the target ε.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.composition import Level, optimal
from dpviz.gce import hypotheses, paper_bounds, summary
from dpviz.gce.exact import family_cost as exact_cost
from dpviz.guarantee import Guarantee
from dpviz.planner.result import Plan, step_budget
from dpviz.planner.search import largest
from dpviz.validation import EPSILON_MAX, ParameterError, check_count, check_delta, check_epsilon

RTOL = 1e-9
"""ε0 to 1e-9 relative, as the composition planner."""
SEARCH_EVALUATIONS = 12
"""Evaluations of one row's own search (8 to 10 measured per row for the uniform-nonzero prior at
k = 11 to 100, δ0 = 1e-7: doubling or halving from ε/√k, regula falsi, bisection). A row that has
no value, or too large a δ, at ε/√k is tried at the smallest ε0 at once, so a row that fits
nowhere costs 2 evaluations, not 40 halvings."""
TERM_SECONDS = {"basic": 5.0e-5, "advanced": 8.0e-4, "optimal": 2.0e-3}
"""Fixed work of one HBW Thm 3 term per evaluation of ``theorem3_pair`` (the best split of δ, and
the common δ̂ with it), on top of the exact optimum's own estimate (``optimal.cost``) for optimal
composition. Measured on the loaded development machine in whole searches at k = 11 to 1000:
about 0.02, 0.4 to 0.7 and 1.2 to 2.1 ms per term and evaluation."""
COMMON_TERM_SECONDS = {"basic": 5.0e-5, "advanced": 1.0e-4, "optimal": 1.2e-3}
"""The same for one common δ̂ alone (``theorem3``, no split): the ``*_common`` rows' searches."""
UNIFORM_NONZERO_ROWS = ("classic", "exact", "cor7",
                        *(f"theorem3_{m}{tail}" for m in paper_bounds.THEOREM3_METHODS
                          for tail in ("", "_common")), "cor6")
"""The rows of ``summary.uniform_nonzero``, in its order."""
SOURCE = "HBW, database priors"


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


def _uniform_rows(*, k: int, delta0: float, delta: float,
                  budget: Budget | None) -> dict[str, Callable[[float], Guarantee]]:
    """Each row of ``summary.uniform_nonzero`` as its own function of ε0, so that each row's
    search evaluates only its own bound (the two rows of one Thm 3 method share ``theorem3_pair``)."""
    pairs: dict[tuple[str, float], tuple[Guarantee, Guarantee]] = {}
    priors: list[hypotheses.Hypothesis] = []

    def pair(method: str, e: float) -> tuple[Guarantee, Guarantee]:
        if (method, e) not in pairs:
            pairs[method, e] = paper_bounds.theorem3_pair(k=k, eps0=e, delta0=delta0, method=method,
                                                          delta=delta)
        return pairs[method, e]

    def common(method: str, e: float) -> Guarantee:
        """One common δ̂ alone (no split), unless the pair is known: ``theorem3_pair``'s second value."""
        if (method, e) in pairs:
            return pairs[method, e][1]
        return paper_bounds.theorem3(k=k, eps0=e, delta0=delta0, method=method, delta=delta)

    def exact(e: float) -> Guarantee:
        if not priors:  # built once (their size grows with k)
            priors.extend((hypotheses.point_zero(k=k), hypotheses.uniform_nonzero(k=k)))
        return summary.exact(priors[0], priors[1], eps0=e, delta0=delta0, delta=delta, budget=budget)

    def cor7(e: float) -> Guarantee:
        g = paper_bounds.corollary7(k=k, eps0=e, delta0=delta0)
        return g if g.delta <= delta else replace(g, note=f"its δ exceeds the target δ = {delta:g}")  # type: ignore[operator]

    rows: dict[str, Callable[[float], Guarantee]] = {
        "classic": lambda e: summary.classic(k=k, eps0=e, delta0=delta0, delta=delta, budget=budget),
        "exact": exact, "cor7": cor7}
    for m in paper_bounds.THEOREM3_METHODS:
        rows[f"theorem3_{m}"] = lambda e, m=m: pair(m, e)[0]  # type: ignore[misc]
        rows[f"theorem3_{m}_common"] = lambda e, m=m: common(m, e)  # type: ignore[misc]
    rows["cor6"] = lambda e: paper_bounds.corollary6(k=k, eps0=e, delta0=delta0, method="optimal",
                                                     delta=delta)
    return {key: rows[key] for key in UNIFORM_NONZERO_ROWS}


def row_costs(*, k: int, eps0: float, delta0: float) -> dict[str, Cost]:
    """Estimated work of each row's own search for the uniform-nonzero prior (``SEARCH_EVALUATIONS``
    evaluations at ε0): classic and exact by their routes' counted work, Cor. 7 a closed form,
    HBW Thm 3 min(k, 40) terms, each (optimal composition) an exact optimum of one (ε0, δ0) and
    k − 1 subsampled steps."""
    n = min(k, paper_bounds.TERMS)
    classic = optimal.cost((Level(epsilon=eps0, delta=delta0, count=k),))
    exact = exact_cost(k, ("zero", "uniform-nonzero"), delta0=delta0)
    e_s, d_s = paper_bounds.subsampled(eps0=eps0, delta0=delta0)
    first = Level(epsilon=eps0, delta=delta0, count=1)
    term = optimal.cost((first, Level(epsilon=e_s, delta=d_s, count=k - 1)) if k > 1 else (first,))
    out = {"classic": Cost(SEARCH_EVALUATIONS * classic.seconds, classic.bytes,
                           f"{SEARCH_EVALUATIONS} evaluations of {classic.what}"),
           "exact": Cost(SEARCH_EVALUATIONS * exact.seconds, exact.bytes,
                         f"{SEARCH_EVALUATIONS} evaluations of {exact.what}"),
           "cor7": budgets.ZERO}
    for m in paper_bounds.THEOREM3_METHODS:
        atoms = (term.seconds, term.bytes) if m == "optimal" else (0.0, 0.0)
        for tail, per in (("", TERM_SECONDS[m]), ("_common", COMMON_TERM_SECONDS[m])):
            out[f"theorem3_{m}{tail}"] = Cost(SEARCH_EVALUATIONS * n * (per + atoms[0]), atoms[1],
                                              f"{SEARCH_EVALUATIONS} evaluations of HBW Thm 3's {n} terms")
    # HBW Cor. 6: the same terms as Thm 3 with optimal composition at one common δ̂ (no first step)
    out["cor6"] = Cost(SEARCH_EVALUATIONS * n * (COMMON_TERM_SECONDS["optimal"] + term.seconds), term.bytes,
                       f"{SEARCH_EVALUATIONS} evaluations of HBW Cor. 6's {n} terms")
    return {key: out[key] for key in UNIFORM_NONZERO_ROWS}


def search_cost(*, k: int, prior: str | None, eps0: float, delta0: float) -> Cost:
    """Estimated work of every row's search: only the uniform-nonzero prior has unbudgeted parts
    (HBW Thm 3's terms); the other priors' summaries budget their routes themselves."""
    if prior != "uniform-nonzero":
        return budgets.ZERO
    total = budgets.ZERO
    for c in row_costs(k=k, eps0=eps0, delta0=delta0).values():
        total = Cost(total.seconds + c.seconds, max(total.bytes, c.bytes), "every row's own search")
    return total


def run_cost(*, k: int, epsilon: float, prior: str | None, delta0: float,
             budget: Budget | None = None) -> Cost:
    """Estimated work ``max_eps0`` will do (before it runs): for the uniform-nonzero prior the rows
    ``admitted`` within ``budget`` (from ``row_costs`` at the search's start ε/√k, as ``max_eps0``
    decides); zero for the other questions, whose routes budget themselves (no model of their
    searches here)."""
    if prior != "uniform-nonzero":
        return budgets.ZERO
    costs = row_costs(k=k, eps0=max(epsilon, 1e-9) / math.sqrt(k), delta0=delta0)
    skipped = admitted(costs, budgets.resolve(budget))
    run = [c for key, c in costs.items() if key not in skipped]
    return Cost(sum(c.seconds for c in run), max((c.bytes for c in run), default=0.0),
                f"{len(run)} rows of HBW's bounds")


def admitted(costs: dict[str, Cost], budget: Budget) -> dict[str, str]:
    """Rows searched within ``budget``, cheapest first, each while the work so far fits; the others
    map to the reason they are not (the row alone, or with the cheaper rows, is over the budget)."""
    used, out = 0.0, {}
    for key, c in sorted(costs.items(), key=lambda kc: kc[1].seconds):
        if budget.allows(used + c.seconds, c.bytes):
            used += c.seconds
            continue
        if budget.admits(c):
            c = Cost(used + c.seconds, c.bytes, f"{c.what}, after the cheaper rows")
        out[key] = budget.reason(c)
    return out


def _fits_score(g: Guarantee | None, epsilon: float, delta: float) -> float:
    if g is None or not g.feasible or g.epsilon is None or g.delta is None or g.delta > delta:
        return math.inf
    return g.epsilon - epsilon


def _not_computed(key: str, reason: str, epsilon: float, delta: float) -> Plan:
    return Plan(key=key, name="eps0", value=None, target_epsilon=epsilon, target_delta=delta,
                check=Guarantee.not_computed(source=SOURCE, reason=reason), reason=reason)


def max_eps0(*, k: int, epsilon: float, delta: float, delta0: float = 0.0, prior: str | None = None,
             cap: int | None = None, neighbouring: str = "unbounded",
             budget: Budget | None = None) -> dict[str, Plan]:
    """Per summary row (``classic``, ``exact``, the paper bounds): the largest ε0 that fits.

    Each row is searched on its own bound (its own monotone search). For the uniform-nonzero prior
    each row is evaluated alone and its search estimated first (``row_costs``): rows whose work does
    not fit the budget say why instead of running; the others answer."""
    k = check_count(k, field="k")
    epsilon = check_epsilon(epsilon, field="epsilon")
    delta = check_delta(delta, field="delta")
    delta0 = check_delta(delta0, field="delta0")
    step = step_budget(budget)
    start = max(epsilon, 1e-9) / math.sqrt(k)
    skipped: dict[str, str] = {}
    if prior == "uniform-nonzero":
        rows = _uniform_rows(k=k, delta0=delta0, delta=delta, budget=step)
        skipped = admitted(row_costs(k=k, eps0=start, delta0=delta0), budgets.resolve(budget))
    elif prior is None and cap is not None:  # each row alone: its search evaluates only its own bound
        rows = summary.capped_rows(k=k, cap=cap, neighbouring=neighbouring, delta0=delta0, delta=delta,
                                   budget=step)
    else:
        ask = question(k=k, prior=prior, cap=cap, neighbouring=neighbouring, delta0=delta0, delta=delta,
                       budget=step)
        cache: dict[float, dict[str, Guarantee]] = {}

        def at(e: float) -> dict[str, Guarantee]:
            if e not in cache:
                cache[e] = ask(e)
            return cache[e]

        rows = {key: (lambda e, key=key: at(e).get(key)) for key in at(start)}  # type: ignore[misc]
    out: dict[str, Plan] = {}
    for key, row in rows.items():
        if key in skipped:
            out[key] = _not_computed(key, skipped[key], epsilon, delta)
            continue
        seen: dict[float, Guarantee | None] = {}

        def value(e: float, row: Callable[[float], Guarantee | None] = row,
                  seen: dict[float, Guarantee | None] = seen) -> Guarantee | None:
            if e not in seen:
                seen[e] = row(e)
            return seen[e]

        g = value(start)
        hopeless = g is None or not g.feasible or g.delta is None or g.delta > delta
        if hopeless and _fits_score(value(1e-12 * start), epsilon, delta) > 0:  # monotone: none fits
            lo, hi = None, 1e-12 * start
        else:
            lo, hi = largest(lambda e, value=value: _fits_score(value(e), epsilon, delta),  # type: ignore[misc]
                             start=start, top=EPSILON_MAX, smallest=1e-12 * start, rtol=RTOL)
        if lo is None:
            g = value(start)
            assert g is not None
            out[key] = Plan(key=key, name="eps0", value=None, check=g, target_epsilon=epsilon,
                            target_delta=delta, reason=g.reason if not g.feasible else
                            f"no ε0 > 0 fits (δ = {g.delta:.6g}, ε = {g.epsilon:.6g})")
            continue
        nxt = lo * (1.0 + 1e-9)
        beyond = value(nxt) if nxt <= EPSILON_MAX else None
        g = value(lo)
        assert g is not None
        out[key] = Plan(key=key, name="eps0", value=lo, check=g, target_epsilon=epsilon, target_delta=delta,
                        beyond_value=nxt if beyond is not None else None, beyond=beyond,
                        note="" if math.isfinite(hi) else f"every ε0 up to {EPSILON_MAX:g} fits",
                        extra=(("directions", g.directions),))
    return out
