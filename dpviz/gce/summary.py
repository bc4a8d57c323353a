"""Every applicable bound for one GCE question, side by side (used by the CLI and the page).

Keys: ``classic`` (optimal composition of all k, no prior: KOV Thm 3.3), ``exact`` (the
exact worst case for the question), then the paper's bounds that apply (for the uniform prior:
``cor7``, ``theorem3_<method>`` with the best split of δ over Thm 3's terms and
``theorem3_<method>_common`` with one common δ̂ for every term). Values are
:class:`~dpviz.guarantee.Guarantee` (ε at total δ ≤ the target, with directions).

``budget`` (``dpviz.budget``; ``None`` = the CLI default) bounds the exact routes: beyond it
the ``exact`` row shows the best bound proved in both directions, as the upper bound it is,
with its own source and the reason the exact value was not computed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import METHODS, homogeneous
from dpviz.gce import constraints, hypotheses, paper_bounds
from dpviz.gce.exact import SOURCE as SOURCE_EXACT
from dpviz.gce.exact import TooLargeError, exact_pair
from dpviz.gce.exact import family_cost as exact_cost
from dpviz.gce.hypotheses import Hypothesis
from dpviz.gce.refinement import refinement_bound
from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import check_count, check_delta, check_epsilon

SOURCE_CLASSIC = "Classic composition, no prior (KOV Thm 3.3, exact)"


def _inputs(k: object, eps0: object, delta0: object, delta: object) -> tuple[int, float, float, float]:
    return (check_count(k, field="k"), check_epsilon(eps0, field="eps0"),
            check_delta(delta0, field="delta0"), check_delta(delta, field="delta"))


def classic(*, k: int, eps0: float, delta0: float, delta: float, budget: Budget | None = None) -> Guarantee:
    """Compose all k mechanisms: the answer without any knowledge about the databases."""
    return classics([(k, eps0)], delta0=delta0, delta=delta, budget=budget)[0]


def classics(points: Sequence[tuple[int, float]], *, delta0: float, delta: float,
             budget: Budget | None = None) -> list[Guarantee]:
    """:func:`classic` at each (k, ε0) of ``points`` (an ε-against-k series): the optimum's searches
    side by side (``optimal.epsilons_for_delta``), the same numbers as one at a time."""
    many = [homogeneous(k=k, eps0=eps0, delta0=delta0) for k, eps0 in points]
    return [replace(g, source=SOURCE_CLASSIC if g.kind is Kind.EXACT or not g.feasible
                    else f"Classic composition: {g.source}")
            for g in METHODS["optimal"].epsilons_for_delta(many, delta=delta, budget=budget)]


def exact(p0: Hypothesis, p1: Hypothesis, *, eps0: float, delta0: float, delta: float,
          fallback: dict[str, Guarantee] | None = None, budget: Budget | None = None) -> Guarantee:
    """Exact two-sided ε at δ for (p0, p1). Over ``budget`` (or too large): the best bound of
    ``fallback`` proved in both directions, kind "upper", with the reason."""
    try:
        pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0, budget=budget)
    except TooLargeError as exc:
        return _too_large(exc, fallback or {}, delta)
    eps = pair.epsilon(delta)
    if eps is None:
        return Guarantee.impossible(
            source=SOURCE_EXACT, reason=f"no ε reaches δ below the infinite-loss mass {pair.delta_floor:.6g}")
    if pair.dropped == 0:
        return Guarantee(epsilon=eps, delta=pair.delta(eps), kind=Kind.EXACT, source=SOURCE_EXACT)
    # classes beyond the window of δ-outcomes left out: eps counts their mass at infinite loss
    # (an upper bound), the curves without it bound the truth from below (docs/MATH.md §12)
    low = pair.epsilon_lower(delta)
    detail = (f"count classes with δ-outcome counts outside the window left out: mass ≤ {pair.dropped:.2g}, "
              "counted at infinite loss")
    if low is not None and low >= eps:
        return Guarantee(epsilon=eps, delta=pair.delta(eps), kind=Kind.EXACT, source=SOURCE_EXACT,
                         detail=detail)
    return Guarantee(epsilon=eps, delta=pair.delta(eps), kind=Kind.UPPER, source=SOURCE_EXACT,
                     lower=low if low is not None else 0.0, upper=eps, detail=detail,
                     note=f"exact to within [{low if low is not None else 0.0:.6g}, {eps:.6g}]")


def _too_large(exc: TooLargeError, fallback: dict[str, Guarantee], delta: float) -> Guarantee:
    """The exact row when the exact method is not run: the smallest ε among the bounds that hold
    in both directions at total δ ≤ the target, as an upper bound, and why."""
    usable = [b for b in fallback.values()
              if b.feasible and b.directions == "both" and b.delta is not None and b.delta <= delta]
    best = min(usable, key=lambda b: b.epsilon, default=None)  # type: ignore[arg-type, return-value]
    text = f"exact worst case {exc.reason}"
    if best is None:
        return Guarantee.not_computed(source=SOURCE_EXACT,
                                      reason=text + "; no bound applies at this δ either")
    reason = text + "; shown: the best bound that applies"
    return Guarantee(epsilon=best.epsilon, delta=best.delta, kind=Kind.UPPER, source=best.source,
                     reason=reason, directions="both", note=reason)


def uniform_nonzero(*, k: int, eps0: float, delta0: float, delta: float,
                    budget: Budget | None = None) -> dict[str, Guarantee]:
    """0⃗ against U(B∖{0⃗}) ("in at least one database", HBW §V-B)."""
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    out = {"classic": classic(k=k, eps0=eps0, delta0=delta0, delta=delta, budget=budget)}
    paper = {"cor7": paper_bounds.corollary7(k=k, eps0=eps0, delta0=delta0)}
    paper_bounds.search_terms(k=k, eps0=eps0, delta0=delta0, delta=delta)  # Thm 3's and Cor. 6's, together
    for method in paper_bounds.THEOREM3_METHODS:  # the best split of δ, and one common δ̂ (docs/MATH.md §12)
        best, common = paper_bounds.theorem3_pair(k=k, eps0=eps0, delta0=delta0, method=method, delta=delta)
        paper[f"theorem3_{method}"], paper[f"theorem3_{method}_common"] = best, common
    paper["cor6"] = paper_bounds.corollary6(k=k, eps0=eps0, delta0=delta0, method="optimal", delta=delta)
    if paper["cor7"].delta is not None and paper["cor7"].delta > delta:
        paper["cor7"] = replace(paper["cor7"], note=f"its δ exceeds the target δ = {delta:g}")
    fallback = {key: b for key, b in paper.items() if key != "cor7" or b.delta <= delta}  # type: ignore[operator]
    fallback |= {"classic": out["classic"]}
    out["exact"] = _over_budget(k, ("zero", "uniform-nonzero"), delta0, delta, fallback, budget) or \
        exact(hypotheses.point_zero(k=k), hypotheses.uniform_nonzero(k=k), eps0=eps0, delta0=delta0,
              delta=delta, fallback=fallback, budget=budget)
    return out | paper


def _over_budget(k: int, families: tuple[str, str], delta0: float, delta: float,
                 fallback: dict[str, Guarantee], budget: Budget | None) -> Guarantee | None:
    """The exact row's stand-in when the estimate is over budget, before the priors are built
    (at k = 10^7 they alone take hundreds of MB); None when the exact route may run."""
    c, b = exact_cost(k, families, delta0=delta0), budgets.resolve(budget)
    return None if b.admits(c) else _too_large(TooLargeError(c, b, 0.0), fallback, delta)


def at_least(*, k: int, k2: int, eps0: float, delta0: float, delta: float,
             budget: Budget | None = None) -> dict[str, Guarantee]:
    """U{|b| < k'} against U{|b| ≥ k'} (HBW §III-A Example 2)."""
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    k2 = check_count(k2, field="k2", minimum=1, maximum=k)
    out = {"classic": classic(k=k, eps0=eps0, delta0=delta0, delta=delta, budget=budget)}
    if k <= 12:
        out["refinement"] = refinement_bound(hypotheses.below(k=k, k2=k2), hypotheses.at_least(k=k, k2=k2),
                                             eps0=eps0, delta0=delta0, delta=delta)
    out["exact"] = _over_budget(k, ("below", "at-least"), delta0, delta, dict(out), budget) or \
        exact(hypotheses.below(k=k, k2=k2), hypotheses.at_least(k=k, k2=k2), eps0=eps0, delta0=delta0,
              delta=delta, fallback=dict(out), budget=budget)
    return out


def capped(*, k: int, cap: int, neighbouring: str, eps0: float, delta0: float,
           delta: float, budget: Budget | None = None) -> dict[str, Guarantee]:
    """At most ``cap`` databases per person (HBW §V-A Ex. 1-2); exact = optimal of d."""
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    return {key: row(eps0) for key, row in capped_rows(k=k, cap=cap, neighbouring=neighbouring, delta0=delta0,
                                                       delta=delta, budget=budget).items()}


def capped_rows(*, k: int, cap: int, neighbouring: str, delta0: float, delta: float,
                budget: Budget | None = None) -> dict[str, Callable[[float], Guarantee]]:
    """Each row of :func:`capped` as its own function of ε0, inputs checked once: the planner
    searches each row's largest ε0 on that row alone (``dpviz.planner.gce``)."""
    k, _, delta0, delta = _inputs(k, 0.0, delta0, delta)
    d = constraints.compositions_for_cap(k=k, cap=cap, neighbouring=neighbouring)  # type: ignore[arg-type]
    return _constrained_rows(d=d, k=k, delta0=delta0, delta=delta, budget=budget)


def allowed_set(allowed: Sequence[Sequence[int]], *, neighbouring: str, eps0: float, delta0: float,
                delta: float, budget: Budget | None = None) -> dict[str, Guarantee]:
    """An allowed set of membership vectors (HBW §V-A Ex. 3)."""
    k = len(allowed[0]) if allowed else 0
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    d = constraints.compositions_for_allowed(allowed, neighbouring=neighbouring)  # type: ignore[arg-type]
    return _constrained(d=d, k=k, eps0=eps0, delta0=delta0, delta=delta, budget=budget)


def _constrained(*, d: int, k: int, eps0: float, delta0: float, delta: float,
                 budget: Budget | None = None) -> dict[str, Guarantee]:
    return {key: row(eps0) for key, row in _constrained_rows(d=d, k=k, delta0=delta0, delta=delta,
                                                             budget=budget).items()}


CAP_METHODS = {"exact": "optimal", "cap_basic": "basic", "cap_advanced": "advanced", "cap_kov": "kov",
               "cap_zcdp": "zcdp"}
"""The rows of a constraint that compose the d mechanisms left (HBW Thm 2), and the method of each."""


def _constrained_rows(*, d: int, k: int, delta0: float, delta: float,
                      budget: Budget | None = None) -> dict[str, Callable[[float], Guarantee]]:
    """A constraint's rows as functions of ε0: classic (all k), the d mechanisms left composed by
    each method of ``CAP_METHODS`` (exact = optimal), parallel composition (d·ε0)."""
    def left(method: str) -> Callable[[float], Guarantee]:
        return lambda e: constraints.composed_bound(method, d=d, eps0=e, delta0=delta0, delta=delta,
                                                    budget=budget)

    rows: dict[str, Callable[[float], Guarantee]] = {
        "classic": lambda e: classic(k=k, eps0=e, delta0=delta0, delta=delta, budget=budget)}
    rows |= {key: left(method) for key, method in CAP_METHODS.items()}
    rows["parallel"] = lambda e: constraints.parallel_composition(d=d, eps0=e, delta0=delta0)
    return rows


