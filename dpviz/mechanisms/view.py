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
from dpviz.pld.accountant import Interval, compose_within_limits
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


def build(spec: MechanismSpec, *, k: int, delta: float) -> View:
    h = choose_h(spec, k=k, budget=PAGE_BUDGET)
    law = spec.law()
    single = discretize.pessimistic(law, h=h)
    composed = compose_within_limits([(law, k)], h=h)
    lo, up = composed.epsilon(delta)
    results: dict[str, Interval] = {
        "pld": Interval(lower=math.inf if lo is None else lo, upper=up, method="pld",
                        seconds=composed.seconds, detail=f"h={composed.h:.3g}")}
    for key, fn in (("analytic", analytic_interval), ("rdp", rdp_interval)):
        iv = fn(spec, k=k, delta=delta)
        if iv is not None:
            results[key] = iv
    results["buckets"] = buckets_interval(spec, k=k, delta=delta, n=PAGE_BUCKETS_N)
    results["generic"] = generic_interval(spec, k=k, delta=delta)

    # δ(ε) band on a grid reaching well past this mechanism's ε at the target δ (the generic
    # curve, often 100× larger, is shown only where it overlaps: there its δ is near 1)
    top = max(v for v in (up, 0.5) if v is not None and math.isfinite(v))
    eps = np.linspace(0.0, 2.5 * top, 120)
    band = np.array([composed.delta(float(e)) for e in eps])
    step = spec.step_guarantee(delta_step=delta / (2.0 * k))
    levels = generic_levels(spec, k=k, delta=delta)  # None: per-step ε0 beyond the core's range
    lines = {} if levels is None else {
        "optimal": np.array([optimal.delta_for_epsilon(levels, epsilon=float(e)).delta for e in eps])}
    if "analytic" in results:
        lines["analytic"] = np.array([gaussian.delta_for_epsilon(
            epsilon=float(e), sigma=spec.sigma, sensitivity=spec.sensitivity, k=k) for e in eps])
    lines = {key: np.where(v > 0, v, np.nan) for key, v in lines.items()}

    # trade-off regions: the mechanism's (outer bound from the sound δ-curve) vs generic optimal
    eps_r = np.linspace(0.0, 2.5 * top, 240)
    mech_region = intersection_boundary(eps_r, np.minimum([composed.delta(float(e))[1] for e in eps_r], 1.0))
    regions = {"pld": mech_region} if levels is None else \
        {"optimal": method_region("optimal", levels), "pld": mech_region}

    # ε against k (PLD band and the other routes)
    ks = k_values(k)
    kl, ku, gen, rdp, ana = [], [], [], [], []
    for kk in ks:
        c = compose_within_limits([(law, kk)], h=choose_h(spec, k=kk, budget=PAGE_BUDGET // 4))
        a, b = c.epsilon(delta)
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
               "sampling_rate": spec.sampling_rate, "grid_width": h,
               "per_step": {"epsilon": step.epsilon, "delta": step.delta},
               "results": {key: iv.to_json() for key, iv in results.items()}}
    csv = {"delta_vs_epsilon": {"epsilon": eps, "delta_lower": band[:, 0], "delta_upper": band[:, 1]},
           "epsilon_vs_k": {"k": np.array(ks), "epsilon_lower": np.array(kl), "epsilon_upper": np.array(ku)}}
    return View(figures=figs, csv=csv, payload=payload, tables={"comparison": interval_rows(results)})


def heterogeneous(rows: list[dict[str, Any]], *, delta: float) -> list[dict[str, str]]:
    """Table for the (ε_i, δ_i, count) editor: exact (few levels), PLD, KOV Thm 3.5."""
    levels = []
    for i, row in enumerate(rows, start=1):
        if all(row.get(c) in (None, "") for c in ("ε", "δ", "count")):
            continue
        try:
            levels.append(Level(epsilon=row.get("ε"), delta=row.get("δ"), count=row.get("count")))
        except ParameterError as exc:
            raise ParameterError(f"{exc.field} (row {i})", exc.value, exc.allowed) from None
    return interval_rows(het.compare(as_levels(levels), delta=delta))


def _kind(value: object) -> str:
    text = str(value).strip().lower()
    for label, key in KINDS.items():
        if text in (label.lower(), key):
            return key
    raise ParameterError("mechanism", value, "one of " + ", ".join(KINDS.values()))


MECHANISM = Param("mechanism", "Mechanism", "gaussian", _kind, "gaussian, laplace, geometric or "
                  "randomized-response.")


def build_view(*, mechanism: str, sigma: float, scale: float, mech_eps0: float, sensitivity: float,
               mech_k: int, rate: float | None, mech_delta: float) -> View:
    """``ViewSpec`` entry point (headless ``python -m dpviz figure mechanisms``)."""
    values = {"sigma": sigma, "scale": scale, "mech_eps0": mech_eps0, "sensitivity": sensitivity,
              "rate": rate}
    return build(make_spec(mechanism, values), k=mech_k, delta=mech_delta)


SPEC = ViewSpec(name="mechanisms", title="Mechanisms",
                params=(MECHANISM, SIGMA, SCALE, EPS0, SENS, K, RATE, DELTA), build=build_view)
"""For ``dpviz.views.registry`` (a one-line ``dpviz/views/mechanisms.py`` can re-export it)."""
