"""How long a noise search will take, said before it runs (issue 20, "Feedback").

``noise.smallest_noise`` evaluates the certified ε of k steps at some 25 spends. Where the
mechanism's closed form answers (the Gaussian without subsampling, Steinke Cor. 8) an evaluation
costs microseconds; where exact atoms answer, their counted work
(``exact_route.exact_cost``); else the PLD accountant, whose refinement costs about ``REFINE_GRIDS``
times the counted work of its finest regular width (``dpviz.pld.refine.finest_grid_seconds``),
at most the evaluation's share of the budget (it stops there). Counts × ``dpviz.budget`` units, no
clock; the search's cost in units of its first evaluation's is measured by
``benchmarks/calibrate_feedback.py`` (``SEARCH_EVALUATIONS``).
"""

from __future__ import annotations

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.guarantee import Status
from dpviz.mechanisms import routes
from dpviz.mechanisms.exact_route import exact_cost
from dpviz.mechanisms.registry import MECHANISMS
from dpviz.planner.calibration import calibration, search_range
from dpviz.planner.result import SYMBOLS
from dpviz.pld.refine import REFINE_GRIDS, finest_grid_seconds
from dpviz.validation import ParameterError

SEARCH_EVALUATIONS = 2.4
"""A whole search in units of the estimate of its first evaluation: measured 0.6 to 4.5, median
2.4, for the subsampled Gaussian (k from 10 to 100,000, q from 0.001 to 0.1; the larger ratios at
large k) by ``benchmarks/calibrate_feedback.py`` (benchmarks/results/calibrate_feedback.md), so
the estimate is within a factor of about 2 either way. Fewer than the search's ~25 evaluations:
one evaluation's estimate is the refinement's worst case (often capped at its budget, where the
refinement stops earlier), and the points it revisits are answered from memory. Searches that
answer in well under a second (Laplace, exact atoms) measure more, from work the counts leave
out; they never reach a notice."""


def search_cost(mechanism: str, *, k: int, epsilon: float, delta: float, sensitivity: float | None = None,
                sampling_rate: float | None = None, neighbouring: str = "add-remove",
                categories: int | None = None, budget: Budget | None = None) -> Cost:
    """Estimated time of ``noise.smallest_noise`` with the same arguments, from its first spend's
    route (module docstring); zero when its arguments are refused (it says why itself)."""
    try:
        cal = calibration(mechanism, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                          sampling_rate=sampling_rate, neighbouring=neighbouring, categories=categories,
                          budget=budget)
        start, top, smallest = search_range(cal, epsilon=epsilon, k=k, sensitivity=sensitivity,
                                            sampling_rate=sampling_rate)
        parts = [(cal.mechanism(min(max(start, smallest), top)), k)]
        closed = routes.analytic(parts, delta=delta)
    except ParameterError:
        return budgets.ZERO
    if closed is not None and closed.status is Status.OK and closed.upper is not None:
        return budgets.ZERO
    one = exact_cost(parts)
    if isinstance(one, str) or not cal.budget.admits(one):
        finest = finest_grid_seconds([(m.law, n) for m, n in parts], delta=delta, epsilon=None)
        # no grid that fine fits: the accountant coarsens within its share
        seconds = cal.budget.seconds if finest is None else REFINE_GRIDS * finest
        one = Cost(min(seconds, cal.budget.seconds))
    extreme = "smallest" if cal.is_noise else "largest"
    what = f"Searching the {extreme} {SYMBOLS.get(cal.param, cal.param)} of the {MECHANISMS[mechanism].title}"
    return Cost(SEARCH_EVALUATIONS * one.seconds, what=what)
