"""Calibrate the time estimates behind the pages' "this will take about N s" notices (issue 20,
"Feedback"): each estimate against the CPU time the work measures, on a grid of settings.

    python benchmarks/calibrate_feedback.py            # prints the table and the ratios

- Plan a budget's noise search (``dpviz.planner.noise_cost.search_cost``): the search's CPU time
  divided by the estimate of one forward evaluation is the number of evaluations the model uses
  (``SEARCH_EVALUATIONS``, set near the middle of the printed range).
- Database priors (``dpviz.views.database_priors.build_cost``): measured / estimated for the whole
  view. Where a notice can matter (estimates of tenths of a second and more) it should stay within a
  factor of about 2 (the ``dpviz.budget`` units' accuracy; measured 0.5 to 0.7, the estimate on the
  safe side); a light question measures more than its estimate, from work the counts leave out
  (the closed-form bounds, the figures), and never reaches a notice.

CPU time (``time.process_time``), one run each: other jobs on a shared machine do not inflate it.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpviz import budget as budgets  # noqa: E402
from dpviz.planner import noise, noise_cost  # noqa: E402
from dpviz.views import database_priors as dp  # noqa: E402

NOISE_GRID: list[dict[str, Any]] = [
    {"mechanism": "gaussian", "k": 10, "sampling_rate": 0.01},
    {"mechanism": "gaussian", "k": 100, "sampling_rate": 0.01},
    {"mechanism": "gaussian", "k": 100, "sampling_rate": 0.001},
    {"mechanism": "gaussian", "k": 1000, "sampling_rate": 0.001},
    {"mechanism": "gaussian", "k": 1000, "sampling_rate": 0.01},
    {"mechanism": "gaussian", "k": 10000, "sampling_rate": 0.01},
    {"mechanism": "gaussian", "k": 100, "sampling_rate": 0.1},
    {"mechanism": "gaussian", "k": 100000, "sampling_rate": 0.004},
    {"mechanism": "laplace", "k": 100, "sensitivity": 1.0},
    {"mechanism": "laplace", "k": 1000, "sensitivity": 1.0},
]
PRIORS_GRID: list[dict[str, Any]] = [
    {"kind": "cap", "k": 1000},
    {"preset": "custom", "kind": "at-least", "k": 200, "k2": 2},
    {"preset": "custom", "kind": "at-least", "k": 2000, "k2": 3},
    {"preset": "custom", "kind": "uniform-nonzero", "k": 300},
    {"preset": "custom", "kind": "uniform-nonzero", "k": 2000},
    {"preset": "custom", "kind": "cap", "k": 2000, "cap": 365, "delta0": 1e-6},
    {"preset": "custom", "kind": "uniform-nonzero", "k": 5000, "delta0": 1e-7},
    {"preset": "custom", "kind": "uniform-nonzero", "k": 20000, "delta0": 1e-7},
]


def cpu(fn: Callable[[], Any]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    target = {"epsilon": 1.0, "delta": 1e-5, "budget": budgets.PAGE_SEARCH}
    ratios = []
    print("| noise search | estimated s (one evaluation) | measured CPU s | evaluations |")
    print("|---|---:|---:|---:|")
    for s in NOISE_GRID:
        est = noise_cost.search_cost(**s, **target).seconds / noise_cost.SEARCH_EVALUATIONS
        took = cpu(lambda s=s: noise.smallest_noise(**s, **target))
        if est > 0:
            ratios.append(took / est)
        print(f"| {s} | {est:.3g} | {took:.3g} | {took / est if est else float('nan'):.3g} |", flush=True)
    if ratios:
        print(f"\nevaluations: median {statistics.median(ratios):.3g}, range {min(ratios):.3g} to "
              f"{max(ratios):.3g} (SEARCH_EVALUATIONS = {noise_cost.SEARCH_EVALUATIONS:g})\n")
    print("| priors view | estimated s | measured CPU s | measured / estimated |")
    print("|---|---:|---:|---:|")
    for change in PRIORS_GRID:
        values = {**dp.SPEC.defaults(), **change}
        est = dp.build_cost(**values).seconds
        took = cpu(lambda values=values: dp.SPEC.build(**values))
        ratio = took / est if est else float("nan")
        print(f"| {change} | {est:.3g} | {took:.3g} | {ratio:.3g} |", flush=True)


if __name__ == "__main__":
    main()
