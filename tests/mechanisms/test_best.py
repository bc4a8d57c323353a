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


def _random_results(rng):
    """A few routes with random brackets: exact, bracketed, upper-only and lower-only answers."""
    out = {}
    for route in rng.choice(["exact", "analytic", "pld", "rdp", "generic", "zcdp", "buckets"],
                            size=int(rng.integers(1, 6)), replace=False):
        v = float(rng.uniform(0.5, 2.0))
        form = int(rng.integers(4))
        if form == 0:
            g = _exact(v)
        elif form == 1:
            g = Guarantee(epsilon=v, delta=1e-3, kind=Kind.UPPER, source=str(route), lower=v * 0.9, upper=v)
        elif form == 2:
            g = _upper(v)
        else:
            g = Guarantee(epsilon=v, delta=1e-3, kind=Kind.LOWER, source=str(route))
        out[str(route)] = g
    return out


def test_one_rule_for_the_page_and_the_command_line():
    """The page's summary and the CLI's (route, guarantee) are one function's answer, and the rule
    holds on 300 drawn sets of routes: the upper is the smallest upper nobody contradicts, the lower
    comes only from a route proving one, and a clash leaves both bounds out and says so."""
    import numpy as np

    from dpviz.mechanisms.headline import disagree, proves_lower
    from dpviz.views import mechanisms as mv

    rng = np.random.default_rng(19)
    for _ in range(300):
        results = _random_results(rng)
        key, g = routes.best(results)
        page = mv.best(results)
        assert page["upper"] == (g.upper if g.status is Status.OK else None)
        assert page["upper_route"] == (key if g.status is Status.OK else None)
        assert page["lower"] == (g.lower if g.status is Status.OK else None)
        lowers = {r: x.lower for r, x in results.items() if proves_lower(r, x)}
        uppers = {r: x.upper for r, x in results.items() if x.kind is not Kind.LOWER}
        clash = {(a, b) for a, lo in lowers.items() for b, up in uppers.items()
                 if a != b and disagree(lo, up)}
        trusted = {b: up for b, up in uppers.items() if b not in {b for _, b in clash}}
        if not trusted:
            assert g.status is Status.NOT_COMPUTED
            continue
        assert g.upper == min(trusted.values())
        kept = [lo for a, lo in lowers.items() if a not in {a for a, _ in clash}]
        assert g.lower == (min(max(kept), g.upper) if kept else None)
        assert ("routes disagree" in g.note) == bool(clash)
        assert g.kind is (Kind.EXACT if kept and g.lower == g.upper and not clash else Kind.UPPER)
