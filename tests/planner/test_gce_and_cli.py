"""GCE planner and ``python -m dpviz plan`` (issue 9 CLI contract)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpviz.cli import main
from dpviz.composition import METHODS
from dpviz.gce import summary
from dpviz.planner import gce
from dpviz.planner.result import fits_state

T = ["--epsilon", "1", "--delta", "1e-5"]


@pytest.mark.parametrize("kw,fn", [
    (dict(cap=10, neighbouring="unbounded"), lambda e: summary.capped(k=60, cap=10, neighbouring="unbounded",
                                                                      eps0=e, delta0=0.0, delta=1e-5)),
    (dict(prior="at-least:5"), lambda e: summary.at_least(k=60, k2=5, eps0=e, delta0=0.0, delta=1e-5)),
])
def test_gce_rows_fit_and_next_up_does_not(kw: dict, fn) -> None:
    plans = gce.max_eps0(k=60, epsilon=1.0, delta=1e-5, **kw)
    assert {"classic", "exact"} <= set(plans)
    for key, p in plans.items():
        assert p.feasible, (key, p.reason)
        g = fn(p.value)[key]
        assert g.epsilon <= 1.0 and g.delta <= 1e-5, key
        assert fits_state(fn(p.value * (1 + 1e-9))[key], 1.0) is not True, key
    # knowing the cap (or the prior) never allows less than composing all k
    assert plans["exact"].value >= plans["classic"].value * (1 - 1e-9)


def test_gce_needs_exactly_one_of_prior_or_cap() -> None:
    with pytest.raises(Exception, match="prior/cap"):
        gce.max_eps0(k=10, epsilon=1.0, delta=1e-5)


def _run(argv: list[str], capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_eps0_contract(capsys) -> None:
    out = _run(["plan", "eps0", "--epsilon", "1", "--delta", "1e-5", "--k", "100"], capsys)
    assert list(out) == list(METHODS)
    for row in out.values():
        assert {"eps0", "delta0", "total", "kind", "source", "check", "next"} <= set(row)
        assert row["total"]["epsilon"] <= 1.0 and row["next"]["fits"] is False
    assert out["optimal"]["eps0"] == pytest.approx(0.0270592, rel=1e-5)


def test_cli_eps0_null_with_reason(capsys) -> None:
    out = _run(["plan", "eps0", *T, "--k", "1000", "--delta0", "1e-6"], capsys)
    assert all(row["eps0"] is None and row["reason"] for row in out.values())


def test_cli_k_and_levels(capsys) -> None:
    out = _run(["plan", "k", "--epsilon", "1", "--delta", "1e-5", "--eps0", "0.01"], capsys)
    assert out["basic"]["k"] == 100 and isinstance(out["optimal"]["k"], int)
    assert out["optimal"]["next"]["k"] == out["optimal"]["k"] + 1
    out = _run(["plan", "eps0", *T, "--levels", "0.1:0:10,0.2:1e-7:5"], capsys)
    assert out["basic"]["factor"] == pytest.approx(0.5)


def test_cli_noise_contract(capsys) -> None:
    out = _run(["plan", "noise", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--k", "100"], capsys)
    assert list(out)[:4] == ["sigma", "just_below", "certified_epsilon", "route"]
    assert out["certified_epsilon"] <= 1.0 and out["just_below"] < out["sigma"]
    out = _run(["plan", "noise", "randomized-response", *T, "--k", "100"], capsys)
    assert "eps0" in out and out["route"] == "exact"
    out = _run(["plan", "noise", "laplace", "--epsilon", "1", "--delta", "1e-5", "--k", "10",
                "--sensitivity", "2"], capsys)
    assert "scale" in out and out["route"] == "pld"


def test_cli_gce(capsys) -> None:
    out = _run(["plan", "gce", "--epsilon", "1", "--delta", "1e-5", "--k", "50", "--cap", "5"], capsys)
    assert out["exact"]["eps0"] > out["classic"]["eps0"]


@pytest.mark.parametrize("argv,field", [
    (["eps0", "--epsilon", "1", "--delta", "2", "--k", "10"], "delta"),
    (["eps0", "--epsilon", "1", "--delta", "1e-5"], "k/levels"),
    (["k", "--epsilon", "1", "--delta", "1e-5", "--eps0", "-1"], "eps0"),
    (["noise", "gaussian", "--epsilon", "1", "--delta", "1e-5"], "k/sigma"),
    (["noise", "gaussian", *T, "--k", "5", "--sampling-rate", "0"], "sampling-rate"),
    (["gce", "--epsilon", "1", "--delta", "1e-5", "--k", "5"], "prior/cap"),
])
def test_cli_bad_input_one_line_exit_2(argv: list[str], field: str) -> None:
    r = subprocess.run([sys.executable, "-m", "dpviz", "plan", *argv], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], r.stderr


def test_uniform_nonzero_search_over_budget_is_not_run(monkeypatch) -> None:
    """HBW Thm 3's 40 terms are not budgeted by the summary: the planner estimates each row's search
    first, and over the budget those rows say why instead of running for a minute (the page); the
    summary itself is never evaluated (each row on its own bound), and Cor. 7's closed form answers."""
    from dpviz import budget as budgets

    def forbidden(**kw):
        raise AssertionError("the whole summary must not be evaluated")

    monkeypatch.setattr(summary, "uniform_nonzero", forbidden)
    plans = gce.max_eps0(k=1_000_000, epsilon=1.0, delta=1e-5, prior="uniform-nonzero", budget=budgets.PAGE)
    assert set(plans) == set(gce.UNIFORM_NONZERO_ROWS)
    skipped = {key for key, p in plans.items() if p.check.status.name == "NOT_COMPUTED"}
    assert {"exact", "theorem3_optimal", "theorem3_optimal_common"} <= skipped
    for key in skipped:
        p = plans[key]
        assert not p.feasible and p.value is None
        assert "above the 2 s budget" in (p.reason or "") or "above the 256 MiB" in (p.reason or ""), key
    assert plans["cor7"].feasible
    # the estimate grows with k and the small cases stay within the page's budget
    costs = [gce.search_cost(k=k, prior="uniform-nonzero", eps0=1 / k**0.5, delta0=0.0).seconds
             for k in (10, 100, 10_000, 1_000_000)]
    assert costs == sorted(costs) and costs[0] <= budgets.PAGE.seconds < costs[-1]
    assert gce.search_cost(k=1_000_000, prior="at-least:5", eps0=1e-3, delta0=0.0).seconds == 0.0


def test_uniform_nonzero_rows_are_the_summary_rows() -> None:
    rows = summary.uniform_nonzero(k=3, eps0=0.5, delta0=0.0, delta=1e-5)
    assert tuple(rows) == gce.UNIFORM_NONZERO_ROWS


def test_cap_rows_are_searched_each_on_its_own_bound(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With a cap, each row's search evaluates its own bound only (``summary.capped_rows``): the
    exact optimum of the d mechanisms left is not solved at the points of the closed forms' searches,
    nor the classic optimum of all k. A summary shared by the rows solved both at every point any
    row asked (32 points, 24 ms of a δ change at k = 100, C = 10)."""
    asked: dict[str, list[float]] = {}
    rows = summary._constrained_rows

    def recording(**kw):  # type: ignore[no-untyped-def]
        def record(key, row):  # type: ignore[no-untyped-def]
            return lambda e: asked.setdefault(key, []).append(e) or row(e)
        return {key: record(key, row) for key, row in rows(**kw).items()}

    monkeypatch.setattr(summary, "_constrained_rows", recording)
    plans = gce.max_eps0(k=100, epsilon=1.0, delta=1e-5, cap=10)
    assert set(asked) == set(plans)
    for key, p in plans.items():
        assert p.value in asked[key], key  # the answer is a point its own search evaluated
    # the exact row's points are its own: the cheap rows' searches did not solve it at theirs
    assert set(asked["exact"]) != set(asked["cap_basic"])
    assert len(set(asked["exact"])) < len(set().union(*asked.values()))


def test_capped_is_its_rows_at_one_eps0() -> None:
    from dpviz.validation import ParameterError

    for kw in (dict(k=30, cap=4, neighbouring="bounded", delta0=1e-7, delta=1e-5),
               dict(k=12, cap=12, neighbouring="unbounded", delta0=0.0, delta=1e-3)):
        rows = summary.capped_rows(**kw)
        for e in (0.01, 0.3, 2.0):
            assert summary.capped(eps0=e, **kw) == {key: row(e) for key, row in rows.items()}
    with pytest.raises(ParameterError, match="eps0"):
        summary.capped(k=10, cap=2, neighbouring="unbounded", eps0=-1.0, delta0=0.0, delta=1e-5)
