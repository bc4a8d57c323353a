"""The pilot width of a δ-at-ε refinement (``dpviz.pld.pilot.pilot_h``): a law spread over
thousands of loss units starts at 1/``PILOT_CELLS`` of its support instead of ``PILOT_H``, and its
certified interval still holds the enumerated δ, within the accuracy, on a grid a tenth the size
(issue 20: a discrete Gaussian at Δ/σ = 96 spent 0.95 s of a Mechanisms change on a 184,000-cell
pilot for an interval 10⁴ times narrower than asked)."""

from __future__ import annotations

import math
import re

import pytest

from dpviz.mechanisms import discrete_gaussian, gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import accountant, pilot, refine
from tests.pld.test_stride import _exact_delta


def _bins(detail: str | None) -> int:
    found = re.search(r"([\d,]+) bins", detail or "")
    assert found, detail
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize(("sensitivity", "rate", "k", "eps"), [(48, 0.1, 3, 1.25), (24, 0.3, 2, 0.3)])
def test_a_widely_spread_law_starts_coarse_and_holds_the_enumerated_delta(monkeypatch, sensitivity, rate,
                                                                          k, eps) -> None:
    law = subsample_remove(discrete_gaussian.loss_law(sigma=0.5, sensitivity=sensitivity), rate=rate)
    lo, hi = law.support(1e-12)
    assert pilot.pilot_h([(law, k)]) == pytest.approx((hi - lo) / pilot.PILOT_CELLS)
    assert pilot.pilot_h([(law, k)]) > 5 * pilot.PILOT_H
    exact = _exact_delta(law, k, eps)
    g = accountant.delta_bounds([(law, k)], epsilon=eps)
    assert g.lower <= exact * (1 + 1e-9) and exact <= g.upper * (1 + 1e-9)
    assert g.upper - g.lower <= refine.DEFAULT_ACCURACY * g.upper
    monkeypatch.setattr(pilot, "PILOT_CELLS", math.inf)  # PILOT_H alone, as before
    old = accountant.delta_bounds([(law, k)], epsilon=eps)
    if old.lower is None:  # the fine pilot did not even fit (more cells than a grid may have)
        assert "bins" in (old.reason or "") or "budget" in (old.reason or ""), old.reason
        return
    assert old.lower <= exact * (1 + 1e-9) and exact <= old.upper * (1 + 1e-9)
    assert _bins(g.detail) * 5 < _bins(old.detail)


def test_a_narrow_law_keeps_the_pilot_it_had() -> None:
    """The Gaussian mechanism (losses within ±8 at tail 1e-12 for σ = 1): PILOT_H, as before."""
    law = gaussian.loss_law(sigma=1.0)
    lo, hi = law.support(1e-12)
    assert (hi - lo) / pilot.PILOT_CELLS < pilot.PILOT_H
    assert pilot.pilot_h([(law, 100)]) == pilot.PILOT_H
