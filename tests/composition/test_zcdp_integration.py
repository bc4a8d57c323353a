"""zCDP wherever METHODS is iterated (issue 12 item 1): the compose CLI, the curves view, the planner
and the regions (intersection over δ′). Each checks the number against the method itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpviz.cli import main
from dpviz.composition import METHODS, homogeneous, parse_levels, zcdp
from dpviz.planner import composition as planner
from dpviz.regions.methods import method_region
from dpviz.views import curves


def test_compose_cli_prints_zcdp_with_its_conversion(capsys) -> None:
    assert main(["compose", "--eps0", "0.1", "--delta0", "0", "--k", "100", "--delta", "1e-6"]) == 0
    out = json.loads(capsys.readouterr().out)["zcdp"]
    assert out["kind"] == "upper" and "Prop. 14 conversion" in out["source"] and "Thm 13/18" in out["source"]
    levels = homogeneous(k=100, eps0=0.1, delta0=0.0)
    assert out["epsilon"] == zcdp.epsilon_for_delta(levels, delta=1e-6).epsilon


def test_compose_cli_levels_and_impossible(capsys) -> None:
    assert main(["compose", "--levels", "0.1:1e-6:30,0.5:0:10", "--delta", "1e-4"]) == 0
    out = json.loads(capsys.readouterr().out)["zcdp"]
    assert "Thm 22" in out["source"] and out["delta"] == 1e-4
    assert main(["compose", "--levels", "0.1:1e-3:30", "--delta", "1e-4"]) == 0
    out = json.loads(capsys.readouterr().out)["zcdp"]
    assert out["kind"] == "infeasible" and out["status"] == "impossible" and "Σδ_l" in out["reason"]


def test_curves_view_has_a_zcdp_series() -> None:
    series = curves.epsilon_series(eps0=0.1, delta0=0.0, delta=1e-6, k_max=200)
    ys = np.asarray(series.y["zcdp"], dtype=float)
    xs = np.asarray(series.x)
    i = int(np.flatnonzero(xs == 100)[0]) if 100 in xs else len(xs) - 1
    k = int(xs[i])
    want = zcdp.epsilon_for_delta(homogeneous(k=k, eps0=0.1, delta0=0.0), delta=1e-6).epsilon
    assert ys[i] == pytest.approx(want, rel=1e-12)
    assert np.all(ys <= np.asarray(series.y["advanced"], dtype=float) * (1 + 1e-12))


def test_planner_plans_zcdp() -> None:
    """The largest ε0 per step for k = 100 within (ε, δ) = (1, 1e-6): the zCDP plan's ε0 fits by the
    method itself and a slightly larger one does not."""
    plans = planner.max_eps0(k=100, epsilon=1.0, delta=1e-6)
    assert "zcdp" in plans
    e0 = plans["zcdp"].value
    assert e0 is not None
    fits = zcdp.epsilon_for_delta(homogeneous(k=100, eps0=e0, delta0=0.0), delta=1e-6).epsilon
    assert fits is not None and fits <= 1.0
    over = zcdp.epsilon_for_delta(homogeneous(k=100, eps0=e0 * (1 + 1e-6), delta0=0.0), delta=1e-6).epsilon
    assert over is not None and over > 1.0
    assert plans["zcdp"].value >= plans["advanced"].value  # type: ignore[operator]


@pytest.mark.parametrize("levels", [homogeneous(k=30, eps0=0.1, delta0=1e-3),
                                    parse_levels("0.1:1e-6:30,0.5:0:10")])
def test_region_is_inside_every_zcdp_guarantee(levels) -> None:
    """Every (ε(δ′), Σδ_l + δ′) of the method holds on the drawn region: its lower boundary is on or
    above each guarantee's line P_MD ≥ 1 − δ − e^ε P_FA (within the region's 1e-4 promise: a superset)."""
    region = method_region("zcdp", levels)
    xs = np.linspace(0.0, 1.0, 201)
    ys = np.asarray(region(xs), dtype=float)
    for s in (1e-12, 1e-6, 1e-3, 0.1):
        e, d = zcdp.epsilon_at_slack(levels, slack=s), zcdp.total_delta(levels, s)
        line = np.maximum(0.0, np.maximum(1 - d - np.exp(e) * xs, np.exp(-e) * (1 - d - xs)))
        assert np.all(ys >= line - 1e-4 - 1e-12)
    assert METHODS["zcdp"].label == "zCDP (Steinke Thm 18/22)"
