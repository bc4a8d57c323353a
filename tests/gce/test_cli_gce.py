"""``python -m dpviz gce``: JSON keys and values, and exit status 2 with one stderr line."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from dpviz.cli import main
from dpviz.gce import paper_bounds as PB


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main(["gce", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def test_uniform_prior_keys_and_values(capsys) -> None:
    code, data, err = _run(capsys, "--eps0", "0.5", "--delta0", "1e-6", "--k", "10", "--delta", "1e-3",
                           "--prior", "uniform-nonzero")
    assert code == 0 and err == ""
    assert {"classic", "exact", "cor7", "theorem3_basic", "theorem3_optimal"} <= set(data)
    for v in data.values():
        assert {"epsilon", "delta", "directions"} <= set(v)
    c7 = PB.corollary7(k=10, eps0=0.5, delta0=1e-6)
    assert data["cor7"]["epsilon"] == c7.epsilon and data["cor7"]["delta"] == c7.delta
    assert data["exact"]["epsilon"] < data["theorem3_optimal"]["epsilon"] < data["classic"]["epsilon"]
    assert data["theorem3_optimal_common"]["delta"] == 1e-3 and data["exact"]["kind"] == "exact"
    assert data["theorem3_optimal"]["delta"] <= 1e-3  # the best split of δ: Σ w_i δ̂_i ≤ δ
    for m in PB.THEOREM3_METHODS:  # the best split is never worse than the common δ̂
        best, common = data[f"theorem3_{m}"], data[f"theorem3_{m}_common"]
        assert common["epsilon"] is None or best["epsilon"] <= common["epsilon"]


def test_at_least_prior(capsys) -> None:
    code, data, _ = _run(capsys, "--eps0", "0.5", "--k", "10", "--delta", "1e-3", "--prior", "at-least:3")
    assert code == 0 and data["exact"]["epsilon"] < data["classic"]["epsilon"]
    assert data["exact"]["directions"] == "both"


@pytest.mark.parametrize(("nb", "d"), [("unbounded", 365), ("bounded", 730)])
def test_cap(capsys, nb: str, d: int) -> None:
    code, data, _ = _run(capsys, "--eps0", "0.1", "--delta0", "1e-8", "--k", "1000", "--delta", "1e-5",
                         "--cap", "365", "--neighbouring", nb)
    assert code == 0
    assert f"with {d} of the mechanisms" in data["exact"]["source"]
    assert data["exact"]["epsilon"] < data["classic"]["epsilon"]


def test_too_large_answers_instead_of_hanging(capsys) -> None:
    """Over the budget the exact row shows the best bound proved both ways, as the upper bound
    it is, with that bound's own source and the reason (12 million count classes here, in the window
    of δ-outcomes: 1.4 GiB)."""
    code, data, _ = _run(capsys, "--eps0", "0.1", "--delta0", "1e-9", "--k", "200000", "--delta", "1e-4",
                         "--prior", "uniform-nonzero")
    assert code == 0 and data["exact"]["kind"] == "upper"
    reason = data["exact"]["reason"]
    assert "not computed" in reason and "count classes" in reason and "raise --budget" in reason
    both = [v for key, v in data.items() if key != "exact" and v["kind"] != "infeasible"
            and v["directions"] == "both" and v["delta"] <= 1e-4]
    best = min(both, key=lambda v: v["epsilon"])
    assert data["exact"]["epsilon"] == best["epsilon"] and data["exact"]["source"] == best["source"]


@pytest.mark.parametrize(("argv", "field"), [
    (["--eps0", "0.5", "--k", "0", "--delta", "1e-3", "--prior", "uniform-nonzero"], "k"),
    (["--eps0", "-1", "--k", "5", "--delta", "1e-3", "--prior", "uniform-nonzero"], "eps0"),
    (["--eps0", "0.5", "--k", "5", "--delta", "2", "--prior", "uniform-nonzero"], "delta"),
    (["--eps0", "0.5", "--k", "5", "--delta", "1e-3", "--prior", "everyone"], "prior"),
    (["--eps0", "0.5", "--k", "5", "--delta", "1e-3", "--prior", "at-least:9"], "at-least"),
    (["--eps0", "0.5", "--k", "5", "--delta", "1e-3", "--cap", "0"], "cap"),
    (["--eps0", "0.5", "--k", "5", "--delta", "1e-3", "--cap", "2", "--neighbouring", "x"], "neighbouring"),
    (["--eps0", "0.5", "--k", "5", "--delta", "1e-3"], "prior/cap"),
    (["--eps0", "0.5", "--k", "5", "--delta", "1e-3", "--cap", "2", "--prior", "uniform-nonzero"],
     "prior/cap"),
])
def test_bad_input_exit_2_one_line(capsys, argv: list[str], field: str) -> None:
    code, data, err = _run(capsys, *argv)
    assert code == 2 and data == {}
    assert err.count("\n") == 1 and field in err and err.startswith("python -m dpviz gce: error:")


def test_module_entry_point() -> None:
    proc = subprocess.run([sys.executable, "-m", "dpviz", "gce", "--eps0", "1", "--k", "3", "--delta",
                           "0.01", "--cap", "1"], capture_output=True, text=True, check=False)
    # cap 1 = one randomized response: δ(ε) = (e − e^ε)/(1 + e), so ε = ln(e − 0.01(1 + e))
    want = math.log(math.e - 0.01 * (1 + math.e))
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["exact"]["epsilon"] == pytest.approx(want, rel=1e-12)
    bad = subprocess.run([sys.executable, "-m", "dpviz", "gce", "--eps0", "1", "--k", "3"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
