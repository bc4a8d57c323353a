"""The mechanisms view: data and figures for ``pages/4_Mechanisms.py`` (no Streamlit).

The page's inputs are ``Param`` specs whose keys are the CLI flags of ``python -m dpviz mechanism``
(and the URL keys): the mechanism's own parameters come from the registry
(``dpviz.mechanisms.registry``), then ``k``, ``sampling_rate``, ``neighbouring`` and the target,
``delta`` (ε at δ) or ``epsilon`` (δ at ε).

- ``quick`` answers with the cheap routes (closed form, pure kε0, Rényi DP, generic optimum): the
  first sound answer, in milliseconds;
- ``build`` adds the PLD grid and privacy buckets, within the page's budget, and the figures: the
  loss histogram, δ(ε) with its certified band, the trade-off region against the generic optimal
  region for the same per-step (ε0, δ0), ε against k, and the routes' table with timings.

Every route answers with a ``dpviz.guarantee.Guarantee``; ``best`` picks the smallest sound upper
bound and the largest certified lower bound, and names the routes that gave them.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, cast

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, OverBudget, cost_of
from dpviz.composition import as_levels, homogeneous, optimal
from dpviz.composition.levels import Level
from dpviz.figures.mechanisms import (
    ROUTE_LABELS,
    delta_band_figure,
    epsilon_vs_k_figure,
    guarantee_rows,
    interval_rows,
    pld_histogram_figure,
)
from dpviz.figures.regions import VACUOUS_AREA, excluded_area, region_figure
from dpviz.figures.style import wrap
from dpviz.figures.tables import format_number
from dpviz.guarantee import Guarantee, Kind, Status
from dpviz.mechanisms import heterogeneous as het
from dpviz.mechanisms import registry, routes
from dpviz.params import SAMPLING_RATE as RATE
from dpviz.params import Param, check_flag, count_param, migrate
from dpviz.pld import discretize
from dpviz.pld.accountant import compose_many
from dpviz.pld.grid import DEFAULT_TAIL
from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS
from dpviz.regions import intersection_boundary, method_region
from dpviz.validation import (
    EPSILON_MAX,
    ParameterError,
    check_delta,
    check_epsilon,
)
from dpviz.views import View, ViewSpec

PAGE_BUCKETS_N = 10_000
"""n for the buckets column on the page (2n + 1 = 20,001 buckets)."""

__all__ = ["ROUTE_LABELS", "SPEC", "best", "build", "make_mechanism", "quick"]

KINDS = {cls.title: key for key, cls in registry.MECHANISMS.items()}
"""Menu title → registry key (the CLI subcommand and the URL value)."""


def _kind(value: object) -> str:
    text = str(value).strip().lower()
    for title, key in KINDS.items():
        if text in (title.lower(), key):
            return key
    raise ParameterError("mechanism", value, "one of " + ", ".join(KINDS.values()))


def _neighbouring(value: object) -> str:
    text = str(value).strip().lower()
    if text not in registry.NEIGHBOURING:
        raise ParameterError("neighbouring", value, " or ".join(registry.NEIGHBOURING))
    return text


def _solve(value: object) -> str:
    text = str(value).strip().lower()
    if text not in SOLVE_OPTIONS:
        raise ParameterError("answer", value, " or ".join(SOLVE_OPTIONS))
    return text


SOLVE_OPTIONS = {"epsilon": "ε at a total δ", "delta": "δ at a total ε"}
"""The two directions (``--delta`` / ``--epsilon`` on the CLI)."""

MECHANISM = Param("mechanism", "Mechanism", "gaussian", _kind, ", ".join(KINDS.values()) + ".")
K = count_param("k (compositions)", 1000, maximum=100_000, what="composed runs")
SAMPLING_RATE = replace(RATE, default=0.01)
NEIGHBOURING = Param("neighbouring", "neighbouring relation", "add-remove", _neighbouring,
                     "add-remove (one record more or less) or replace-one (one record changed), "
                     "Steinke §6.2.")
SOLVE = Param("solve", "answer", "epsilon", _solve, "ε at a total δ, or δ at a total ε.")
DELTA = Param("delta", "target total δ", 1e-5, partial(check_delta, field="delta"),
              "Total δ at which ε is reported, in [0, 1); 0 only for pure mechanisms.")
EPSILON = Param("epsilon", "target total ε", 1.0, partial(check_epsilon, field="epsilon"),
                "Total ε at which δ is reported, in [0, 100].")
COMPARE = Param("compare", "compare with privacy buckets", False, partial(check_flag, field="compare"),
                "Also run privacy buckets (Meiser-Mohammadi) for ε at δ: slower, and at most a lower bound "
                "where squaring has coarsened the buckets.")
HDELTA = Param("het_delta", "target total δ (heterogeneous)", 1e-4,
               partial(check_delta, field="target δ (heterogeneous)", positive=True))

LEGACY_KEYS = {"mech_k": "k", "mech_delta": "delta", "rate": "sampling_rate", "mech_eps0": "eps0"}
"""URL keys of earlier versions of the page → today's (the CLI flags): old shared links still open."""


def legacy_query(query: Mapping[str, str]) -> dict[str, str]:
    """The URL query with earlier keys renamed (a key given both ways keeps today's value), earlier
    values in today's words (``sampling_rate=0`` was no subsampling: 1) and the mechanism named by
    its registry key."""
    out = {k: v for k, v in query.items() if k not in LEGACY_KEYS}
    for old, new in LEGACY_KEYS.items():
        if old in query and new not in query:
            out[new] = query[old]
    if "mechanism" in out:
        with contextlib.suppress(ParameterError):  # the page names the field
            out["mechanism"] = _kind(out["mechanism"])
    return migrate(out)


def mechanism_params(key: str) -> tuple[Param, ...]:
    """The registered mechanism's own parameters (keys = CLI flags)."""
    return registry.mechanism_class(key).params


def make_mechanism(key: str, values: Mapping[str, Any]) -> Any:
    """The mechanism ``key`` with its parameters taken from ``values`` (page or CLI keys),
    subsampled at ``sampling_rate`` (None: not subsampled) under ``neighbouring``."""
    own = {p.key: values[p.key] for p in mechanism_params(key) if p.key in values}
    return registry.make(key, sampling_rate=values.get("sampling_rate"),
                         neighbouring=values.get("neighbouring", "add-remove"), **own)


def k_values(k: int) -> list[int]:
    return sorted({max(1, round(float(v))) for v in np.geomspace(1, k, 5)} | {k})


# --------------------------------------------------------------------------- routes
# The cheap routes answer first; PLD and buckets refine. Each returns a Guarantee.

def _timed(fn: Callable[[], Guarantee | None]) -> Guarantee | None:
    t0 = time.perf_counter()
    g = fn()
    if g is not None and g.seconds is None:
        g = Guarantee(**{**g.__dict__, "seconds": time.perf_counter() - t0})
    return g


QUICK = ("exact", "analytic", "pure", "rdp", "rdp_analytic", "zcdp", "generic")
"""The cheap routes of ``dpviz.mechanisms.routes`` (milliseconds), in table order; the PLD and
privacy buckets refine."""


def quick(mech: Any, *, k: int, delta: float | None = None,
          epsilon: float | None = None) -> dict[str, Guarantee]:
    """The cheap routes' answers (``QUICK``): the page shows them before the PLD refines. The exact
    route is left out where it does not apply (a continuous law, too many atoms)."""
    parts = [(mech, k)]
    out: dict[str, Guarantee] = {}
    for key in QUICK:
        route = getattr(routes, key)
        g = _timed(lambda r=route: r(parts, delta=delta, epsilon=epsilon))  # type: ignore[misc]
        optional = key in ("exact", "pure", "rdp_analytic", "zcdp")
        if g is None or (optional and g.status is Status.NOT_COMPUTED):
            continue  # the route does not apply (a continuous or unbounded law, too many atoms)
        out[key] = g
    return out


def buckets_cost(mech: Any, *, k: int, n: int = PAGE_BUCKETS_N) -> Cost:
    """Estimated cost of the buckets route (``dpviz.budget`` units): the law put into 2n + 1
    buckets, then per direction a chain of k − 1 products (k ≤ 64) or ⌊log2 k⌋ squarings and
    popcount(k) − 1 products, each an FFT of 4n + 2 entries, for three arrays."""
    law = mech.law
    dirs = len(law.both_directions())
    steps = k - 1 if k <= 64 else k.bit_length() - 1 + bin(k).count("1") - 1
    size = 4 * n + 2
    cells = cost_of("bucket_cell", dirs * (2 * n + 1))
    return cells + cost_of("bucket_log", dirs * steps * size * math.log2(size), memory_units=size,
                           what=f"{2 * n + 1:,} buckets, {steps} convolutions per direction")


def _buckets(mech: Any, k: int, delta: float | None, budget: Budget) -> Guarantee | None:
    if delta is None or delta == 0:
        return None  # answers ε at δ > 0
    c = buckets_cost(mech, k=k)
    if not budget.admits(c):
        return Guarantee.not_computed(source="privacy buckets (Meiser-Mohammadi)", delta=delta,
                                      reason=f"buckets {budget.reason(c)}")
    return routes.buckets([(mech, k)], delta=delta, n=PAGE_BUCKETS_N)


BUCKETS_SHARE, PLD_SHARE, CURVE_SHARE = 0.2, 0.5, 0.2
"""Shares of the view's budget: privacy buckets, the PLD (all k on one grid), and the δ(ε) band
with the trade-off region (their δ evaluations); the rest is cheap."""

FIGURE_COARSENING = 4
"""The figures' grid is this many times coarser than the PLD route's: their band is as certified
(only wider) and all k of the ε-against-k plot are composed at once, at a quarter of the cost."""

BAND_POINTS, REGION_POINTS = 120, 240
"""ε grid of the δ(ε) band and of the region's envelope (thinned when over their budget share)."""


def best(results: Mapping[str, Guarantee]) -> dict[str, Any]:
    """The routes' headline (``dpviz.mechanisms.headline``, the rule the CLI uses) as the page's
    summary: upper and lower ends, each with its route, the note and the routes proving impossibility."""
    return routes.headline(dict(results)).summary()


def routes_csv(results: Mapping[str, Guarantee]) -> dict[str, list[Any]]:
    """The routes as CSV columns of full-precision numbers (empty: no value) and their words."""
    gs = list(results.values())
    return {"route": list(results), "lower": [g.lower for g in gs], "upper": [g.upper for g in gs],
            "epsilon": [g.epsilon for g in gs], "delta": [g.delta for g in gs],
            "kind": [g.kind.value for g in gs], "status": [g.status.value for g in gs],
            "source": [g.source for g in gs], "reason": [g.reason or None for g in gs],
            "detail": [g.detail or None for g in gs], "seconds": [g.seconds for g in gs]}


def headline(summary: Mapping[str, Any], *, solve: str, refined: bool) -> str:
    """The page's headline (Markdown): the best sound upper bound and the best certified lower
    bound of the solved quantity, each with its route; before refinement, says it is refining."""
    q = "ε" if solve == "epsilon" else "δ"
    if summary["upper"] is None:
        text = f"No route gives a finite upper bound on {q} here (the table says why)."
    else:
        up, lo = format_number(summary["upper"]), format_number(summary["lower"], down=True)
        text = f"{q} ≤ **{up}** ({ROUTE_LABELS.get(summary['upper_route'])})"
        if summary["lower"] is not None and summary["lower"] >= summary["upper"]:  # exact
            text = f"{q} = **{up}** ({ROUTE_LABELS.get(summary['upper_route'])})"
        elif summary["lower"] is not None and summary["lower_route"] == summary["upper_route"]:
            text = f"{q} ∈ [**{lo}**, **{up}**] ({ROUTE_LABELS.get(summary['upper_route'])})"
        elif summary["lower"] is not None:
            text += (f"; {q} ≥ **{format_number(summary['lower'], down=True)}** "
                     f"({ROUTE_LABELS.get(summary['lower_route'])})")
        text += "."
    if summary.get("note"):
        text += f" Warning: {summary['note']}."
    if not refined:
        text += " First answer from the cheap routes; refining with the PLD grid and privacy buckets…"
    return text


def _delta_points(grids: int, h: float, n: int, budget: Budget) -> int:
    """How many δ(ε) evaluations of ``grids`` composed grids of width h fit ``budget`` (at most n,
    at least 12): each sums the atoms within one unit of loss above ε exactly, ≈ 1/h per grid."""
    per = cost_of("delta_eval", grids) + cost_of("delta_eval_atom", grids / h)
    return int(min(n, max(12, budget.seconds / max(per.seconds, 1e-12))))


def _guarded(source: str, run: Callable[[], Guarantee | None], delta: float | None,
             epsilon: float | None) -> Guarantee | None:
    """A refining route whose numerics fail on this input (an engine error, not the input's) is a
    row that says so: the other routes' sound answers stand, and nothing shows a traceback."""
    try:
        return run()
    except ParameterError:
        raise
    except (ArithmeticError, ValueError, MemoryError) as exc:
        return Guarantee.not_computed(source=source, delta=delta, epsilon=epsilon,
                                      solved="delta" if epsilon is not None else "epsilon",
                                      reason=f"the computation failed here ({type(exc).__name__}: {exc})")


def refine(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
           compare: bool = False, budget: Budget = budgets.PAGE) -> View:
    """Every route's answer (the cheap ones, the PLD unless a route was exact, buckets with
    ``compare``: ε at δ > 0 only, the CLI's ``--compare``): the routes' table, the payload and the
    summary (``best``, the time, the refining routes, the PLD's grid width ``h``); no figures."""
    t0 = time.perf_counter()
    solve = "delta" if epsilon is not None else "epsilon"
    results = quick(mech, k=k, delta=delta, epsilon=epsilon)
    if not any(g.kind is Kind.EXACT for g in results.values()):  # an exact answer needs no grid
        pld = _timed(lambda: _guarded("PLD grid", lambda: routes.pld(
            [(mech, k)], delta=delta, epsilon=epsilon, budget=budget.share(PLD_SHARE)), delta, epsilon))
        if pld is not None:
            results["pld"] = pld
    b = _guarded("privacy buckets", lambda: _buckets(mech, k, delta, budget.share(BUCKETS_SHARE)), delta,
                 epsilon) if solve == "epsilon" and compare else None
    if b is not None:
        results["buckets"] = b
    order = ["pld", *QUICK, "buckets"]
    results = {key: results[key] for key in order if key in results}
    headline = best(results)
    payload = {"view": "mechanisms", "mechanism": mech.key, "k": k, "solve": solve,
               "delta": delta, "epsilon": epsilon,
               "parameters": {"mechanism": mech.key, **mech.values, "k": k,
                              "sampling_rate": getattr(mech, "sampling_rate", None),
                              "neighbouring": getattr(mech, "neighbouring", "add-remove"),
                              "delta": delta, "epsilon": epsilon},
               "best": headline,
               "results": {key: g.to_json() | {"lower": g.lower, "upper": g.upper}
                           for key, g in results.items()}}
    summary = {**headline, "seconds": time.perf_counter() - t0, "h": _grid_width(results.get("pld")),
               "refined": [key for key in ("pld", "buckets") if key in results]}
    return View(figures={}, csv={"routes": routes_csv(results)}, payload=payload, summary=summary,
                tables={"comparison": guarantee_rows(results, solve=solve)})


def figures(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
            h: float = 2e-4, answer: tuple[float | None, float | None] | None = None,
            budget: Budget = budgets.PAGE) -> View:
    """The figures and their CSV columns, on a grid ``FIGURE_COARSENING`` times coarser than the
    PLD route's width ``h`` (``refine``'s summary). ``answer``: the certified (lower, upper) ε that
    the δ(ε) plot marks at the target δ (the routes' table's; default: read off the coarser grid)."""
    law = mech.law
    ks = k_values(k)
    h = FIGURE_COARSENING * h  # figures: a coarser grid, still certified
    try:
        many = compose_many(law, ks, h=h, budget=budget.share(CURVE_SHARE))
    except (OverBudget, ParameterError, ArithmeticError, ValueError, MemoryError):
        many = {}  # the figures then show the other routes and a coarse one-run histogram
    figs = _figures(mech, law, k=k, ks=ks, many=many, composed=many.get(k), h=h, answer=answer,
                    delta=delta if delta is not None else 1e-5, epsilon=epsilon, budget=budget)
    band, k_rows = figs.pop("_band"), figs.pop("_k_rows")
    return View(figures=figs, csv={"delta_vs_epsilon": band, "epsilon_vs_k": k_rows})


def build(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
          compare: bool = False, budget: Budget = budgets.PAGE) -> View:
    """``refine`` and ``figures`` in one view (the headless figure CLI, tests); ``budget`` (default:
    the page's) bounds each route: a route over its share is a row that says why, the δ(ε) grids
    are thinned."""
    r = refine(mech, k=k, delta=delta, epsilon=epsilon, compare=compare, budget=budget)
    f = figures(mech, k=k, delta=delta, epsilon=epsilon, h=r.summary["h"], answer=answer_of(r),
                budget=budget)
    return View(figures=f.figures, csv={**r.csv, **f.csv}, payload=r.payload, summary=r.summary,
                tables=r.tables)


def answer_of(refined: View) -> tuple[float | None, float | None] | None:
    """The best certified (lower, upper) of ``refine``'s routes, for the δ(ε) plot's marker."""
    s = refined.summary
    return None if refined.payload.get("solve") != "epsilon" else (s["lower"], s["upper"])


def _grid_width(pld: Guarantee | None) -> float:
    """The PLD route's grid width (from its detail ``h=…``), 2e-4 when it did not say."""
    for part in ((pld.detail if pld is not None else "") or "").split(","):
        part = part.strip()
        if part.startswith("h="):
            try:
                return float(part[2:].split()[0])
            except ValueError:
                break
    return 2e-4


def _figures(mech: Any, law: Any, *, k: int, ks: list[int], many: Mapping[int, Any], composed: Any, h: float,
             delta: float, epsilon: float | None, budget: Budget,
             answer: tuple[float | None, float | None] | None = None) -> dict[str, Any]:
    """Histogram, δ(ε) band, trade-off region, ε against k; plus the CSV columns of the band and
    of ε against k (keys ``_band``, ``_k_rows``)."""
    lo = up = None
    if answer is not None:
        lo, up = answer
    elif composed is not None and delta > 0:
        lo, up = composed.epsilon(delta)
    top = max(v for v in (up, epsilon, 0.5) if v is not None and math.isfinite(v))
    curve_budget = budget.share(CURVE_SHARE / 3)
    n_band = BAND_POINTS if composed is None else \
        _delta_points(len(composed.upper) + len(composed.lower), composed.h, BAND_POINTS, curve_budget)
    eps = np.linspace(0.0, 2.5 * top, n_band)
    band = np.array([composed.delta(float(e)) for e in eps]) if composed is not None \
        else np.full((eps.size, 2), np.nan)
    levels = None
    if delta > 0:
        step = mech.step_guarantee(delta / (2.0 * k))
        if step.epsilon is not None and math.isfinite(step.epsilon) and step.epsilon <= EPSILON_MAX:
            levels = homogeneous(k=k, eps0=step.epsilon, delta0=float(step.delta or 0.0))
    lines = {} if levels is None else {
        "optimal": np.array([optimal.delta_for_epsilon(levels, epsilon=float(e), budget=budget).delta
                             for e in eps], dtype=float)}
    closed = [mech.closed_form(k, epsilon=float(e)) for e in eps[:1]]
    if closed[0] is not None:
        lines["analytic"] = np.array([mech.closed_form(k, epsilon=float(e)).delta for e in eps], dtype=float)
    lines = {key: np.where(v > 0, v, np.nan) for key, v in lines.items()}

    regions = {} if levels is None else {"optimal": method_region("optimal", levels)}
    left_out = "optimal" in regions and excluded_area(regions["optimal"]) < VACUOUS_AREA
    if left_out:
        del regions["optimal"]  # the whole square says nothing about this mechanism (issue 21)
    if composed is not None:
        n_r = _delta_points(len(composed.upper), composed.h, REGION_POINTS, budget.share(CURVE_SHARE * 2 / 3))
        eps_r = np.linspace(0.0, 2.5 * top, n_r)
        deltas = np.minimum([composed.delta_upper(float(e)) for e in eps_r], 1.0)
        regions["pld"] = intersection_boundary(eps_r, deltas)

    kl, ku, gen, rdp = [], [], [], []
    try:  # ρ of k steps is k·ρ of one (Steinke Lemma 31): one curve for every k
        one_step = routes.rdp_curve([(mech, 1)])
    except NotImplementedError:
        one_step = None
    for kk in ks:
        a, b = many[kk].epsilon(delta) if kk in many else (None, None)
        kl.append(np.nan if a is None else a)
        ku.append(np.nan if b is None else b)
        g = routes.generic([(mech, kk)], delta=delta)
        gen.append(np.nan if g.status is not Status.OK or g.upper is None else g.upper)
        if one_step is not None and bool(np.any(np.isfinite(one_step))) and delta > 0:
            rdp.append(epsilon_from_rdp(DEFAULT_ORDERS, np.asarray(kk * one_step, dtype=np.float64),
                                        delta=delta)[0])
        else:
            rdp.append(np.nan)
    k_lines = {"generic": np.array(gen), "rdp": np.array(rdp)}
    if composed is not None and composed.single is not None:
        single = composed.single
    else:  # a histogram on at most ~4096 cells (a fine one may be what was over budget)
        lo_l, hi_l = law.support(DEFAULT_TAIL)
        single = discretize.pessimistic(law, h=max(h, (hi_l - lo_l) / 4096))
    return {
        "histogram": pld_histogram_figure(single.losses, single.mass, p_inf=single.p_inf,
                                          title=f"Privacy loss of one run: {law.name}"),
        "delta": delta_band_figure(eps, band[:, 0], band[:, 1], lines, k=k,
                                   target_delta=delta if epsilon is None and delta > 0 else None,
                                   answer=(lo, up), of=law.name),
        # wrapped narrower than other titles: in its half-width column a 40-character line ran under the
        # modebar, and "k =" stays with its value
        "region": region_figure(regions, title=f"Trade-off region after k = {k:,}<br>"
                                               + wrap(f"runs of {law.name}", 32),
                                labels={"pld": "This mechanism (PLD, sound)",
                                        "optimal": "Any mechanism with the same per-step (ε0, δ0)"},
                                height=480,  # shown in a half-width column beside the histogram
                                left_out="Generic region not drawn: the worst case for this per-step "
                                         "(ε0, δ0) allows every test" if left_out else None),
        "epsilon_vs_k": epsilon_vs_k_figure(np.array(ks, dtype=float), np.array(kl), np.array(ku), k_lines,
                                            delta=delta, of=law.name),
        "_band": {"epsilon": eps, "delta_lower": band[:, 0], "delta_upper": band[:, 1]},
        "_k_rows": {"k": np.array(ks), "epsilon_lower": np.array(kl), "epsilon_upper": np.array(ku)},
    }


Values = tuple[tuple[str, Any], ...]
"""A mechanism's page values as sorted (key, value) pairs: hashable, so a cache can key on them."""


def as_values(values: Mapping[str, Any]) -> Values:
    return tuple(sorted(values.items()))


def quick_for(kind: str, values: Values, **target: Any) -> dict[str, Guarantee]:
    """``quick`` for the mechanism ``kind`` with ``values`` (``as_values``): cacheable arguments."""
    return quick(make_mechanism(kind, dict(values)), **target)


def refine_for(kind: str, values: Values, **target: Any) -> View:
    """``refine`` with cacheable arguments (``as_values``)."""
    return refine(make_mechanism(kind, dict(values)), **target)


def figures_for(kind: str, values: Values, **target: Any) -> View:
    """``figures`` with cacheable arguments (``as_values``)."""
    return figures(make_mechanism(kind, dict(values)), **target)


# --------------------------------------------------------------------------- the mix editor
MIX_COLUMNS = ("mechanism", "parameters", "count", "sampling rate", "neighbouring")
"""Columns of the page's mix table: one row per mechanism of a heterogeneous run."""

MIX = Param("mix", "mechanism mix (JSON, as `python -m dpviz mechanism mix --spec` reads it)",
            '[{"mechanism":"gaussian","sigma":1.1,"count":1000,"sampling_rate":0.01},'
            '{"mechanism":"laplace","scale":2,"count":10},'
            '{"mechanism":"randomized-response","eps0":0.5,"count":5}]',
            str, "A JSON list of {mechanism, its parameters, count, sampling_rate (optional), neighbouring "
                 "(optional)}: the inline spec of `mechanism mix --spec`.")
MAX_MIX_ROWS = 50
"""Most rows the page's mix table takes (the CLI's limit is larger)."""


def _cell(value: object) -> str:
    return "" if value is None else (json.dumps(value) if not isinstance(value, str) else value)


def _typed(text: str) -> Any:
    """A cell as the JSON value a person means: a number when it reads as one, else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float) and not isinstance(value, bool) else text


def mix_rows(text: str) -> list[dict[str, str]]:
    """The mix spec (JSON, ``MIX``) as editor rows of text cells (``MIX_COLUMNS``); a
    ``ParameterError`` naming ``mix`` when it is not a list of objects with a mechanism."""
    allowed = 'a JSON list of objects such as {"mechanism": "laplace", "scale": 2, "count": 10}'
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ParameterError("mix", text[:60], allowed) from None
    if not isinstance(data, list) or not 1 <= len(data) <= MAX_MIX_ROWS or \
            not all(isinstance(e, dict) for e in data):
        raise ParameterError("mix", text[:60], f"{allowed}, 1 to {MAX_MIX_ROWS} of them")
    rows = []
    for entry in data:
        rest = {k: v for k, v in entry.items()
                if k not in ("mechanism", "count", "sampling_rate", "neighbouring")}
        rows.append({"mechanism": _cell(entry.get("mechanism")),
                     "parameters": "; ".join(f"{k}={_cell(v)}" for k, v in rest.items()),
                     "count": _cell(entry.get("count")), "sampling rate": _cell(entry.get("sampling_rate")),
                     "neighbouring": _cell(entry.get("neighbouring"))})
    return rows


def mix_entries(rows: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """Editor rows as the JSON entries of a mix spec (empty rows skipped; the parameters cell
    ``key=value; key=value``); a ``ParameterError`` naming the row and column of a malformed cell."""
    entries = []
    for i, row in enumerate(rows):
        cells = {c: str(row.get(c) or "").strip() for c in MIX_COLUMNS}
        if not any(cells.values()):
            continue
        entry: dict[str, Any] = {"mechanism": cells["mechanism"]}
        for item in filter(None, (s.strip() for s in cells["parameters"].split(";"))):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ParameterError(f"mix[{i}].parameters", item, "key=value pairs separated by ;")
            entry[key.strip()] = _typed(value.strip())
        entry["count"] = _typed(cells["count"]) if cells["count"] else None
        if cells["sampling rate"]:
            entry["sampling_rate"] = _typed(cells["sampling rate"])
        if cells["neighbouring"]:
            entry["neighbouring"] = cells["neighbouring"]
        entries.append(entry)
    return entries


def mix_spec(rows: Sequence[Mapping[str, str]]) -> str:
    """Editor rows as the compact JSON spec (the URL value and the CLI's ``--spec``)."""
    return json.dumps(mix_entries(rows), ensure_ascii=False, separators=(",", ":"))


def mix_parts(entries: Sequence[Mapping[str, Any]]) -> list[tuple[Any, int]]:
    """(mechanism, count) for each entry, by the parser ``python -m dpviz mechanism mix --spec``
    uses (``registry.parts``): a ``ParameterError`` names the entry and the field, e.g. ``mix[1].scale``."""
    return registry.parts([dict(e) for e in entries], field="mix")


def mix_view(spec: str, *, delta: float | None = None, epsilon: float | None = None,
             budget: Budget = budgets.PAGE) -> View:
    """Every route for the mix ``spec`` (``MIX``): the table and the best bounds, as the CLI's
    ``mechanism mix`` computes them."""
    parts = mix_parts(mix_entries(mix_rows(spec)))
    results = routes.routes(parts, delta=delta, epsilon=epsilon, budget=budget, compare=True)
    solve = "delta" if epsilon is not None else "epsilon"
    rows = guarantee_rows(results, solve=solve)
    summary = best(results)
    payload = {"view": "mechanisms mix", "spec": json.loads(spec), "solve": solve, "delta": delta,
               "epsilon": epsilon, "best": summary,
               "results": {key: g.to_json() | {"lower": g.lower, "upper": g.upper}
                           for key, g in results.items()}}
    return View(figures={}, payload=payload, summary=summary, tables={"mix": rows},
                csv={"mix": routes_csv(results)})


def heterogeneous(rows: list[dict[str, Any]], *, delta: float,
                  budget: Budget = budgets.PAGE) -> list[dict[str, str]]:
    """Table for the (ε_i, δ_i, count) editor: exact (few levels), PLD, KOV Thm 3.5, each within
    ``budget`` (default: the page's)."""
    levels = []
    for i, row in enumerate(rows, start=1):
        if all(row.get(c) in (None, "") for c in ("ε", "δ", "count")):
            continue
        try:
            levels.append(Level(epsilon=cast(float, row.get("ε")), delta=cast(float, row.get("δ")),
                                count=cast(int, row.get("count"))))  # Level checks each value
        except ParameterError as exc:
            raise ParameterError(f"{exc.field} (row {i})", exc.value, exc.allowed) from None
    return interval_rows(het.compare(as_levels(levels), delta=delta, budget=budget))


def build_view(*, mechanism: str, k: int, sampling_rate: float | None, neighbouring: str = "add-remove",
               solve: str = "epsilon", delta: float = 1e-5, epsilon: float = 1.0, compare: bool = False,
               budget: Budget = budgets.PAGE, **own: Any) -> View:
    """``ViewSpec`` entry point (headless ``python -m dpviz figure mechanisms``); ``own`` holds the
    mechanism's parameters (absent ones take the registry's defaults)."""
    mech = make_mechanism(mechanism, {**own, "sampling_rate": sampling_rate, "neighbouring": neighbouring})
    if solve == "delta":
        return build(mech, k=k, epsilon=epsilon, budget=budget)
    return build(mech, k=k, delta=delta, compare=compare, budget=budget)


def _own_params() -> tuple[Param, ...]:
    """Every registered mechanism's parameters, each key once (the first spec of a key wins)."""
    seen: dict[str, Param] = {}
    for cls in registry.MECHANISMS.values():
        for p in cls.params:
            seen.setdefault(p.key, p)
    return tuple(seen.values())


SPEC = ViewSpec(name="mechanisms", title="Mechanisms", aliases=LEGACY_KEYS,
                params=(MECHANISM, *_own_params(), K, SAMPLING_RATE, NEIGHBOURING, SOLVE, DELTA, EPSILON,
                        COMPARE),
                build=build_view)
"""For ``dpviz.views.catalog.registry``."""
