"""Rows without a value say why (impossible / not computed), and the noise search stays inside the
mechanism's allowed range (issue 9: the discrete Gaussian at k = 10^6 asked for σ > 1000)."""

from __future__ import annotations

import json
import subprocess
import sys

from dpviz.guarantee import Status
from dpviz.planner import calibration, noise
from dpviz.planner import composition as pc
from dpviz.planner.result import Plan
from dpviz.views import planner as pv


def test_eps0_rows_show_impossible_not_infeasible() -> None:
    plans = pc.max_eps0(k=1000, epsilon=1.0, delta=1e-5, delta0=1e-6)
    rows = pv.eps0_rows(plans, sensitivity=1.0)
    assert rows and all(r["kind"] == "impossible" for r in rows)
    view_csv = [p.status.value for p in plans.values()]
    assert set(view_csv) == {"impossible"}


def test_gce_row_with_a_bad_prior_shows_not_computed() -> None:
    plans = pv.gce_plans(epsilon=1.0, delta=1e-5, k=3, delta0=0.0, cap=1, prior="at-least:9")
    rows = pv.gce_rows(plans, prior="at-least:9")
    assert [r["kind"] for r in rows] == ["not computed"]


def test_feasible_rows_keep_their_kind() -> None:
    rows = pv.eps0_rows(pc.max_eps0(k=100, epsilon=1.0, delta=1e-5), sensitivity=1.0)
    assert {r["kind"] for r in rows} <= {"exact", "upper", "lower"}


def test_discrete_gaussian_beyond_its_sigma_range_is_a_reason_row() -> None:
    """σ needed ≈ 3,730 > 1,000 (the discrete Gaussian's largest σ): no validation error."""
    p = noise.smallest_noise("discrete-gaussian", k=100, epsilon=1.0, delta=1e-5, sensitivity=100)
    assert p.value is None and p.status is Status.NOT_COMPUTED
    assert "sigma = 1000" in (p.reason or "") and "outside its range" in (p.reason or "")
    assert p.check.epsilon is not None and p.check.epsilon > 1.0  # the largest σ checked, too little
    j = p.to_json()
    assert j["sigma"] is None and j["status"] == "not_computed"
    row = pv.noise_rows({"discrete-gaussian": p}, sensitivity=100.0)[0]
    assert row["answer"].endswith("(not computed)") and "outside its range" in row["check"]


def test_page_defaults_at_a_million_releases_answer_every_noise_row() -> None:
    plans = pv.noise_plans(epsilon=1.0, delta=1e-5, k=10**6, sensitivity=1.0, sampling_rate=1.0)
    dg = plans["discrete-gaussian"]
    assert not isinstance(dg, str), dg  # a plan with a reason, not a validation message
    assert dg.value is None and dg.status is Status.NOT_COMPUTED and "sigma = 1000" in (dg.reason or "")
    assert isinstance(plans["gaussian"], Plan) and plans["gaussian"].feasible


def test_discrete_gaussian_inside_its_range_still_answers() -> None:
    p = noise.smallest_noise("discrete-gaussian", k=100, epsilon=1.0, delta=1e-5)
    assert p.feasible and p.value is not None and p.value <= 1000.0
    assert p.check.upper is not None and p.check.upper <= 1.0


def test_cli_discrete_gaussian_out_of_range_exits_0_with_status() -> None:
    r = subprocess.run([sys.executable, "-m", "dpviz", "plan", "noise", "discrete-gaussian", "--epsilon", "1",
                        "--delta", "1e-5", "--k", "100", "--sensitivity", "100"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["sigma"] is None and out["status"] == "not_computed" and "outside its range" in out["reason"]


def test_answer_check_is_the_interval_the_search_decided_on() -> None:
    """A PLD grid chosen again for the same σ may differ (its caches depend on what ran before): in a
    fresh process the DP-SGD answer was re-checked on another grid and came back ε = 1.0000438 > 1.
    The answer's check is now the evaluation the search accepted, so it always fits."""
    code = ("from dpviz.planner import noise\n"
            "for _ in range(2):\n"
            "    p = noise.smallest_noise('gaussian', k=200, epsilon=1.0, delta=1e-5, sampling_rate=0.05)\n"
            "    assert p.feasible and p.check.upper is not None and p.check.upper <= 1.0, p.check\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_calibration_answers_a_point_asked_again_with_its_first_answer() -> None:
    _, _, _, cal = calibration._calibration("gaussian", epsilon=1.0, delta=1e-5, sensitivity=None,
                                      sampling_rate=0.05, neighbouring="add-remove", categories=None,
                                      budget=None)
    first = cal.guarantee(0.35, 200)
    assert cal.guarantee(0.35, 200) is first and cal.route == "pld"


def test_answer_moves_on_while_the_value_just_below_is_certified(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A search decided on a coarser certificate than the later one (the PLD accountant's width
    depends on what it measured) returns a σ whose σ × (1 − 1e-4) fits too: the answer walks on."""
    real = calibration.largest

    def coarse(*args, **kwargs):  # type: ignore[no-untyped-def]
        lo, hi = real(*args, **kwargs)
        return (None if lo is None else lo * (1.0 - 3.5e-4)), hi

    exact = noise.searched_noise("gaussian", k=100, epsilon=1.0, delta=1e-5)
    monkeypatch.setattr(calibration, "largest", coarse)  # the per-k search's bracket (not the μ* route)
    p = noise.searched_noise("gaussian", k=100, epsilon=1.0, delta=1e-5)
    assert p.feasible and p.check.upper is not None and p.check.upper <= 1.0
    assert p.beyond is not None and p.beyond.upper is not None and p.beyond.upper > 1.0
    assert abs(p.value - exact.value) <= 2e-4 * exact.value


def test_discrete_gaussian_is_validated_without_building_its_law(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The allowed range of σ is found by constructing the mechanism ~40 times near σ = 1000: each
    construction checks σ and Δ (the law's only checks) without building the 75,000-atom law."""
    import pytest

    from dpviz.mechanisms import discrete_gaussian as dgm
    from dpviz.mechanisms.registry import make
    from dpviz.validation import ParameterError

    def built(**kw):  # type: ignore[no-untyped-def]
        raise AssertionError("the law was built to validate")

    monkeypatch.setattr(dgm, "loss_law", built)
    assert make("discrete-gaussian", sigma=999.0, sensitivity=3).sigma == 999.0
    for bad, field in (({"sigma": 1000.5}, "sigma"), ({"sigma": 0.04}, "sigma"),
                       ({"sigma": 2.0, "sensitivity": 0}, "sensitivity"),
                       ({"sigma": 2.0, "sensitivity": 2.5}, "sensitivity")):
        with pytest.raises(ParameterError) as err:
            make("discrete-gaussian", **bad)
        assert err.value.field == field, (bad, str(err.value))
