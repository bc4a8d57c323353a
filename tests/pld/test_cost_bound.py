"""``cost.bound`` is an upper bound of ``cost.cost`` (seconds and bytes), so ``cost.check`` decides
and refuses exactly as ``budgets.check(cost(...))`` does while skipping the discretisations where the
bound is within the budget (the add direction's grid at h of q = 9.8e-4, σ = 8.65, 6,263 steps)."""

from __future__ import annotations

import pytest

from dpviz import budget as budgets
from dpviz.mechanisms import gaussian, laplace
from dpviz.mechanisms import randomized_response as rr
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import cost as pld_cost
from dpviz.pld import refine
from dpviz.validation import ParameterError

LAWS = [
    [(subsample_remove(gaussian.loss_law(sigma=8.648), rate=0.00098), 6263)],
    [(subsample_remove(gaussian.loss_law(sigma=2.683), rate=0.00087), 6458)],
    [(subsample_remove(gaussian.loss_law(sigma=0.7), rate=0.01), 300)],
    [(gaussian.loss_law(sigma=1.0), 50)],
    [(subsample_remove(laplace.loss_law(scale=2.0), rate=0.1), 1000)],
    [(rr.loss_law(eps0=0.5), 20), (subsample_remove(gaussian.loss_law(sigma=3.0), rate=0.05), 100)],
]

BUDGETS = [None, budgets.PAGE, budgets.Budget(seconds=1e-3, max_bytes=float(1 << 40)),
           budgets.Budget(seconds=1e3, max_bytes=float(1 << 22)), budgets.Budget(seconds=0.02, max_bytes=1e7)]


@pytest.mark.parametrize("parts", LAWS)
@pytest.mark.parametrize("h", [3e-2, 1e-3, 2.5e-4, 4e-5, 1e-5, 3.7e-6, 2.46e-6])
def test_bound_is_above_the_estimate_and_check_decides_alike(parts, h):
    tail = 1e-16
    try:
        exact = pld_cost.cost(parts, h=h, tail=tail)
    except ParameterError as exc:  # too many bins: refused the same way
        with pytest.raises(ParameterError, match=str(exc.field)):
            pld_cost.bound(parts, h=h, tail=tail)
        return
    upper = pld_cost.bound(parts, h=h, tail=tail)
    assert upper.seconds >= exact.seconds and upper.bytes >= exact.bytes
    for b in BUDGETS:
        try:
            budgets.check(exact, b)
            refused = None
        except budgets.OverBudget as exc:
            refused = str(exc)
        if refused is None:
            pld_cost.check(parts, h=h, tail=tail, budget=b)
        else:
            with pytest.raises(budgets.OverBudget) as caught:
                pld_cost.check(parts, h=h, tail=tail, budget=b)
            assert str(caught.value) == refused  # the exact estimate's refusal, word for word


def test_prediction_skips_the_other_directions_grid_at_h(monkeypatch):
    """At the CLI's budget the estimate's grid at h is no longer discretised for the add direction
    (only ``_stageable`` discretises the dominant one there, for its bin count)."""
    law = subsample_remove(gaussian.loss_law(sigma=8.648), rate=0.00098)
    pld_cost.coarse_grid.cache_clear()
    pld_cost._cost.cache_clear()
    widths: list[tuple[str, float]] = []
    orig = pld_cost.coarse_grid

    def counting(law_, h, tail):
        widths.append((law_.name, h))
        return orig(law_, h, tail)

    monkeypatch.setattr(pld_cost, "coarse_grid", counting)
    c = refine.composition([(law, 6263)], delta=9.8e-10)
    at_h = [name for name, w in widths if w == c.h]
    assert at_h == [law.name]
