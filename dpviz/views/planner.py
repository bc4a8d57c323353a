"""The "Plan a budget" view (issue 9): the inverse questions as tables and a utility plot.

Given a total (ε, δ): each method's largest per-release ε0 for k releases and its largest k for a
per-release ε0 (``dpviz.planner.composition``); the smallest noise of each mechanism for k
releases (``dpviz.planner.noise``); the noise each query may carry against k, one curve per method
(Steinke seed 001 Remark 15). Allowances (ε0, k) are displayed rounded down and noise rounded up,
so a displayed value still fits.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.composition import METHODS
from dpviz.composition.curves import k_grid
from dpviz.figures.planner import noise_vs_k_figure
from dpviz.figures.style import STYLES
from dpviz.figures.tables import (
    NO_VALUE,
    Column,
    format_number,
    key_column,
    kind_column,
    kind_word,
    label_column,
    number,
    raw_column,
    table_csv,
    table_rows,
)
from dpviz.guarantee import Guarantee, Status
from dpviz.mechanisms.registry import MECHANISMS
from dpviz.params import PRIOR as CLI_PRIOR
from dpviz.params import SAMPLING_RATE, Param, check_prior, count_param, in_words, subsampling
from dpviz.planner import composition, gaussian_sigma, gce, noise
from dpviz.planner.noise_cost import search_cost
from dpviz.planner.result import Plan
from dpviz.results import results_json
from dpviz.validation import (
    ParameterError,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)
from dpviz.views import View, ViewSpec

EPSILON = Param("epsilon", "total ε", 1.0, partial(check_epsilon, field="total ε"),
                "The total ε you may spend on all releases together, in [0, 100].")
DELTA = Param("delta", "total δ", 1e-5, partial(check_delta, field="total δ"),
              "The total δ you may spend, in [0, 1); e.g. 1e-5.")
K = count_param("k (releases)", 100, maximum=1_000_000, what="releases (queries) sharing the budget")
DELTA0 = Param("delta0", "δ0 per release", 0.0, partial(check_delta, field="δ0"),
               "The δ0 each release may use (0 for pure ε0-DP releases such as Laplace).")
EPS0 = Param("eps0", "ε0 per release (for the largest k)", 0.01, partial(check_epsilon, field="ε0"),
             "A per-release ε0: how many such releases fit the total budget?")
SENSITIVITY = Param("sensitivity", "sensitivity Δ", 1.0, partial(check_positive, field="sensitivity"),
                    "The query's sensitivity (ℓ1 for Laplace, ℓ2 for Gaussian; a whole number for "
                    "geometric).")
CAP = Param("cap", "at most C of the k databases per person", 10,
            partial(check_count, field="C", maximum=100_000),
            "Database priors (HBW §V-A): each person is in at most C of the k databases (one release each).")
NO_PRIOR = "none"


def _prior_or_none(value: object) -> str:
    """``none`` (the cap C applies) or a prior of the ``gce`` command (``--prior``)."""
    text = str(value).strip()
    return NO_PRIOR if text in ("", NO_PRIOR) else check_prior(text)


PRIOR = replace(CLI_PRIOR, label="database prior (instead of C)", default=NO_PRIOR, check=_prior_or_none,
                help='"none" (at most C databases per person), or as `gce --prior`: ' + CLI_PRIOR.help)
K_MAX = Param("k_max", "largest k plotted", 1000, partial(check_count, field="largest k", maximum=100_000),
              "Right end of the noise-against-k plot, 1 to 100,000.")



def method_label(key: str) -> str:
    """A method's name on the page: its plot style's label, else the label of its ``METHODS`` entry
    (a method added later needs no change here), else the key."""
    if key in STYLES:
        return STYLES[key].label
    return METHODS[key].label if key in METHODS else key


GAUSSIAN_CURVE = "analytic"
"""The utility plot's extra curve: the exact smallest Gaussian σ (its own accounting, not a theorem
for generic (ε0, δ0) steps)."""
LN20 = math.log(20.0)
"""Laplace: P(|noise| > b ln 20) = 5 %."""
SYMBOL = {"sigma": "σ", "scale": "b", "eps0": "ε0"}


def laplace_sd(eps0: float | None, sensitivity: float) -> float | None:
    """√2·Δ/ε0: the s.d. of Laplace noise calibrated to ε0 (Dwork-Roth Thm 3.6)."""
    return None if not eps0 else math.sqrt(2.0) * sensitivity / eps0


def eps0_plans(*, epsilon: float, delta: float, k: int, delta0: float,
               budget: Budget = budgets.PAGE) -> dict[str, Plan]:
    return composition.max_eps0(k=k, epsilon=epsilon, delta=delta, delta0=delta0, budget=budget)


def k_plans(*, epsilon: float, delta: float, eps0: float, delta0: float,
            budget: Budget = budgets.PAGE) -> dict[str, Plan]:
    return composition.max_k(eps0=eps0, epsilon=epsilon, delta=delta, delta0=delta0, budget=budget)


def noise_plans(*, epsilon: float, delta: float, k: int, sensitivity: float, sampling_rate: float,
                budget: Budget = budgets.PAGE_SEARCH) -> dict[str, Plan | str]:
    """Per mechanism of ``noise.NOISE``: its plan, or the message why it has none here (e.g. a
    geometric mechanism needs a whole sensitivity). Subsampled (q < 1): the Gaussian (DP-SGD) only.
    ``budget`` is the whole search's (``dpviz.budget.PAGE_SEARCH`` on the page)."""
    out: dict[str, Plan | str] = {}
    rate = subsampling(sampling_rate)
    for key in noise.NOISE:
        if rate is not None and key != "gaussian":
            continue
        params = {p.key for p in MECHANISMS[key].params}
        sens = sensitivity if "sensitivity" in params else None
        try:
            out[key] = noise.smallest_noise(key, k=k, epsilon=epsilon, delta=delta, sensitivity=sens,
                                            sampling_rate=rate, budget=budget)
        except ParameterError as exc:
            out[key] = str(in_words(exc, (*SPEC.params, *MECHANISMS[key].params)))
    return out


def noise_cost(*, epsilon: float, delta: float, k: int, sensitivity: float, sampling_rate: float,
               budget: Budget = budgets.PAGE_SEARCH) -> Cost:
    """Estimated time of ``noise_plans`` with the same arguments: its searches' estimates
    (``dpviz.planner.noise_cost``), summed, for the page's notice."""
    rate, costs = subsampling(sampling_rate), []
    for key in noise.NOISE:
        if rate is None or key == "gaussian":
            sens = sensitivity if "sensitivity" in {p.key for p in MECHANISMS[key].params} else None
            costs.append(search_cost(key, k=k, epsilon=epsilon, delta=delta, sensitivity=sens,
                                     sampling_rate=rate, budget=budget))
    costs = [c for c in costs if c.seconds > 0]
    what = costs[0].what if len(costs) == 1 else "Searching the noise of each mechanism"
    return Cost(sum(c.seconds for c in costs), what=what) if costs else budgets.ZERO


GCE_LABELS = {"classic": "Classic: all k composed (KOV Thm 3.3)", "exact": "Exact worst case with the cap",
              "cap_basic": "Cap + basic composition", "cap_advanced": "Cap + advanced composition",
              "cap_kov": "Cap + KOV Thm 3.4", "cap_zcdp": "Cap + zCDP", "parallel": "Parallel composition",
              "cap_kov_simplified": "Cap + KOV Thm 3.4, simplified",
              "cor6": "HBW Cor. 6 + optimal (one common δ̂)", "cor7": "HBW Cor. 7",
              **{f"theorem3_{m}": f"HBW Thm 3 + {m} (best split of δ)"
                 for m in ("basic", "advanced", "optimal")},
              **{f"theorem3_{m}_common": f"HBW Thm 3 + {m} (one common δ̂)"
                 for m in ("basic", "advanced", "optimal")},
              "refinement": "Refinement bound", "prior": "Database prior"}
PRIOR_EXACT = "Exact worst case with the prior"


def gce_plans(*, epsilon: float, delta: float, k: int, delta0: float, cap: int, prior: str = NO_PRIOR,
              budget: Budget = budgets.PAGE) -> dict[str, Plan]:
    """The largest per-database ε0 with at most ``cap`` databases per person (unbounded neighbours),
    or under ``prior`` when one is given; a prior that does not fit k is one row with the message."""
    try:
        if prior != NO_PRIOR:
            return gce.max_eps0(k=k, epsilon=epsilon, delta=delta, delta0=delta0, prior=prior, budget=budget)
        return gce.max_eps0(k=k, epsilon=epsilon, delta=delta, delta0=delta0, cap=cap,
                            neighbouring="unbounded", budget=budget)
    except ParameterError as exc:
        g = Guarantee.not_computed(source="HBW, database priors", reason=str(exc))
        return {"prior": Plan(key="prior", name="eps0", value=None, check=g, target_epsilon=epsilon,
                              target_delta=delta, reason=str(exc))}


def gce_cost(*, epsilon: float, delta: float, k: int, delta0: float, cap: int, prior: str = NO_PRIOR,
             budget: Budget = budgets.PAGE) -> Cost:
    """Estimated time of ``gce_plans`` with the same arguments (``dpviz.planner.gce.run_cost``),
    worded for the page's notice; zero where no model of the search exists (the cap question)."""
    del delta, cap  # the estimate does not depend on them; the same arguments as ``gce_plans``
    try:
        c = gce.run_cost(k=k, epsilon=epsilon, prior=None if prior == NO_PRIOR else prior, delta0=delta0,
                         budget=budget)
    except ParameterError:  # gce_plans says why in its row
        return budgets.ZERO
    return Cost(c.seconds, c.bytes, f"Searching the largest ε0 for {c.what}")


def utility_series(*, epsilon: float, delta: float, delta0: float, sensitivity: float, k_max: int,
                   budget: Budget = budgets.PAGE) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per method, the s.d. of Laplace noise at each method's largest ε0, on ~25 log-spaced k ≤
    k_max; and the exact smallest Gaussian σ (δ > 0 only). NaN where nothing fits. The two
    halves are searched by ``eps0_series`` and ``gaussian_series`` (the page caches each on its own
    inputs: the ε0 searches do not depend on Δ, the Gaussian's not on δ0) and joined by
    ``noise_series``."""
    ks, plans = eps0_series(epsilon=epsilon, delta=delta, delta0=delta0, k_max=k_max, budget=budget)
    return ks, noise_series(plans, gaussian_series(epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                                   k_max=k_max), sensitivity=sensitivity)


def utility_ks(k_max: int) -> np.ndarray:
    """The ~25 log-spaced k ≤ k_max of the utility figure."""
    ks = np.unique(np.asarray(k_grid(k_max, log=True), dtype=int))
    if ks.size > 25:
        ks = np.unique(np.geomspace(1, k_max, 25).round().astype(int))
    return ks


def eps0_series(*, epsilon: float, delta: float, delta0: float, k_max: int,
                budget: Budget = budgets.PAGE) -> tuple[np.ndarray, list[dict[str, Plan]]]:
    """The k of the utility figure and, at each, every method's largest ε0 (``composition.max_eps0``;
    the same values as the table's, without its check of the next value up)."""
    ks = utility_ks(k_max)
    return ks, [composition.max_eps0(k=int(k), epsilon=epsilon, delta=delta, delta0=delta0, budget=budget,
                                     beyond=False) for k in ks]


def gaussian_series(*, epsilon: float, delta: float, sensitivity: float, k_max: int) -> np.ndarray | None:
    """The exact smallest Gaussian σ at each k of the utility figure (NaN where nothing fits), from
    one search of the composed μ (``dpviz.planner.gaussian_sigma``); None for δ = 0."""
    if delta <= 0:
        return None
    return gaussian_sigma.smallest_sigmas(utility_ks(k_max), epsilon=epsilon, delta=delta,
                                          sensitivity=sensitivity)


def noise_series(plans: list[dict[str, Plan]], gauss: np.ndarray | None, *,
                 sensitivity: float) -> dict[str, np.ndarray]:
    """The utility figure's series: Laplace s.d. per method at each k's largest ε0, then the
    Gaussian σ (when there is one)."""
    series = {m: np.full(len(plans), np.nan) for m in METHODS}
    for i, at_k in enumerate(plans):
        for m, p in at_k.items():
            sd = laplace_sd(p.value, sensitivity) if p.feasible else None
            series[m][i] = np.nan if sd is None else sd
    if gauss is not None:
        series[GAUSSIAN_CURVE] = gauss
    return series


def utility_figure(ks: np.ndarray, series: dict[str, np.ndarray], *, epsilon: float, delta: float,
                   sensitivity: float) -> go.Figure:
    labels = {m: f"Laplace, {method_label(m)}" for m in series if m != GAUSSIAN_CURVE}
    labels[GAUSSIAN_CURVE] = "Gaussian σ (exact, Steinke Cor. 8)"
    return noise_vs_k_figure(ks, series, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                             labels=labels)


# ---------------------------------------------------------------------- tables
# Each table is a choice of columns for the one row builder (``dpviz.figures.tables.table_rows``);
# the same columns give its CSV at full precision (``table_csv``).
def _check_cell(p: Plan) -> str:
    return p.check_text if p.feasible else f"{p.source}: {p.reason}"


def _value(p: Plan) -> float | None:
    return p.value if p.feasible else None


PLAN_CODES: tuple[Column[Plan], ...] = (raw_column("kind", "kind"), raw_column("status", "status"))
"""The kind and status of a plan in the CSV (their codes)."""


def eps0_table(sensitivity: float) -> tuple[Column[Plan], ...]:
    """Largest ε0 per composition method: its Laplace noise, kind, check."""
    def sd(key: str, p: Plan) -> float | None:
        return laplace_sd(p.value, sensitivity) if p.feasible and p.value else None

    def interval(key: str, p: Plan) -> float | None:
        return sensitivity / p.value * LN20 if p.feasible and p.value else None

    return (key_column("method"), Column("method", None, lambda key, p: method_label(key)),
            Column("largest ε0", "eps0", lambda key, p: _value(p), number(7, down=True)),
            Column(None, "total_epsilon", lambda key, p: p.check.epsilon if p.feasible else None),
            Column(None, "total_delta", lambda key, p: p.check.delta if p.feasible else None),
            Column("Laplace s.d. √2Δ/ε0", "laplace_sd", sd, number()),
            Column("95 % interval ±", None, interval, number()),
            kind_column(), *PLAN_CODES, raw_column("source", "source"),
            Column("check", "check", lambda key, p: _check_cell(p)))


K_TABLE: tuple[Column[Plan], ...] = (
    key_column("method"), Column("method", None, lambda key, p: method_label(key)),
    Column("largest k", "k", lambda key, p: int(p.value) if p.feasible and p.value is not None else None,
           lambda v: NO_VALUE if v is None else f"{v:,}"),
    kind_column(), *PLAN_CODES,
    Column("check", "check", lambda key, p: _check_cell(p) + (f" ({p.note})" if p.note else "")))
"""Largest k per composition method, kind, check."""


def gce_table(prior: str = NO_PRIOR) -> tuple[Column[Plan], ...]:
    """Largest ε0 per database-prior bound, kind, the directions proved, check."""
    labels = GCE_LABELS if prior == NO_PRIOR else {**GCE_LABELS, "exact": PRIOR_EXACT}

    def directions(key: str, p: Plan) -> str:
        """The directions proved at the plan's value; none for a row not computed."""
        if p.check.status is Status.NOT_COMPUTED:
            return NO_VALUE
        return str(dict(p.extra).get("directions", "both"))

    return (key_column("bound"), label_column("bound", labels),
            Column("largest ε0", "eps0", lambda key, p: _value(p), number(7, down=True)),
            kind_column(), *PLAN_CODES, Column("directions", None, directions),
            Column("check", "check", lambda key, p: _check_cell(p)))


def eps0_rows(plans: dict[str, Plan], *, sensitivity: float) -> list[dict[str, str]]:
    return table_rows(plans, eps0_table(sensitivity))


def k_rows(plans: dict[str, Plan]) -> list[dict[str, str]]:
    return table_rows(plans, K_TABLE)


def gce_rows(plans: dict[str, Plan], *, prior: str = NO_PRIOR) -> list[dict[str, str]]:
    return table_rows(plans, gce_table(prior))


def noise_text(key: str, value: float, sensitivity: float) -> str:
    """The noise each query carries at the planned ``value`` (``Mechanism.noise_spread``): its s.d.,
    or what the mechanism says instead (randomized response: the flip probability)."""
    cls = MECHANISMS[key]
    own = {p.key for p in cls.params}
    try:
        spread = cls(**{cls.noise or "": value},
                     **({"sensitivity": sensitivity} if "sensitivity" in own else {})).noise_spread()
    except ParameterError:
        return NO_VALUE
    if spread is None:
        return NO_VALUE
    what, x = spread
    return format_number(x) if what == "s.d." else f"{what} {format_number(x, 4)}"


def noise_table(sensitivity: float) -> tuple[Column[Plan | str], ...]:
    """Smallest noise per mechanism (rounded up where more is noise, else down), the bracket just
    below it, the noise s.d., the route and the check; a mechanism that cannot answer here (a
    message instead of a plan) says why in the check."""
    def answered(p: Plan | str) -> Plan | None:
        return p if isinstance(p, Plan) and p.feasible and p.value is not None else None

    def answer(key: str, p: Plan | str) -> str:
        if isinstance(p, str):
            return NO_VALUE
        a = answered(p)
        if a is None:
            return f"{NO_VALUE} ({kind_word(p)})"
        return f"{SYMBOL.get(a.name, a.name)} = {_noise_value(key, a)}"

    def below(key: str, p: Plan | str) -> str:
        a = answered(p)
        b = None if a is None else a.beyond
        if b is None:
            return NO_VALUE
        return (f"ε ∈ [{format_number(b.lower, 7, down=True)}, {format_number(b.upper, 7)}]"
                if b.lower is not None else f"ε = {format_number(b.upper, 7)}")

    def spread(key: str, p: Plan | str) -> str:
        a = answered(p)
        return NO_VALUE if a is None or a.value is None else noise_text(key, a.value, sensitivity)

    def route(key: str, p: Plan | str) -> str:
        if isinstance(p, str):
            return NO_VALUE
        name = dict(p.extra).get("route")
        return str(name or NO_VALUE) if answered(p) is None else str(name)

    def check(key: str, p: Plan | str) -> str:
        if isinstance(p, str):
            return p
        a = answered(p)
        if a is None:
            return _check_cell(p)
        note = f"; {a.check.note}" if a.check.note else ""
        return (f"{SYMBOL.get(a.name, a.name)} = {_noise_value(key, a)} gives certified ε ≤ "
                f"{format_number(a.check.upper, 10)} ({a.kind.value}, {a.source}){note}")

    return (Column("mechanism", None, lambda key, p: MECHANISMS[key].title), Column("answer", None, answer),
            Column("just below (−1e-4)", None, below), Column("noise s.d.", None, spread),
            Column("route", None, route), Column("check", None, check))


def _noise_value(key: str, p: Plan) -> str:
    """The planned noise, rounded up where more is noise (σ, b), down otherwise."""
    return format_number(p.value, 7, down=not MECHANISMS[key].more_is_noise)


def noise_rows(plans: dict[str, Plan | str], *, sensitivity: float) -> list[dict[str, str]]:
    return table_rows(plans, noise_table(sensitivity))


# ---------------------------------------------------------------------- the view
def assemble(*, values: dict[str, Any], eps0_p: dict[str, Plan], k_p: dict[str, Plan],
             noise_p: dict[str, Plan | str], gce_p: dict[str, Plan], ks: np.ndarray,
             series: dict[str, np.ndarray], figure: go.Figure) -> View:
    sens = values["sensitivity"]
    csv: dict[str, dict[str, Any]] = {
        "eps0": table_csv(eps0_p, eps0_table(sens)), "k": table_csv(k_p, K_TABLE),
        "noise_vs_k": {"k": ks, **{f"sd_{m}": y for m, y in series.items()}},
        "gce": table_csv(gce_p, gce_table(values.get("prior", NO_PRIOR))),
    }
    payload = {"view": "planner", "parameters": dict(values),
               "eps0": results_json(eps0_p), "k": results_json(k_p),
               "noise": {m: (p.to_json() if isinstance(p, Plan) else {"reason": p})
                         for m, p in noise_p.items()},
               "gce": results_json(gce_p),
               "noise_vs_k": csv["noise_vs_k"]}
    opt, basic = eps0_p.get("optimal"), eps0_p.get("basic")
    gain = (opt.value / basic.value  # type: ignore[operator]
            if opt and basic and opt.feasible and basic.feasible and basic.value else None)
    return View(figures={"noise_vs_k": figure}, csv=csv, payload=payload,
                tables={"eps0": eps0_rows(eps0_p, sensitivity=sens), "k": k_rows(k_p),
                        "noise": noise_rows(noise_p, sensitivity=sens),
                        "gce": gce_rows(gce_p, prior=values.get("prior", NO_PRIOR))},
                summary={"optimal_over_basic": gain})


def build(*, epsilon: float, delta: float, k: int, delta0: float, eps0: float, sensitivity: float,
          sampling_rate: float, cap: int, k_max: int, prior: str = NO_PRIOR,
          budget: Budget = budgets.PAGE) -> View:
    """Every table and the utility figure (the page caches the parts separately)."""
    values = {"epsilon": epsilon, "delta": delta, "k": k, "delta0": delta0, "eps0": eps0,
              "sensitivity": sensitivity, "sampling_rate": sampling_rate, "cap": cap, "prior": prior,
              "k_max": k_max}
    ks, series = utility_series(epsilon=epsilon, delta=delta, delta0=delta0, sensitivity=sensitivity,
                                k_max=k_max, budget=budget)
    return assemble(values=values,
                    eps0_p=eps0_plans(epsilon=epsilon, delta=delta, k=k, delta0=delta0, budget=budget),
                    k_p=k_plans(epsilon=epsilon, delta=delta, eps0=eps0, delta0=delta0, budget=budget),
                    noise_p=noise_plans(epsilon=epsilon, delta=delta, k=k, sensitivity=sensitivity,
                                        sampling_rate=sampling_rate, budget=budgets.for_search(budget)),
                    gce_p=gce_plans(epsilon=epsilon, delta=delta, k=k, delta0=delta0, cap=cap, prior=prior,
                                    budget=budget),
                    ks=ks, series=series,
                    figure=utility_figure(ks, series, epsilon=epsilon, delta=delta, sensitivity=sensitivity))


SPEC = ViewSpec(name="planner", title="Plan a budget",
                params=(EPSILON, DELTA, K, DELTA0, EPS0, SENSITIVITY, SAMPLING_RATE, CAP, PRIOR, K_MAX),
                build=build)
