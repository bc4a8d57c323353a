"""The database-priors view (HBW generalized composition experiment): table, ε against k, regions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, replace
from functools import partial
from typing import Any

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.composition import Levels, homogeneous, optimal
from dpviz.figures.gce import (
    bound_table,
    epsilon_vs_eps0_figure,
    epsilon_vs_k_figure,
    prior_region_figure,
)
from dpviz.figures.tables import table_csv, table_rows
from dpviz.gce import constraints, heterogeneous
from dpviz.gce.questions import (
    ALLOWED,
    AXIS_EPS0,
    DEFAULT_ALLOWED,
    DEFAULT_PRIOR,
    KINDS,
    NEIGHBOURING,
    NULL,
    PAPER_NULL,
    PRESETS,
    PRIOR,
    Question,
    bounds,
    epsilon_series,
    labels,
    regions,
    series_axis,
    view_cost,
)
from dpviz.guarantee import Guarantee
from dpviz.params import CAP, COMMON, EPS0, FREE_ONLY, GCE_DELTA0, GCE_K, HETERO_LEVELS, K2, PAID_ONLY, Param
from dpviz.params import CURVES_DELTA as DELTA
from dpviz.results import results_json
from dpviz.validation import ParameterError
from dpviz.views import View, ViewSpec

KIND_LABELS = {"cap": "at most C databases per person", "features": "free vs paid feature columns",
               "uniform-nonzero": "in at least one database (uniform prior)",
               "at-least": "in at least k' databases",
               "typed": "a prior you type (weights over |b| or over b)",
               "allowed": "an allowed set of b you type"}
"""The page's names of the constraint kinds (what a shared URL's ``kind=`` holds)."""
PRESET_TITLES = {p.key: p.title for p in PRESETS.values()}
"""The page's names of the scenarios (what a shared URL's ``preset=`` holds)."""


def _choice(value: Any, *, field: str, names: Mapping[str, str]) -> str:
    """A key of ``names``, given as the key (CLI) or as its name on the page (URL)."""
    text = str(value)
    for key, name in names.items():
        if text in (key, name):
            return key
    raise ParameterError(field, value, "one of " + ", ".join(names))


PRESET = Param("preset", "Scenario", "hospitals", partial(_choice, field="preset", names=PRESET_TITLES),
               "A scenario of HBW §V: " + ", ".join(PRESET_TITLES) + " (or its title on the page).")
KIND = Param("kind", "Constraint or prior", "cap", partial(_choice, field="kind", names=KIND_LABELS),
             "Custom scenario only: " + ", ".join(KINDS) + ".")
DELTA0, K = GCE_DELTA0, GCE_K


ALIASES = {"nb": "neighbouring"}
"""Old URL keys of the page, still read (links shared before the keys became the CLI's flags)."""


def url_query(query: Mapping[str, str]) -> dict[str, str]:
    """The URL query with a choice given by its short name (the CLI's value, ``kind=typed``,
    ``preset=hospitals``) written as the name the page's menu shows, which its radio reads."""
    names = {KIND.key: KIND_LABELS, PRESET.key: PRESET_TITLES}
    return {k: names[k].get(v, v) if k in names else v for k, v in query.items()}


def _or_preset(value: Any, *, check: Any) -> int | None:
    """``preset`` (the default) means: the scenario's own value."""
    return None if str(value) == "preset" else check(value)


PRESET_CAP = replace(CAP, default="preset", check=partial(_or_preset, check=CAP.check),
                     help="C ≥ 1; default: the scenario's own cap")
PRESET_K2 = replace(K2, default="preset", check=partial(_or_preset, check=K2.check),
                    help="1 ≤ k' ≤ k; default: the scenario's own k'")


LEVELS = replace(HETERO_LEVELS, default="0.1:1e-6:1000,0.5:0:10",
                 help="Each database's release, as compose --levels: ε:δ:count rows, e.g. 1,000 releases "
                      "that are (0.1, 1e-6)-DP and 10 that are 0.5-DP.")
"""The heterogeneous releases under the page's cap (URL key ``levels``, as ``gce --levels``)."""


def heterogeneous_rows(levels: Levels, *, cap: int, neighbouring: str, delta: float,
                       budget: Budget = budgets.PAGE) -> list[dict[str, str]]:
    """The cap with a different (ε_i, δ_i) per database (HBW Thm 2, Ex. 1): the table's rows."""
    results = heterogeneous.capped(levels, cap=cap, neighbouring=neighbouring,  # type: ignore[arg-type]
                                   delta=delta, budget=budget)
    return table_rows(results, bound_table(labels()))


def describe(q: Question) -> str:
    """A short phrase for titles: which constraint or prior is applied."""
    if q.kind == "typed":
        if q.null != PAPER_NULL:
            null = f"p0 = {_short(q.null)}"
        else:
            null = "U{|b| < K2}" if q.prior.strip().lower().startswith("at-least") else "0⃗"
        return f"{null} vs p1 = {_short(q.prior)}"
    if q.kind == "allowed":
        return f"allowed b ∈ {{{_short(q.allowed)}}} ({q.neighbouring})"
    return {"cap": f"at most {q.cap} database(s) per person ({q.neighbouring})",
            "features": f"free vs paid columns ({q.neighbouring})",
            "uniform-nonzero": "0⃗ vs uniform over b ≠ 0⃗",
            "at-least": f"|b| < {q.k2} vs |b| ≥ {q.k2}"}[q.kind]


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def with_default(p: Param, default: object) -> Param:
    return replace(p, default=default)


def ex3_comparison(q: Question, *, budget: Budget | None = None) -> dict[str, Any]:
    """HBW Ex. 3 as printed against Def. 3 for feature columns: each pair's count of differing
    columns, the mechanisms each composes and their exact ε (KOV Thm 3.3), and a sentence saying so
    (docs/MATH.md §20)."""
    cols = {"common": q.common, "free_only": q.free_only, "paid_only": q.paid_only}
    nb = q.neighbouring
    sizes = constraints.feature_pair_sizes(**cols)
    paper = constraints.paper_feature_compositions(**cols, neighbouring=nb)  # type: ignore[arg-type]
    ours = constraints.feature_compositions(**cols, neighbouring=nb)  # type: ignore[arg-type]

    def eps(d: int) -> Guarantee:
        return optimal.epsilon_for_delta(homogeneous(k=d, eps0=q.eps0, delta0=q.delta0), delta=q.delta,
                                         budget=budget)

    def pairs(names: tuple[str, ...]) -> str:
        return ", ".join(f"{name} ({sizes[name]:,})" for name in names)

    paper_eps, our_eps = eps(paper), eps(ours)
    printed = q.free_only + q.paid_only + 1  # M_{k1}, …, M_{k3}: one index more than the a + p columns
    text = (f"**HBW Ex. 3 as printed** composes max over its pairs {pairs(constraints.PAPER_EX3_PAIRS[nb])} "
            f"= **{paper:,}** mechanisms (ε = {_eps_text(paper_eps)}); this page follows Def. 3, "
            f"which with {nb} neighbours needs the pairs {pairs(constraints.DEF3_EX3_PAIRS[nb])}: "
            f"**{ours:,}** mechanisms (ε = {_eps_text(our_eps)}, the table's exact row).")
    if nb == "unbounded":
        verdict = ("so here its count is too small" if paper < ours else
                   "so here it composes more than Def. 3 needs" if paper > ours else
                   "which here happens to give the same count")
        text += (" Unbounded DP compares 0⃗ with each allowed b: the paper's pair c¹ vs c² is a bounded "
                 f"pair, and it leaves out c² vs 0⃗, {verdict}. Its first term, written M_k1, …, M_k3, "
                 f"spans {printed:,} indices, one more than the columns where c¹ and c² differ.")
    return {"paper_compositions": paper, "compositions": ours, "pair_sizes": sizes,
            "paper_epsilon": paper_eps.epsilon, "epsilon": our_eps.epsilon, "note": text}


def _eps_text(g: Guarantee) -> str:
    return f"{g.epsilon:.4g}" if g.feasible and g.epsilon is not None else g.status.value


def build_question(q: Question, *, tag: str = "gce", budget: Budget = budgets.PAGE) -> View:
    """Every bound for the question, ε against k (classic vs exact) and the two regions.

    ``budget`` (default: the page's) is shared: half for the table's exact route, a quarter for
    the ε-against-k points, a quarter for the exact region; beyond it each says what it shows.
    """
    results = bounds(q, budget=budget.share(0.5))
    ks, series = epsilon_series(q, budget=budget.share(0.25))
    region_map, note = regions(q, budget=budget.share(0.25))
    what = describe(q)
    names = labels()
    columns = bound_table(names)  # the CSV at full precision, the display rounded
    axis = series_axis(q)
    curve = (epsilon_vs_eps0_figure(ks, series, delta=q.delta, k=q.databases, what=what) if axis == AXIS_EPS0
             else epsilon_vs_k_figure(ks, series, delta=q.delta, what=what))
    payload = {"view": "database_priors", "parameters": asdict(q),
               "bounds": results_json(results),
               "epsilon_vs_k": {axis: ks, **series}, "region_note": note}
    ex3 = ex3_comparison(q, budget=budget.share(0.25)) if q.kind == "features" else None
    if ex3 is not None:
        payload["hbw_ex3"] = ex3
    return View(
        figures={"epsilon_vs_k": curve, "region": prior_region_figure(region_map, k=q.databases, what=what)},
        csv={"bounds": table_csv(results, columns),
             "epsilon_vs_k": {axis: ks, **{f"epsilon_{key}": v for key, v in series.items()}}},
        payload=payload, tables={"bounds": table_rows(results, columns),
                                 "region_note": [{"note": note}] if note else [],
                                 "paper_note": [{"note": ex3["note"]}] if ex3 else []},
        summary={"question": q, "databases": q.databases, "compositions": q.compositions()})


def build(*, preset: str, kind: str, eps0: float, delta0: float, delta: float, k: int, cap: int | None,
          k2: int | None, neighbouring: str, common: int, free_only: int, paid_only: int,
          prior: str = DEFAULT_PRIOR, null: str = PAPER_NULL, allowed: str = DEFAULT_ALLOWED,
          budget: Budget = budgets.PAGE) -> View:
    """The view of ``question`` with these arguments."""
    q = question(preset=preset, kind=kind, eps0=eps0, delta0=delta0, delta=delta, k=k, cap=cap, k2=k2,
                 neighbouring=neighbouring, common=common, free_only=free_only, paid_only=paid_only,
                 prior=prior, null=null, allowed=allowed)
    return build_question(q, budget=budget)


def build_cost(*, budget: Budget = budgets.PAGE, **values: Any) -> Cost:
    """Estimated time of ``build`` with the same arguments (``questions.view_cost``, with the
    shares of the budget ``build_question`` gives), for the page's notice; zero for a question the
    view refuses (it says why)."""
    try:
        q = question(**values)
        return view_cost(q, table=budget.share(0.5), series=budget.share(0.25), region=budget.share(0.25))
    except ParameterError:
        return budgets.ZERO


def question(*, preset: str, kind: str, eps0: float, delta0: float, delta: float, k: int, cap: int | None,
             k2: int | None, neighbouring: str, common: int, free_only: int, paid_only: int,
             prior: str = DEFAULT_PRIOR, null: str = PAPER_NULL, allowed: str = DEFAULT_ALLOWED) -> Question:
    """The question of a preset (its constraint kind, cap and k' unless given) or a custom one.
    With feature columns, k is their number (``common + free_only + paid_only``); with a typed
    allowed set, the vectors' length."""
    p = PRESETS[preset]
    kind = kind if preset == "custom" else p.kind
    if kind == "features":
        k = common + free_only + paid_only
    q = Question(kind=kind, k=k, eps0=eps0, delta0=delta0, delta=delta,
                 cap=p.cap if cap is None else cap, neighbouring=neighbouring, k2=p.k2 if k2 is None else k2,
                 common=common, free_only=free_only, paid_only=paid_only, prior=prior, null=null,
                 allowed=allowed)
    if kind == "allowed":
        q = replace(q, k=q.databases)
    return q


SPEC = ViewSpec(name="priors", title="Database priors",
                params=(PRESET, KIND, EPS0, DELTA0, DELTA, K, PRESET_CAP, PRESET_K2, NEIGHBOURING, COMMON,
                        FREE_ONLY, PAID_ONLY, PRIOR, NULL, ALLOWED),
                build=build, aliases=ALIASES)
