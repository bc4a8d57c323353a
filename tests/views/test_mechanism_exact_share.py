"""The Mechanisms page's first answer runs the exact route within ``EXACT_SHARE`` of its budget
(issue 20: a finite law's exact route took 1.3-2.2 s of a change); beyond it the row says why, the PLD
refines, and the command line's budget still computes the exact answer."""

from __future__ import annotations

from dpviz.guarantee import Kind, Status
from dpviz.mechanisms import routes
from dpviz.views import mechanism_routes as mr
from dpviz.views import mechanisms as mv

BIG = ("geometric", {"eps0": 0.1, "sensitivity": 3}, 3000)  # 9,001 lattice points: about 2 s estimated
SMALL = ("geometric", {"eps0": 0.1, "sensitivity": 2}, 1000)


def test_over_its_share_the_exact_row_says_why_and_the_pld_answers() -> None:
    kind, values, k = BIG
    mech = mv.make_mechanism(kind, values)
    first = mr.quick(mech, k=k, delta=1e-5)
    assert first["exact"].status is Status.NOT_COMPUTED
    assert "budget" in (first["exact"].reason or "")
    view = mr.refine(mech, k=k, delta=1e-5, first=first)
    assert "pld" in view.summary["refined"]
    cli = routes.exact([(mech, k)], delta=1e-5)  # the command line's 60 s
    assert cli.kind is Kind.EXACT and view.summary["lower"] <= cli.epsilon <= view.summary["upper"]


def test_within_its_share_the_exact_route_answers_first() -> None:
    kind, values, k = SMALL
    first = mr.quick(mv.make_mechanism(kind, values), k=k, delta=1e-5)
    assert first["exact"].kind is Kind.EXACT


def test_a_larger_budget_gives_the_exact_route_a_larger_share() -> None:
    from dpviz import budget as budgets

    kind, values, k = BIG
    first = mr.quick(mv.make_mechanism(kind, values), k=k, delta=1e-5, budget=budgets.CLI)
    assert first["exact"].kind is Kind.EXACT
