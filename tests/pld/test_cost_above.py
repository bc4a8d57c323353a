"""``cost.cost_above`` answers exactly what ``cost(...).seconds > limit`` does (its lower bound only
skips discretisations, never changes a refinement decision), and the refinement no longer
discretises for the estimate of a width it rejects (q = 8.7e-4, σ = 2.68, 6,458 steps, δ = 5.1e-12:
h/4 and h/2 after the last grid were each discretised only to be found too dear)."""

from __future__ import annotations

import pytest

from dpviz.mechanisms import gaussian, laplace
from dpviz.mechanisms import randomized_response as rr
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import cost as pld_cost
from dpviz.pld import refine
from dpviz.validation import ParameterError

LAWS = [
    [(subsample_remove(gaussian.loss_law(sigma=2.683), rate=0.00087), 6458)],
    [(subsample_remove(gaussian.loss_law(sigma=0.7), rate=0.01), 300)],
    [(gaussian.loss_law(sigma=1.0), 50)],
    [(subsample_remove(laplace.loss_law(scale=2.0), rate=0.1), 1000)],
    [(rr.loss_law(eps0=0.5), 20), (subsample_remove(gaussian.loss_law(sigma=3.0), rate=0.05), 100)],
]


@pytest.mark.parametrize("parts", LAWS)
@pytest.mark.parametrize("h", [3e-2, 1e-3, 2.5e-4, 4e-5, 1e-5, 2.46e-6])
@pytest.mark.parametrize("limit", [1e-4, 0.015, 0.03, 0.5])
def test_cost_above_agrees_with_cost(parts, h, limit):
    tail = 1e-16
    try:
        expected = pld_cost.cost(parts, h=h, tail=tail).seconds > limit
    except ParameterError as exc:  # too many bins: refused the same way
        with pytest.raises(ParameterError, match=str(exc.field)):
            pld_cost.cost_above(parts, limit, h=h, tail=tail)
        return
    assert pld_cost.cost_above(parts, limit, h=h, tail=tail) == expected


def test_refinement_skips_discretising_rejected_widths(monkeypatch):
    law = subsample_remove(gaussian.loss_law(sigma=2.683), rate=0.00087)
    pld_cost.coarse_grid.cache_clear()
    pld_cost._cost.cache_clear()  # a cost estimate kept from another test would skip its discretisations
    widths: list[float] = []
    orig = pld_cost.coarse_grid

    def counting(law_, h, tail):
        widths.append(h)
        return orig(law_, h, tail)

    monkeypatch.setattr(pld_cost, "coarse_grid", counting)
    c = refine.composition([(law, 6458)], delta=5.1e-12)
    assert widths  # the estimates did discretise (nothing was kept from before)
    assert min(widths) >= c.h  # the old rule discretised at c.h/4 and c.h/2 for their estimates
