"""The questions the "Database priors" view asks, as data (no Streamlit): view-layer glue over
the GCE math in ``dpviz.gce``, moved out of it so that ``dpviz/gce/`` is math only.

A :class:`Question` is one GCE setting (a membership constraint or an adversary prior);
``bounds`` answers it with every applicable bound, ``regions`` gives the privacy regions
of the exact answer and of classic composition, ``epsilon_series`` ε against k.

Each takes a ``budget`` (``dpviz.budget``; ``None`` = the CLI default): ``bounds`` and
``regions`` apply it to their exact route, ``epsilon_series`` to the sum of its exact points
(estimated before any is computed; points beyond it are left out of the curve).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.composition import METHODS, homogeneous, optimal
from dpviz.composition.atoms import epsilons
from dpviz.gce import constraints, exact, hypotheses, summary
from dpviz.gce import typed as typed_priors
from dpviz.gce.exact import TooLargeError, exact_pair
from dpviz.gce.typed import (
    ALLOWED_FORM,
    PRIOR_FORM,
    check_allowed_text,
    check_prior_text,
    parse_allowed,
    parse_prior,
    support_distance,
)
from dpviz.guarantee import Guarantee, Kind
from dpviz.params import Param
from dpviz.regions import method_region
from dpviz.regions.boundary import Boundary
from dpviz.validation import ParameterError, check_count

KINDS = ("cap", "features", "uniform-nonzero", "at-least", "typed", "allowed")
PAPER_NULL = "paper"
"""The null hypothesis of a typed prior by default: 0⃗, or U{|b| < K2} against ``at-least:K2``
(the pairs of the ``gce`` command's ``--prior``)."""
DEFAULT_PRIOR = "1:0.5, 2:0.3, 3:0.2"
DEFAULT_ALLOWED = "1100, 0011, 0000"


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    kind: str
    story: str
    cap: int = 1
    k2: int = 1


PRESETS: dict[str, Preset] = {p.key: p for p in (
    Preset("hospitals", "365 hospital nights", "cap",
           "k hospitals each release a statistic about last year's patients. Nobody spends more than 365 "
           "nights in hospital, so a person is in at most 365 of the databases (HBW §V-A, Ex. 1).", cap=365),
    Preset("subsidiaries", "Subsidiaries", "cap",
           "Each of k subsidiaries releases a statistic about its employees; everyone works for exactly one "
           "subsidiary, so a person is in at most one database (HBW §V-A, Ex. 2).", cap=1),
    Preset("features", "Free vs paid features", "features",
           "Usage columns of one app: common features, ad features (free users only) and premium features "
           "(paid users only). A user's record touches one of two column sets, or none (HBW §V-A, Ex. 3)."),
    Preset("nonzero", "In at least one database", "uniform-nonzero",
           "The adversary wants to know whether the target is in *any* of the k databases, with no idea "
           "which ones: 0⃗ against the uniform prior over all b ≠ 0⃗ (HBW §V-B)."),
    Preset("atleast", "In at least k' databases", "at-least",
           "The adversary wants to know whether the target is in at least k' databases (e.g. has seen many "
           "doctors): U{|b| < k'} against U{|b| ≥ k'} (HBW §III-A, Ex. 2).", k2=3),
    Preset("custom", "Custom", "cap", "Choose the constraint or prior and every parameter yourself."),
)}

LABELS: dict[str, str] = {
    "classic": "Classic: compose all k (no prior)",
    "exact": "Exact worst case",
    "cap_basic": "Constraint + basic composition",
    "cap_advanced": "Constraint + advanced composition (DRV)",
    "cap_kov": "Constraint + KOV Thm 3.4",
    "cap_zcdp": "Constraint + zCDP (Steinke Thm 18/22)",
    "cap_kov_simplified": "Constraint + KOV Thm 3.4, simplified",
    "parallel": "Parallel composition (McSherry)",
    "cor6": "HBW Cor. 6 + optimal composition (one common δ̂)",
    "cor7": "HBW Cor. 7 (= Eq. 3-4)",
    "theorem3_basic": "HBW Thm 3 + basic composition (best split of δ)",
    "theorem3_basic_common": "HBW Thm 3 + basic composition, one common δ̂",
    "theorem3_advanced": "HBW Thm 3 + advanced composition (best split of δ)",
    "theorem3_advanced_common": "HBW Thm 3 + advanced composition, one common δ̂",
    "theorem3_optimal": "HBW Thm 3 + optimal composition (best split of δ)",
    "theorem3_optimal_common": "HBW Thm 3 + optimal composition, one common δ̂",
    "refinement": "HBW Alg. 3 refinement + optimal composition",
}


def labels() -> dict[str, str]:
    """The table's row names: ``LABELS`` and one "support" row per composition method (a typed
    prior's d databases that can differ, composed by that method)."""
    return {**LABELS, **{f"support_{key}": f"Support (d databases can differ) + {m.label}"
                         for key, m in METHODS.items()}}


@dataclass(frozen=True)
class Question:
    """One GCE setting with homogeneous (ε0, δ0)-DP mechanisms and a target δ."""

    kind: str
    k: int
    eps0: float
    delta0: float
    delta: float
    cap: int = 1
    neighbouring: str = "unbounded"
    k2: int = 1
    common: int = 4
    free_only: int = 3
    paid_only: int = 5
    prior: str = DEFAULT_PRIOR
    """A typed prior (``typed_priors.parse_prior``): the alternative hypothesis p1."""
    null: str = PAPER_NULL
    """The typed null hypothesis p0 (``paper``: 0⃗, or U{|b| < K2} against ``at-least:K2``)."""
    allowed: str = DEFAULT_ALLOWED
    """A typed allowed set of membership vectors (``typed_priors.parse_allowed``)."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ParameterError("constraint / prior", self.kind, "one of " + ", ".join(KINDS))
        constraints.check_neighbouring(self.neighbouring)

    @property
    def databases(self) -> int:
        if self.kind == "allowed":
            return len(parse_allowed(self.allowed)[0])
        return self.common + self.free_only + self.paid_only if self.kind == "features" else self.k

    def compositions(self) -> int | None:
        """d for constraints (mechanisms that remain), None for priors."""
        if self.kind == "cap":
            return constraints.compositions_for_cap(k=self.k, cap=self.cap,
                                                    neighbouring=self.neighbouring)  # type: ignore[arg-type]
        if self.kind == "features":
            return constraints.feature_compositions(common=self.common, free_only=self.free_only,
                                                    paid_only=self.paid_only,
                                                    neighbouring=self.neighbouring)  # type: ignore[arg-type]
        if self.kind == "allowed":
            return _allowed_compositions(self.allowed, self.neighbouring)
        return None

    def hypotheses(self) -> tuple[hypotheses.Hypothesis, hypotheses.Hypothesis] | None:
        if self.kind == "uniform-nonzero":
            return hypotheses.point_zero(k=self.k), hypotheses.uniform_nonzero(k=self.k)
        if self.kind == "at-least":
            return hypotheses.below(k=self.k, k2=self.k2), hypotheses.at_least(k=self.k, k2=self.k2)
        if self.kind == "typed":
            return typed_pair(self)
        return None


@lru_cache(maxsize=8)
def _allowed_compositions(allowed: str, neighbouring: str) -> int:
    """d of a typed allowed set, remembered: a series asks once per point."""
    return constraints.compositions_for_allowed(parse_allowed(allowed),
                                                neighbouring=neighbouring)  # type: ignore[arg-type]


def typed_pair(q: Question) -> tuple[hypotheses.Hypothesis, hypotheses.Hypothesis]:
    """(p0, p1) of a typed question: both exchangeable, or both explicit (k ≤ 16)."""
    p1 = parse_prior(q.prior, k=q.k, field="prior")
    text = q.null.strip()
    if text == PAPER_NULL:
        family = getattr(p1, "family", "")
        p0: hypotheses.Hypothesis = (hypotheses.below(k=q.k, k2=p1.threshold)  # type: ignore[union-attr]
                                     if family == "at-least" else hypotheses.point_zero(k=q.k))
    else:
        p0 = parse_prior(text, k=q.k, field="null")
    return typed_priors.as_pair(p0, p1)


def _paper_family(p0: hypotheses.Hypothesis, p1: hypotheses.Hypothesis) -> str:
    """The paper's own question when the typed pair is one ("uniform-nonzero", "at-least"), else ""."""
    f0, f1 = getattr(p0, "family", ""), getattr(p1, "family", "")
    if (f0, f1) == ("zero", "uniform-nonzero"):
        return "uniform-nonzero"
    if (f0, f1) == ("below", "at-least") and p0.threshold == p1.threshold:  # type: ignore[union-attr]
        return "at-least"
    return ""


def typed_bounds(q: Question, *, budget: Budget | None = None) -> dict[str, Guarantee]:
    """Every bound for a typed pair of priors: classic composition of all k; composition of the d
    databases in which a b of p0's support and one of p1's can differ (any coupling of the priors:
    each pair of vectors is (ε_d, δ_d)-indistinguishable both ways, and so is the mixture, HBW §V-A);
    the exact worst case (the canonical pair mixed over both priors). The paper's own pairs get
    every row of the paper (HBW Cor. 7, Thm 3; the refinement for small k)."""
    p0, p1 = typed_pair(q)
    common: dict[str, Any] = {"eps0": q.eps0, "delta0": q.delta0, "delta": q.delta, "budget": budget}
    family = _paper_family(p0, p1)
    if family == "uniform-nonzero":
        return summary.uniform_nonzero(k=q.k, **common)
    if family == "at-least":
        return summary.at_least(k=q.k, k2=p1.threshold, **common)  # type: ignore[union-attr]
    out = {"classic": summary.classic(k=q.k, **common)}
    d = support_distance(p0, p1)
    per = constraints.composed_bounds(d=d, context=f"Support of the priors, HBW §V-A ({d:,} of {q.k:,} "
                                      "databases can differ)", **common)
    # exact for the d mechanisms composed, but only an upper bound on this pair of priors' worst case
    support = {f"support_{m}": replace(g, kind=Kind.UPPER) if g.kind is Kind.EXACT else g
               for m, g in per.items()}
    out["exact"] = summary.exact(p0, p1, fallback={**support, **out}, **common)
    return out | support


def bounds(q: Question, *, budget: Budget | None = None) -> dict[str, Guarantee]:
    """Every applicable bound: ε at total δ ≤ q.delta, with kind, source and directions."""
    common: dict[str, Any] = {"eps0": q.eps0, "delta0": q.delta0, "delta": q.delta, "budget": budget}
    if q.kind == "typed":
        return typed_bounds(q, budget=budget)
    if q.kind == "allowed":
        return summary.allowed_set(parse_allowed(q.allowed), neighbouring=q.neighbouring, **common)
    if q.kind == "cap":
        return summary.capped(k=q.k, cap=q.cap, neighbouring=q.neighbouring, **common)
    if q.kind == "features":
        allowed = constraints.feature_columns(common=q.common, free_only=q.free_only, paid_only=q.paid_only)
        return summary.allowed_set(allowed, neighbouring=q.neighbouring, **common)
    if q.kind == "uniform-nonzero":
        return summary.uniform_nonzero(k=q.k, **common)
    check_count(q.k2, field="k'", maximum=q.k)
    return summary.at_least(k=q.k, k2=q.k2, **common)


def regions(q: Question, *, budget: Budget | None = None) -> tuple[dict[str, Boundary], str]:
    """Regions {"optimal": classic k-fold, "exact": the answer}; a note where one is not computed."""
    k = q.databases
    notes = []
    out: dict[str, Boundary] = {}
    for key, levels in (("optimal", homogeneous(k=k, eps0=q.eps0, delta0=q.delta0)),
                        ("exact", _exact_levels(q))):
        if levels is None:
            continue
        if levels == ():  # d = 0: no mechanism can tell, the region of perfect privacy
            out[key] = Boundary(p_fa=np.array([0.0, 1.0]), p_md=np.array([1.0, 0.0]))
            continue
        c, b = optimal.cost(levels), budgets.resolve(budget)
        if not b.admits(c):
            notes.append(f"The {'classic' if key == 'optimal' else 'exact'} region is {b.reason(c)}.")
            continue
        out[key] = method_region("optimal", levels)
    if q.compositions() is None:
        p0, p1 = q.hypotheses()  # type: ignore[misc]
        try:
            pair = exact_pair(p0, p1, eps0=q.eps0, delta0=q.delta0, budget=budget, region=True)
            out["exact"] = pair.region()
        except TooLargeError as exc:
            notes.append(f"The exact region is too large to compute here: {exc.reason}.")
    return out, " ".join(notes)


def _exact_levels(q: Question) -> tuple | None:
    """The d remaining mechanisms of a constraint (``()`` when d = 0); None for priors."""
    d = q.compositions()
    if d is None:
        return None
    return homogeneous(k=d, eps0=q.eps0, delta0=q.delta0) if d > 0 else ()


def classic_and_exact(q: Question, *, budget: Budget | None = None) -> dict[str, Guarantee]:
    """Only the two headline numbers (cheaper than :func:`bounds`)."""
    return {"classic": summary.classic(k=q.databases, eps0=q.eps0, delta0=q.delta0, delta=q.delta,
                                       budget=budget),
            "exact": exact_answer(q, budget=budget)}


def exact_answer(q: Question, *, budget: Budget | None = None) -> Guarantee:
    """The exact worst case of ``q`` (``classic_and_exact``'s "exact")."""
    common: dict[str, Any] = {"eps0": q.eps0, "delta0": q.delta0, "delta": q.delta, "budget": budget}
    d = q.compositions()
    if d is not None:
        return constraints.composed_bound("optimal", d=d, **common)
    p0, p1 = q.hypotheses()  # type: ignore[misc]
    return summary.exact(p0, p1, **common)


@lru_cache(maxsize=128)
def exact_cost(q: Question) -> Cost:
    """Estimated cost of :func:`classic_and_exact` (``dpviz.budget`` units). Remembered: the page's
    notice (:func:`view_cost`) and then :func:`epsilon_series` ask it at the same 24 points, and a
    prior's estimate builds both hypotheses (a question is a frozen dataclass, its own key)."""
    classic = optimal.cost(homogeneous(k=q.databases, eps0=q.eps0, delta0=q.delta0))
    levels = _exact_levels(q)
    if levels is not None:
        return classic + (optimal.cost(levels) if levels else budgets.ZERO)
    p0, p1 = q.hypotheses()  # type: ignore[misc]
    return classic + exact.cost(p0, p1, delta0=q.delta0)


AXIS_EPS0 = "eps0"
"""``series_axis`` of the questions whose k is fixed by what was typed: ε against ε0."""


def series_axis(q: Question) -> str:
    """What the ε plot runs over: "k", or "eps0" where k is fixed by a typed prior or allowed set."""
    return AXIS_EPS0 if q.kind in ("typed", "allowed") else "k"


def _at_k(q: Question, k: int) -> Question:
    """The question with k databases. Feature columns keep their proportions (each count scaled by
    k / q.databases, rounded, at least one column in all)."""
    if q.kind == "features":
        scale = k / q.databases
        counts = [round(c * scale) for c in (q.common, q.free_only, q.paid_only)]
        if sum(counts) == 0:
            counts[max(range(3), key=lambda i: (q.common, q.free_only, q.paid_only)[i])] = 1
        return replace(q, common=counts[0], free_only=counts[1], paid_only=counts[2])
    return replace(q, k=k, cap=min(q.cap, k))


def series_points(q: Question, *, points: int = 24) -> tuple[np.ndarray, list[Question]]:
    """The x values of :func:`epsilon_series` and the question at each."""
    if series_axis(q) == AXIS_EPS0:
        xs = np.geomspace(q.eps0 / 10.0, min(4.0 * q.eps0, 100.0), num=min(points, 16)) if q.eps0 > 0 \
            else np.array([0.0])
        return xs, [replace(q, eps0=float(x)) for x in xs]
    lo = q.k2 if q.kind == "at-least" else 1
    n = points if q.kind != "at-least" else min(points, 12 if q.delta0 == 0 else 8)
    xs = np.unique(np.geomspace(lo, q.databases, num=n).round().astype(int))
    questions = [_at_k(q, int(k)) for k in xs]
    if q.kind == "features":  # the scaled column counts may repeat a total
        xs = np.array([qk.databases for qk in questions])
        xs, first = np.unique(xs, return_index=True)
        questions = [questions[i] for i in first]
    return xs, questions


def view_cost(q: Question, *, table: Budget, series: Budget, region: Budget) -> Cost:
    """Estimated time of the question's exact answers, each route counted where its budget admits
    it (past it, a route is not run and a cheap bound stands in): the table's (:func:`exact_cost`),
    the ε curve's points summed from the smallest as :func:`epsilon_series` sums them, and the
    exact region's (:func:`regions`). ``dpviz.budget`` units, no clock."""
    seconds = 0.0
    c = exact_cost(q)
    if table.admits(c):
        seconds += c.seconds
    spent = 0.0
    for qk in series_points(q)[1]:
        c = exact_cost(qk)
        if not series.allows(spent + c.seconds, c.bytes):
            break
        spent += c.seconds
    seconds += spent
    levels = _exact_levels(q)
    c = optimal.cost(homogeneous(k=q.databases, eps0=q.eps0, delta0=q.delta0))  # the classic region
    if levels is None:
        p0, p1 = q.hypotheses()  # type: ignore[misc]
        c = c + exact.cost(p0, p1, delta0=q.delta0, region=True)
    elif levels:
        c = c + optimal.cost(levels)
    if region.admits(c):
        seconds += c.seconds
    return Cost(seconds, what=f"Computing the exact worst case of {q.databases:,} databases")


def epsilon_series(q: Question, *, points: int = 24,
                   budget: Budget | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """ε at q.delta against k ∈ [1, q.k] (log-spaced; feature columns scaled in proportion), or,
    where k is fixed by what was typed (``series_axis``), against ε0 from q.eps0 / 10 to 4 q.eps0:
    classic and the exact answer. The points' estimated costs are summed from the smallest; points
    past ``budget`` are NaN (not drawn), as are exact points the budget replaced by a bound."""
    xs, questions = series_points(q, points=points)
    b = budgets.resolve(budget)
    spent = 0.0
    # every point's classic answer, searched side by side (the points share δ0 and δ)
    classic = summary.classics([(qk.databases, qk.eps0) for qk in questions], delta0=q.delta0,
                               delta=q.delta, budget=budget)
    series: dict[str, list[float]] = {"classic": [_eps(g, "classic") for g in classic], "exact": []}
    costs = [exact_cost(qk) for qk in questions]
    admitted = []
    for c in costs:
        spent += c.seconds
        admitted.append(b.allows(spent, c.bytes))
    _search_pairs([qk for qk, ok in zip(questions, admitted, strict=True) if ok], budget=budget)
    for qk, c, ok in zip(questions, costs, admitted, strict=True):
        # past the budget, the exact point is not computed (the classic one costs little)
        exact = exact_answer(qk, budget=budget) if ok else Guarantee.not_computed(source="",
                                                                                   reason=b.reason(c))
        series["exact"].append(_eps(exact, "exact"))
    return xs, {key: np.asarray(v) for key, v in series.items()}


def _search_pairs(questions: list[Question], *, budget: Budget | None) -> None:
    """Both directions' ε at δ of the priors' exact pairs, every point's searched side by side
    (``atoms.epsilons``) and remembered by the pairs' atom sets, where ``exact_answer`` then reads
    them one point at a time: the same floats as one search at a time."""
    problems = []
    for qk in questions:
        if qk.compositions() is not None:
            continue
        p0, p1 = qk.hypotheses()  # type: ignore[misc]
        try:
            pair = exact_pair(p0, p1, eps0=qk.eps0, delta0=qk.delta0, budget=budget)
        except TooLargeError:
            continue
        problems += [(pair.forward, qk.delta), (pair.reverse, qk.delta)]
    epsilons(problems)


def _eps(b: Guarantee, key: str = "") -> float:
    """A curve point: NaN without a value, and where a stand-in bound replaced an exact value
    over budget (both curves are exact ones: classic composition and the exact worst case)."""
    if key and b.kind is not Kind.EXACT and b.reason:
        return float("nan")
    return float(b.epsilon) if b.feasible and b.epsilon is not None else float("nan")


# --- The question's typed parameters (the Database priors page and ``python -m dpviz gce``) ---

NEIGHBOURING = Param("neighbouring", "Neighbouring relation", "unbounded",
                     lambda v: constraints.check_neighbouring(str(v)),
                     "Unbounded: add or remove the person's records (compare with 0⃗). Bounded: replace "
                     "them, so two membership vectors are compared and twice as many mechanisms can differ.")


def _null_text(value: Any) -> str:
    text = str(value).strip()
    return PAPER_NULL if text in ("", PAPER_NULL) else check_prior_text(text, field="null")


PRIOR = Param("prior", "prior p1 (weights over |b| or b)", DEFAULT_PRIOR,
              partial(check_prior_text, field="prior"),
              "The membership prior, as `gce --prior` and more: " + PRIOR_FORM + ". Weights are scaled to "
              "sum to 1; an entry without ':w' has weight 1.")
NULL = Param("null", "null hypothesis p0", PAPER_NULL, _null_text,
             "'paper': 0⃗ (in no database), or U{|b| < K2} against at-least:K2; or a prior typed as p1.")
ALLOWED = Param("allowed", "allowed membership vectors b", DEFAULT_ALLOWED, check_allowed_text,
                "The b a person may have (HBW §V-A): " + ALLOWED_FORM + ". k is their length.")
