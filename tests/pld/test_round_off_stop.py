"""The refinement stops before a finer grid where the tilted round-off bound already takes more than
``1 − SET_BY_H`` of the width (``refine._set_by_round_off``): that bound does not shrink with h, so
the finer grid could narrow the interval by less than the refinement's own stop asks. q = 4.4e-4,
σ = 1, 781 steps, δ at ε = 0.2 (δ ≈ 2.9e-10): the skipped grid took 0.75 s and was wider."""

from __future__ import annotations

import math

from dpviz.mechanisms import gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import accountant, refine
from tests.pld.recording import composed_widths

PARTS = [(subsample_remove(gaussian.loss_law(sigma=1.0), rate=4.373e-4), 781)]
EPSILON = 0.2


def test_no_finer_grid_where_the_tilted_round_off_sets_the_width(monkeypatch):
    monkeypatch.setattr(refine, "PREDICT_EPSILON_TARGET", False)  # the pilot's refinement is tested
    hs = composed_widths(monkeypatch)
    g = accountant.delta_bounds(PARTS, epsilon=EPSILON)
    monkeypatch.undo()
    h = float(g.detail.split("h=")[1].split(",")[0])
    assert math.isclose(min(hs), h, rel_tol=1e-2)  # nothing finer than the grid returned was composed
    assert g.lower <= g.upper

    # the grid the refinement would have stepped to (h/6, its step floor) is certified too: both
    # intervals hold δ(ε), and the finer one is not narrower by the share the stop asks for
    finer = accountant.delta_bounds(PARTS, epsilon=EPSILON, h=min(hs) * refine.STEP_FLOOR)
    assert max(g.lower, finer.lower) <= min(g.upper, finer.upper)
    assert finer.upper - finer.lower > refine.SET_BY_H * (g.upper - g.lower)


def test_refinement_continues_where_h_sets_the_width(monkeypatch):
    """Where the round-off is not most of the width (subsampled Gaussian, q = 0.0034, σ = 1, 1000
    steps, δ at ε = 1: no tilt, no round-off worth one) the refinement still steps h down."""
    law = subsample_remove(gaussian.loss_law(sigma=1.0), rate=205 / 60_000)
    monkeypatch.setattr(refine, "PREDICT_EPSILON_TARGET", False)  # the pilot's refinement is tested
    hs = composed_widths(monkeypatch)
    g = accountant.delta_bounds([(law, 1000)], epsilon=1.0)
    assert len(set(hs)) >= 3  # the pilot and two finer grids
    assert g.relative_width <= 1e-3
