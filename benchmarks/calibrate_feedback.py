"""Calibrate the time estimates behind the pages' "this will take about N s" notices (issue 20,
"Feedback"): each estimate against the CPU time the work measures, on a grid of settings.

    python benchmarks/calibrate_feedback.py   # writes benchmarks/results/calibrate_feedback.md

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

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "calibrate_feedback.md"
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
    lines = ["# Time estimates of the pages' notices (`python benchmarks/calibrate_feedback.py`)", "",
             f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}. CPU seconds "
             "(`time.process_time`), one run each; ε = 1, δ = 1e-5 for the noise searches (the page's "
             "budget), the Database priors defaults otherwise.", "",
             "| noise search | estimate of one evaluation (s) | measured CPU (s) | search / one evaluation |",
             "|---|---:|---:|---:|"]
    for s in NOISE_GRID:
        est = noise_cost.search_cost(**s, **target).seconds / noise_cost.SEARCH_EVALUATIONS
        took = cpu(lambda s=s: noise.smallest_noise(**s, **target))
        if est > 0.05:  # the searches a notice can concern (the lighter ones' fixed costs are not counted)
            ratios.append(took / est)
        lines.append(f"| {s} | {est:.3g} | {took:.3g} | {took / est if est else float('nan'):.3g} |")
        print(lines[-1], flush=True)
    if ratios:
        lines += ["", "Search / one evaluation, where one evaluation is estimated above 0.05 s: median "
                  f"{statistics.median(ratios):.3g}, range {min(ratios):.3g} to {max(ratios):.3g} "
                  f"(`SEARCH_EVALUATIONS` = {noise_cost.SEARCH_EVALUATIONS:g})."]
    lines += ["", "| Database priors view | estimated (s) | measured CPU (s) | measured / estimated |",
              "|---|---:|---:|---:|"]
    for change in PRIORS_GRID:
        values = {**dp.SPEC.defaults(), **change}
        est = dp.build_cost(**values).seconds
        took = cpu(lambda values=values: dp.SPEC.build(**values))
        ratio = took / est if est else float("nan")
        lines.append(f"| {change} | {est:.3g} | {took:.3g} | {ratio:.3g} |")
        print(lines[-1], flush=True)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
