"""Bounded work per request for the PLD accountant and the Mechanisms view (issue 14, item 3).

A composition estimates its cost first (``accountant.cost``); over the budget the grid coarsens
(a wider interval, still certified), and beyond h × 16 the route is not computed and a cheaper
sound bound answers. No test measures time: they assert on the estimate and on the route taken.
"""

from __future__ import annotations

import itertools
import json

import pytest

from dpviz import budget as budgets
from dpviz.budget import Budget, OverBudget
from dpviz.cli import main
from dpviz.composition import parse_levels
from dpviz.guarantee import Status
from dpviz.mechanisms import heterogeneous as het
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.base import Accountable
from dpviz.mechanisms.registry import make
from dpviz.pld import accountant, discretize
from dpviz.pld.grid import composed_bins
from dpviz.views import mechanisms as mv
from dpviz.views.mechanism_figures import delta_points

TINY = Budget(seconds=1e-9, max_bytes=1e18)
UNLIMITED = Budget(seconds=1e12, max_bytes=1e18)
DPSGD = make("gaussian", sigma=1.1, sampling_rate=0.01)


# ---------------------------------------------------------------- over budget

def test_compose_refuses_before_any_convolution() -> None:
    parts = [(DPSGD.law, 10_000)]
    with pytest.raises(OverBudget) as info:
        accountant.compose(parts, h=2e-4, budget=TINY)
    assert "PLD grid of about" in info.value.reason and "raise --budget" in info.value.reason
    with pytest.raises(OverBudget):  # even 16× coarser
        accountant.compose_within_limits(parts, h=2e-4, budget=TINY)


def test_a_coarser_grid_is_still_certified_and_contains_the_fine_interval() -> None:
    parts = [(DPSGD.law, 1000)]
    fine = accountant.compose(parts, h=2e-4, budget=UNLIMITED)
    need = accountant.cost(parts, h=2e-4).seconds
    coarse = accountant.compose_within_limits(parts, h=2e-4, budget=Budget(seconds=need / 3, max_bytes=1e18))
    assert coarse.h > fine.h and accountant.cost(parts, h=coarse.h).seconds <= need / 3
    (lo_f, up_f), (lo_c, up_c) = fine.epsilon(1e-5), coarse.epsilon(1e-5)
    assert lo_c <= lo_f <= up_f <= up_c


def test_cli_over_budget_answers_with_the_rdp_upper_bound(capsys) -> None:
    argv = ["mechanism", "gaussian", "--sigma", "1.1", "--sampling-rate", "0.01", "--k", "1000",
            "--delta", "1e-5"]
    assert main([*argv, "--budget", "1e-9"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "rdp" and out["epsilon_lower"] is None
    assert out["reason"].startswith("PLD not computed") and "budget" in out["reason"]
    assert out["epsilon"] == R.rdp([(DPSGD, 1000)], delta=1e-5).upper
    assert main(argv) == 0
    pld = json.loads(capsys.readouterr().out)
    assert pld["method"] == "pld" and out["epsilon"] >= pld["epsilon_lower"]  # sound: above the truth's floor
    assert main([*argv, "--budget", "1e-9", "--compare"]) == 0
    routes = json.loads(capsys.readouterr().out)["routes"]
    assert routes["pld"]["upper"] is None and "not computed" in routes["pld"]["detail"]
    assert routes["rdp"]["upper"] is not None


def test_page_view_over_budget_keeps_every_other_route() -> None:
    view = mv.build(DPSGD, k=1000, delta=1e-5, budget=TINY, compare=True)
    res = view.payload["results"]
    assert res["pld"]["upper"] is None and res["pld"]["status"] == "not_computed"
    assert "budget" in res["pld"]["reason"]
    assert res["buckets"]["status"] == "not_computed"
    assert res["rdp"]["upper"] is not None and res["generic"]["upper"] is not None
    assert set(view.figures) == {"histogram", "delta", "region", "epsilon_vs_k"}


def test_page_buckets_beyond_their_share_are_not_computed() -> None:
    c = R.buckets_cost(DPSGD, k=1000, n=mv.PAGE_BUCKETS_N)
    share = Budget(seconds=c.seconds * 0.9 / mv.BUCKETS_SHARE, max_bytes=1e18)
    view = mv.build(DPSGD, k=1000, delta=1e-5, budget=share, compare=True)
    assert view.payload["results"]["buckets"]["status"] == "not_computed"


def test_heterogeneous_table_over_budget() -> None:
    levels = parse_levels("0.13:0:40,0.71:1e-6:5")
    rows = het.compare(levels, delta=1e-4, budget=TINY)
    assert rows["exact"].status is Status.NOT_COMPUTED and rows["exact"].upper is None
    assert rows["pld"].status is Status.NOT_COMPUTED and rows["pld"].upper is None
    assert rows["kov"].upper is not None


# ---------------------------------------------------------------- same numbers within budget

def test_within_budget_the_cli_route_gives_the_unlimited_numbers() -> None:
    a = R.pld([(DPSGD, 10_000)], delta=1e-5)  # the CLI's default budget
    u = R.pld([(DPSGD, 10_000)], delta=1e-5, budget=UNLIMITED)
    assert a.status is u.status is Status.OK and (a.lower, a.upper) == (u.lower, u.upper)
    assert a.detail.split(",")[:2] == u.detail.split(",")[:2] and "coarsened" not in a.detail  # the same grid
    r = R.pld([(DPSGD, 100)], delta=1e-5)
    assert r.upper is not None and "not computed" not in r.detail


def test_compose_many_equals_compose_for_every_k() -> None:
    law = make("laplace", scale=2.0, sampling_rate=0.1).law
    ks = [1, 7, 64, 300, 1000]
    many = accountant.compose_many(law, ks, h=1e-3)
    for k in ks:
        one = accountant.compose([(law, k)], h=1e-3)
        assert many[k].epsilon(1e-6) == one.epsilon(1e-6)
        assert many[k].delta(0.7) == one.delta(0.7)
    assert many[1000].single.mass.size == discretize.pessimistic(law, h=1e-3).mass.size


def test_the_default_page_is_within_its_budget() -> None:
    """The Mechanisms page as it opens (DP-SGD, k = 1000): nothing coarsened, nothing left out."""
    view = mv.build(DPSGD, k=1000, delta=1e-5, compare=True)
    res = view.payload["results"]
    assert res["pld"]["status"] == "ok"  # buckets get a share of the page budget: the view's concern
    assert "coarsened" not in res["pld"].get("detail", "")


def test_plan_is_unchanged_where_the_law_fits_the_plan_cells() -> None:
    """``plan`` sizes grids from at most PLAN_CELLS cells; below that it is the full plan of
    before, so ``choose_h`` picks the same width (and the CLI prints the same numbers)."""
    law = DPSGD.law
    for h in (2e-4, 8e-4):
        lo, hi = law.support(1e-15)
        assert (hi - lo) / h < accountant.PLAN_CELLS
        dirs = accountant.directions([(law, 10_000)])
        old = max(composed_bins([(discretize.pessimistic(d[0][0], h=h), 10_000)]) for d in dirs)
        assert accountant.plan([(law, 10_000)], h=h) == old


# ---------------------------------------------------------------- the cost model

@pytest.mark.parametrize("mech", [DPSGD, make("gaussian", sigma=2.0),
                                  make("randomized-response", eps0=0.5)], ids=repr)
def test_cost_grows_with_k_and_shrinks_with_h(mech: Accountable) -> None:
    law = mech.law
    by_k = [accountant.cost([(law, k)], h=1e-3).seconds for k in (1, 2, 10, 100, 1000, 10_000)]
    assert all(a <= b for a, b in itertools.pairwise(by_k)) and by_k[0] < by_k[-1]
    by_h = [accountant.cost([(law, 1000)], h=h).seconds for h in (1e-4, 2e-4, 1e-3, 1e-2)]
    assert all(a > b for a, b in itertools.pairwise(by_h))


def test_subsampled_laws_cost_more_per_cell_than_symmetric_ones() -> None:
    assert accountant.cell_unit(DPSGD.law) == "pld_cell_asymmetric"
    assert accountant.cell_unit(make("gaussian", sigma=1.0).law) == "pld_cell"
    assert accountant.cell_unit(make("randomized-response", eps0=1.0).law) == "pld_atom_cell"
    units = budgets.UNIT_SECONDS
    assert units["pld_cell_asymmetric"] > units["pld_cell"] > units["pld_atom_cell"]


def test_buckets_cost_grows_with_k_and_n() -> None:
    by_k = [R.buckets_cost(DPSGD, k=k, n=mv.PAGE_BUCKETS_N).seconds for k in (2, 10, 64, 65, 1000, 100_000)]
    assert by_k[0] < by_k[1] < by_k[2] and by_k[3] < by_k[4] < by_k[5]  # chain up to 64, squaring beyond
    mech = DPSGD
    assert R.buckets_cost(mech, k=1000, n=50_000).seconds > R.buckets_cost(mech, k=1000, n=10_000).seconds


def test_fewer_delta_points_when_their_share_is_small() -> None:
    assert delta_points(4, 2e-4, 120, budgets.PAGE) == 120
    assert 12 <= delta_points(4, 1e-6, 120, Budget(seconds=0.01, max_bytes=1e18)) < 120
    points = [delta_points(4, 1e-5, 240, Budget(seconds=s, max_bytes=1e18)) for s in (1e-3, 1e-2, 0.1, 1)]
    assert all(a <= b for a, b in itertools.pairwise(points)) and points[0] < points[-1]
