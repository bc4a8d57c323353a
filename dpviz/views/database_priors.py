"""The database-priors view (HBW generalized composition experiment): table, ε against k, regions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, replace
from functools import partial
from typing import Any

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.figures.gce import (
    bound_columns,
    bound_rows,
    epsilon_vs_eps0_figure,
    epsilon_vs_k_figure,
    prior_region_figure,
)
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
)
from dpviz.params import CAP, COMMON, EPS0, FREE_ONLY, GCE_DELTA0, GCE_K, K2, PAID_ONLY, Param
from dpviz.params import CURVES_DELTA as DELTA
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
    rows = bound_rows(results, names)
    table_csv = bound_columns(results, names)  # full precision, not the rounded display rows
    axis = series_axis(q)
    curve = (epsilon_vs_eps0_figure(ks, series, delta=q.delta, k=q.databases, what=what) if axis == AXIS_EPS0
             else epsilon_vs_k_figure(ks, series, delta=q.delta, what=what))
    payload = {"view": "database_priors", "parameters": asdict(q),
               "bounds": {key: {**b.to_json(), "directions": b.directions, "note": b.note}
                          for key, b in results.items()},
               "epsilon_vs_k": {axis: ks, **series}, "region_note": note}
    return View(
        figures={"epsilon_vs_k": curve, "region": prior_region_figure(region_map, k=q.databases, what=what)},
        csv={"bounds": table_csv,
             "epsilon_vs_k": {axis: ks, **{f"epsilon_{key}": v for key, v in series.items()}}},
        payload=payload, tables={"bounds": rows, "region_note": [{"note": note}] if note else []},
        summary={"question": q, "databases": q.databases, "compositions": q.compositions()})


def build(*, preset: str, kind: str, eps0: float, delta0: float, delta: float, k: int, cap: int | None,
          k2: int | None, neighbouring: str, common: int, free_only: int, paid_only: int,
          prior: str = DEFAULT_PRIOR, null: str = PAPER_NULL, allowed: str = DEFAULT_ALLOWED,
          budget: Budget = budgets.PAGE) -> View:
    """The view for a preset (its constraint kind, cap and k' unless given) or a custom question.
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
    return build_question(q, budget=budget)


SPEC = ViewSpec(name="priors", title="Database priors",
                params=(PRESET, KIND, EPS0, DELTA0, DELTA, K, PRESET_CAP, PRESET_K2, NEIGHBOURING, COMMON,
                        FREE_ONLY, PAID_ONLY, PRIOR, NULL, ALLOWED),
                build=build, aliases=ALIASES)
