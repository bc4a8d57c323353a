"""The mechanisms view: data and figures for ``pages/4_Mechanisms.py`` (no Streamlit).

``build`` takes validated parameters and returns a ``dpviz.views.View`` with the PLD
histogram, δ(ε) with its certified band, the trade-off region against the generic optimal
region for the same per-step (ε0, δ0), ε against k, and the comparison table with timings.
``heterogeneous`` does the (ε_i, δ_i, count) table. The page grid budget is smaller than the
CLI's so that a change of a widget answers within about a second.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, OverBudget, cost_of
from dpviz.composition import as_levels, optimal
from dpviz.composition.levels import Level
from dpviz.figures.mechanisms import (
    delta_band_figure,
    epsilon_vs_k_figure,
    interval_rows,
    pld_histogram_figure,
)
from dpviz.figures.regions import region_figure
from dpviz.mechanisms import gaussian
from dpviz.mechanisms import heterogeneous as het
from dpviz.mechanisms.spec import (
    MechanismSpec,
    analytic_interval,
    buckets_interval,
    choose_h,
    generic_interval,
    generic_levels,
    rdp_interval,
)
from dpviz.params import Param
from dpviz.pld import discretize
from dpviz.pld.accountant import Interval, compose_many
from dpviz.pld.grid import DEFAULT_TAIL
from dpviz.regions import intersection_boundary, method_region
from dpviz.validation import ParameterError, check_count, check_delta, check_positive, check_probability
from dpviz.views import View, ViewSpec

PAGE_BUDGET = 1 << 18
"""Composed-grid bins on the page (the CLI allows 1 << 20)."""

PAGE_BUCKETS_N = 10_000
"""n for the buckets column on the page (2n + 1 = 20,001 buckets)."""

KINDS = {"Gaussian": "gaussian", "Laplace": "laplace", "Geometric": "geometric",
         "Randomized response": "randomized-response"}


def _rate(value: object) -> float | None:
    x = check_probability(value, field="sampling rate q", open_low=False)
    return None if x == 0 else x


SIGMA = Param("sigma", "σ (Gaussian noise)", 1.1, partial(check_positive, field="σ", maximum=1e6),
              "Standard deviation of the Gaussian noise, > 0.")
SCALE = Param("scale", "b (Laplace scale)", 2.0, partial(check_positive, field="b", maximum=1e6),
              "Scale of the Laplace noise, > 0.")
EPS0 = Param("mech_eps0", "ε0 (per step)", 0.5, partial(check_positive, field="ε0", maximum=100.0),
             "ε0 of the geometric mechanism / randomized response, in (0, 100].")
SENS = Param("sensitivity", "sensitivity Δ", 1.0, partial(check_positive, field="sensitivity", maximum=1e6),
             "Query sensitivity (a whole number for the geometric mechanism).")
K = Param("mech_k", "k (compositions)", 1000, partial(check_count, field="k", maximum=100_000),
          "Number of composed runs, 1 to 100,000.")
RATE = Param("rate", "sampling rate q (0 = none)", 0.01, _rate,
             "Poisson subsampling rate in [0, 1]; 0 turns subsampling off.")
DELTA = Param("mech_delta", "target total δ", 1e-5, partial(check_delta, field="target δ", positive=True),
              "Total δ at which ε is reported, in (0, 1).")
HDELTA = Param("het_delta", "target total δ (heterogeneous)", 1e-4,
               partial(check_delta, field="target δ (heterogeneous)", positive=True))
PARAMS = {"gaussian": (SIGMA, SENS), "laplace": (SCALE, SENS), "geometric": (EPS0, SENS),
          "randomized-response": (EPS0,)}


def make_spec(kind: str, values: dict[str, Any]) -> MechanismSpec:
    common = {"sampling_rate": values.get("rate")}
    if kind == "gaussian":
        return MechanismSpec(kind, sigma=values["sigma"], sensitivity=values["sensitivity"], **common)
    if kind == "laplace":
        return MechanismSpec(kind, scale=values["scale"], sensitivity=values["sensitivity"], **common)
    if kind == "geometric":
        sens = values["sensitivity"]
        if sens != int(sens):
            raise ParameterError("sensitivity", sens, "a whole number for the geometric mechanism")
        return MechanismSpec(kind, eps0=values["mech_eps0"], sensitivity=sens, **common)
    return MechanismSpec(kind, eps0=values["mech_eps0"], **common)


def k_values(k: int) -> list[int]:
    ks = sorted({max(1, round(float(v))) for v in np.geomspace(1, k, 5)} | {k})
    return ks


BUCKETS_SHARE, PLD_SHARE, CURVE_SHARE = 0.2, 0.5, 0.2
"""Shares of the view's budget: privacy buckets, the PLD compositions (all k on one grid), and the
δ(ε) band with the trade-off region (their δ evaluations); the rest is cheap."""

BAND_POINTS, REGION_POINTS = 120, 240
"""ε grid of the δ(ε) band and of the region's envelope (thinned when over their budget share)."""


def buckets_cost(spec: MechanismSpec, *, k: int, n: int = PAGE_BUCKETS_N) -> Cost:
    """Estimated cost of ``buckets_interval`` (``dpviz.budget`` units): the law put into 2n + 1
    buckets, then per direction a chain of k − 1 products (k ≤ 64) or ⌊log2 k⌋ squarings and
    popcount(k) − 1 products, each an FFT of 4n + 2 entries, for three arrays."""
    law = spec.law()
    dirs = len(law.both_directions())
    steps = k - 1 if k <= 64 else k.bit_length() - 1 + bin(k).count("1") - 1
    size = 4 * n + 2
    cells = cost_of("bucket_cell", dirs * (2 * n + 1))
    return cells + cost_of("bucket_log", dirs * steps * size * math.log2(size), memory_units=size,
                           what=f"{2 * n + 1:,} buckets, {steps} convolutions per direction")


def _delta_points(grids: int, h: float, n: int, budget: Budget) -> int:
    """How many δ(ε) evaluations of ``grids`` composed grids of width h fit ``budget`` (at most n,
    at least 12): each sums the atoms within one unit of loss above ε exactly, ≈ 1/h per grid."""
    per = cost_of("delta_eval", grids) + cost_of("delta_eval_atom", grids / h)
    return int(min(n, max(12, budget.seconds / max(per.seconds, 1e-12))))


def build(spec: MechanismSpec, *, k: int, delta: float, budget: Budget = budgets.PAGE) -> View:
    """The page's view; ``budget`` (default: the page's) bounds each route (module constants):
    the PLD grid coarsens to fit (a wider, still certified band), buckets beyond their share are
    not computed (the table says why), the δ(ε) grids are thinned."""
    h = choose_h(spec, k=k, budget=PAGE_BUDGET)
    law = spec.law()
    ks = k_values(k)
    results: dict[str, Interval] = {}
    try:
        many = compose_many(law, ks, h=h, budget=budget.share(PLD_SHARE))
    except OverBudget as exc:  # even the coarsest grid: the closed forms and RDP still answer
        many = {}
        results["pld"] = Interval(lower=None, upper=None, method="pld", detail=f"PLD {exc.reason}")
    composed = many.get(k)
    lo = up = None
    if composed is not None:
        lo, up = composed.epsilon(delta)
        note = "" if composed.h == h else f" (coarsened from h={h:.3g} to fit the time budget)"
        results["pld"] = Interval(lower=math.inf if lo is None else lo, upper=up, method="pld",
                                  seconds=composed.seconds, detail=f"h={composed.h:.3g}{note}")
    for key, fn in (("analytic", analytic_interval), ("rdp", rdp_interval)):
        iv = fn(spec, k=k, delta=delta)
        if iv is not None:
            results[key] = iv
    b_cost, b_budget = buckets_cost(spec, k=k), budget.share(BUCKETS_SHARE)
    if b_budget.admits(b_cost):
        results["buckets"] = buckets_interval(spec, k=k, delta=delta, n=PAGE_BUCKETS_N)
    else:
        results["buckets"] = Interval(lower=None, upper=None, method="buckets",
                                      detail=f"buckets {b_budget.reason(b_cost)}")
    results["generic"] = generic_interval(spec, k=k, delta=delta)

    # δ(ε) band on a grid reaching well past this mechanism's ε at the target δ (the generic
    # curve, often 100× larger, is shown only where it overlaps: there its δ is near 1)
    top = max(v for v in (up, 0.5) if v is not None and math.isfinite(v))
    curve_budget = budget.share(CURVE_SHARE / 3)
    n_band = BAND_POINTS if composed is None else \
        _delta_points(len(composed.upper) + len(composed.lower), composed.h, BAND_POINTS, curve_budget)
    eps = np.linspace(0.0, 2.5 * top, n_band)
    band = np.array([composed.delta(float(e)) for e in eps]) if composed is not None \
        else np.full((eps.size, 2), np.nan)
    step = spec.step_guarantee(delta_step=delta / (2.0 * k))
    levels = generic_levels(spec, k=k, delta=delta)  # None: per-step ε0 beyond the core's range
    lines = {} if levels is None else {
        "optimal": np.array([optimal.delta_for_epsilon(levels, epsilon=float(e), budget=budget).delta
                             for e in eps], dtype=float)}
    if "analytic" in results:
        lines["analytic"] = np.array([gaussian.delta_for_epsilon(
            epsilon=float(e), sigma=spec.sigma, sensitivity=spec.sensitivity, k=k) for e in eps])
    lines = {key: np.where(v > 0, v, np.nan) for key, v in lines.items()}

    # trade-off regions: the mechanism's (outer bound from the sound δ-curve) vs generic optimal
    regions = {} if levels is None else {"optimal": method_region("optimal", levels)}
    if composed is not None:
        n_r = _delta_points(len(composed.upper), composed.h, REGION_POINTS, budget.share(CURVE_SHARE * 2 / 3))
        eps_r = np.linspace(0.0, 2.5 * top, n_r)
        deltas = np.minimum([composed.delta_upper(float(e)) for e in eps_r], 1.0)
        regions["pld"] = intersection_boundary(eps_r, deltas)

    # ε against k (PLD band on the same grid, and the other routes)
    kl, ku, gen, rdp, ana = [], [], [], [], []
    for kk in ks:
        a, b = many[kk].epsilon(delta) if kk in many else (None, None)
        kl.append(np.nan if a is None else a)
        ku.append(np.nan if b is None else b)
        g = generic_interval(spec, k=kk, delta=delta).upper
        gen.append(np.nan if g is None else g)
        r = rdp_interval(spec, k=kk, delta=delta)
        rdp.append(np.nan if r is None else r.upper)
        an = analytic_interval(spec, k=kk, delta=delta)
        ana.append(np.nan if an is None else an.upper)
    k_lines = {"generic": np.array(gen), "rdp": np.array(rdp)}
    if "analytic" in results:
        k_lines["analytic"] = np.array(ana)
    if composed is not None and composed.single is not None:
        single = composed.single
    else:  # a histogram on at most ~4096 cells (a fine one may be what was over budget)
        lo_l, hi_l = law.support(DEFAULT_TAIL)
        single = discretize.pessimistic(law, h=max(h, (hi_l - lo_l) / 4096))

    figs = {
        "histogram": pld_histogram_figure(single.losses, single.mass, p_inf=single.p_inf,
                                          title=f"Privacy loss of one run: {law.name}"),
        "delta": delta_band_figure(eps, band[:, 0], band[:, 1], lines, k=k, target_delta=delta,
                                   answer=(lo, up)),
        "region": region_figure(regions, title=f"Trade-off region after k = {k:,} runs",
                                labels={"pld": "This mechanism (PLD, sound)",
                                        "optimal": "Any mechanism with the same per-step (ε0, δ0)"},
                                height=480),  # shown in a half-width column beside the histogram
        "epsilon_vs_k": epsilon_vs_k_figure(np.array(ks, dtype=float), np.array(kl), np.array(ku), k_lines,
                                            delta=delta),
    }
    payload = {"view": "mechanisms", "mechanism": spec.kind, "k": k, "delta": delta,
               "parameters": {"mechanism": spec.kind, "sigma": spec.sigma, "scale": spec.scale,
                              "eps0": spec.eps0, "sensitivity": spec.sensitivity, "k": k,
                              "sampling_rate": spec.sampling_rate, "delta": delta},
               "sampling_rate": spec.sampling_rate, "grid_width": h if composed is None else composed.h,
               "per_step": {"epsilon": step.epsilon, "delta": step.delta},
               "results": {key: iv.to_json() for key, iv in results.items()}}
    csv = {"delta_vs_epsilon": {"epsilon": eps, "delta_lower": band[:, 0], "delta_upper": band[:, 1]},
           "epsilon_vs_k": {"k": np.array(ks), "epsilon_lower": np.array(kl), "epsilon_upper": np.array(ku)}}
    return View(figures=figs, csv=csv, payload=payload, tables={"comparison": interval_rows(results)})


def heterogeneous(rows: list[dict[str, Any]], *, delta: float,
                  budget: Budget = budgets.PAGE) -> list[dict[str, str]]:
    """Table for the (ε_i, δ_i, count) editor: exact (few levels), PLD, KOV Thm 3.5, each within
    ``budget`` (default: the page's)."""
    levels = []
    for i, row in enumerate(rows, start=1):
        if all(row.get(c) in (None, "") for c in ("ε", "δ", "count")):
            continue
        try:
            levels.append(Level(epsilon=row.get("ε"), delta=row.get("δ"), count=row.get("count")))
        except ParameterError as exc:
            raise ParameterError(f"{exc.field} (row {i})", exc.value, exc.allowed) from None
    return interval_rows(het.compare(as_levels(levels), delta=delta, budget=budget))


def _kind(value: object) -> str:
    text = str(value).strip().lower()
    for label, key in KINDS.items():
        if text in (label.lower(), key):
            return key
    raise ParameterError("mechanism", value, "one of " + ", ".join(KINDS.values()))


MECHANISM = Param("mechanism", "Mechanism", "gaussian", _kind, "gaussian, laplace, geometric or "
                  "randomized-response.")


def build_view(*, mechanism: str, sigma: float, scale: float, mech_eps0: float, sensitivity: float,
               mech_k: int, rate: float | None, mech_delta: float, budget: Budget = budgets.PAGE) -> View:
    """``ViewSpec`` entry point (headless ``python -m dpviz figure mechanisms``)."""
    values = {"sigma": sigma, "scale": scale, "mech_eps0": mech_eps0, "sensitivity": sensitivity,
              "rate": rate}
    return build(make_spec(mechanism, values), k=mech_k, delta=mech_delta, budget=budget)


SPEC = ViewSpec(name="mechanisms", title="Mechanisms",
                params=(MECHANISM, SIGMA, SCALE, EPS0, SENS, K, RATE, DELTA), build=build_view)
"""For ``dpviz.views.registry``."""
