"""The exact route of finite laws is admitted by the work budget (issue 19 item 8), like every other
expensive route: its cost is estimated from the count vectors it would enumerate before any is
built. No test measures time: they assert on the estimate and on the route taken.
"""

from __future__ import annotations

import math

from dpviz import budget as budgets
from dpviz.budget import UNIT_SECONDS, Budget
from dpviz.guarantee import Status
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.registry import make

UNLIMITED = Budget(seconds=1e12, max_bytes=1e18)
FUZZ = make("geometric", eps0=0.0019, sensitivity=6, sampling_rate=0.049, neighbouring="add-remove")
"""The fuzz case that once crossed a 60 s wall-clock guard: ``mechanism geometric --eps0 0.0019 --k 26
--sampling-rate 0.049 --h 1e-300 --sensitivity 6`` (7 outcomes per step, asymmetric: two directions)."""


def test_the_estimate_counts_the_count_vectors_of_both_directions() -> None:
    cost = R.exact_cost([(FUZZ, 26)])
    atoms = math.comb(26 + 6, 6)  # count vectors of 7 outcomes summing to 26
    assert cost.what == f"{atoms:,} atoms"
    assert cost.seconds >= 2 * atoms * 7 * UNIT_SECONDS["exact_cell"]  # two directions, 7 entries each
    costs = [R.exact_cost([(FUZZ, k)]).seconds for k in (5, 10, 20, 26)]
    assert costs == sorted(costs)
    assert isinstance(R.exact_cost([(make("gaussian", sigma=1.0), 3)]), str)  # continuous: not applicable


def test_the_fuzz_case_answers_within_the_page_budget_by_the_estimate() -> None:
    """Above the page's budget the exact route is not run (the estimate decides, before any work) and
    a cheaper sound route answers. (With the fuzz case's ``--h 1e-300`` the command exits 2 naming
    --h: no grid of that width fits.)"""
    parts = [(FUZZ, 26)]
    assert not budgets.PAGE.admits(R.exact_cost(parts))
    ex = R.exact(parts, delta=1e-5, budget=budgets.PAGE)
    assert ex.status is Status.NOT_COMPUTED and "above the 2 s budget" in ex.reason
    out = R.routes(parts, delta=1e-5, budget=budgets.PAGE, compare=True)
    assert out["exact"].status is Status.NOT_COMPUTED
    answered = [k for k, g in out.items() if g.status is Status.OK and g.upper is not None
                and math.isfinite(g.upper)]
    assert answered, out
    assert budgets.CLI.admits(R.exact_cost(parts))  # the command line's default still runs it


def test_an_admitted_exact_route_is_unchanged_by_the_budget() -> None:
    parts = [(FUZZ, 8)]
    assert budgets.PAGE.admits(R.exact_cost(parts))
    a = R.exact(parts, delta=1e-5, budget=budgets.PAGE)
    b = R.exact(parts, delta=1e-5, budget=UNLIMITED)
    assert a.status is Status.OK and a.epsilon == b.epsilon and a.detail == b.detail
    tiny = R.exact(parts, delta=1e-5, budget=Budget(seconds=1e-9, max_bytes=1e18))
    assert tiny.status is Status.NOT_COMPUTED and "3,003 atoms" in tiny.reason
