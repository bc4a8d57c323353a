"""``routes.best``: a certified lower above a sound upper is clamped only within round-off; beyond it
the two routes disagree (a bug in one of them), so neither bound reaches the headline, which says so
and is never EXACT (REVIEW R4: the old clamp turned a one-direction RDP bound into an "exact" 0.68
where the truth is 3.91, and a NaN PLD grid into an "exact" ε = 0)."""

from __future__ import annotations

import pytest

from dpviz.guarantee import Guarantee, Kind, Status
from dpviz.mechanisms import routes


def _exact(v: float) -> Guarantee:
    return Guarantee(epsilon=v, delta=1e-3, kind=Kind.EXACT, source="exact atoms")


def _upper(v: float) -> Guarantee:
    return Guarantee(epsilon=v, delta=1e-3, kind=Kind.UPPER, source="some upper bound")


def test_a_contradiction_is_not_clamped_into_an_exact_headline():
    results = {"exact": _exact(3.9100210027574795), "rdp": _upper(0.6824), "generic": _upper(3.911)}
    key, g = routes.best(results)
    assert g.kind is Kind.UPPER and g.status is Status.OK
    assert "routes disagree" in g.note and "exact" in g.note and "rdp" in g.note
    # the contradicted upper (rdp) is not chosen and the lower above it (exact's) is left out
    assert key == "exact" and g.upper == 3.9100210027574795 and g.lower is None


def test_a_contradicted_upper_is_not_the_headline_even_when_smallest():
    results = {"pld": Guarantee(epsilon=0.0, delta=1e-10, kind=Kind.EXACT, source="pld"),
               "analytic": Guarantee(epsilon=0.0330509, delta=1e-10, kind=Kind.UPPER, source="Cor. 8",
                                     lower=0.0330508, upper=0.0330509)}
    key, g = routes.best(results)
    assert key == "analytic" and g.upper == 0.0330509 and g.kind is Kind.UPPER
    assert g.lower == 0.0 and "routes disagree" in g.note


@pytest.mark.parametrize("rel", [0.0, 5e-13, 9e-13])
def test_round_off_is_still_clamped_to_exact(rel):
    v = 1.2345
    _key, g = routes.best({"exact": _exact(v * (1 + rel)), "pld": _exact(v)})
    assert g.kind is Kind.EXACT and g.lower == g.upper == v and not g.note


def test_all_uppers_contradicted_is_not_computed():
    lower_only = Guarantee(epsilon=2.0, delta=1e-3, kind=Kind.LOWER, source="a lower bound")
    key, g = routes.best({"pld": lower_only, "rdp": _upper(1.0)})
    assert key == "none" and g.status is Status.NOT_COMPUTED and "routes disagree" in (g.reason or "")


def test_the_asymmetric_pair_headline_is_the_exact_answer():
    from dpviz.mechanisms.registry import make

    m = make("finite", p="0.99,0.01", q="0.5,0.5")
    g = routes.best(routes.routes([(m, 1)], delta=1e-3, compare=True))[1]
    assert g.kind is Kind.EXACT and g.upper == pytest.approx(3.9100210, rel=1e-6) and not g.note
