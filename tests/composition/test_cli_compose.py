"""``python -m dpviz compose``: JSON for every method, exit 2 with one stderr line on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpviz.cli import main
from dpviz.composition import METHODS
from tests import oracles as ref

ROOT = Path(__file__).resolve().parents[2]
KEYS = set(METHODS)


def _no_nan(token: str) -> float:
    raise AssertionError(f"non-JSON number {token} in output")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "dpviz", "compose", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def _check_shape(out: dict) -> None:
    assert set(out) == KEYS
    for key, g in out.items():
        assert {"epsilon", "delta", "kind", "source"} <= set(g), key
        if g["kind"] == "infeasible":
            assert g["epsilon"] is None and g["delta"] is None and g["reason"], key
        else:
            assert isinstance(g["epsilon"], float) and isinstance(g["delta"], float), key


# --- Through a real subprocess -----------------------------------------------------------

def test_subprocess_delta_mode_values() -> None:
    proc = _run("--eps0", "0.1", "--delta0", "1e-6", "--k", "30", "--delta", "1e-3")
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout, parse_constant=_no_nan)
    _check_shape(out)
    mechs = [(0.1, 1e-6, 30)]
    assert out["basic"]["epsilon"] == pytest.approx(3.0, rel=1e-15)  # Σε = 30·0.1
    assert out["basic"]["delta"] == pytest.approx(3e-5, rel=1e-12)  # Σδ, float sum
    assert out["advanced"]["epsilon"] == pytest.approx(ref.advanced_epsilon(mechs, 1e-3), rel=1e-12)
    assert out["kov"]["epsilon"] == pytest.approx(ref.kov_epsilon(mechs, 1e-3), rel=1e-10)  # δ~ in float
    eps = out["optimal"]["epsilon"]
    assert out["optimal"]["kind"] == "exact"
    # Sound and tight against the 30-digit reference. "exact" means equal up to floating
    # point: the code's own δ(ε) ≤ target holds, but its δ has ~1e-15 relative error and
    # mpmath finds δ(ε) = 1e-3·(1 + 1.3e-15) here, so soundness is checked to 1e-12.
    assert ref.mp_delta_opt(k=30, eps0=0.1, delta0=1e-6, eps=eps) <= 1e-3 * (1 + 1e-12)
    assert ref.mp_delta_opt(k=30, eps0=0.1, delta0=1e-6, eps=eps * (1 - 1e-9)) > 1e-3
    # zCDP: ρ = 30·0.1²/2 (Prop. 16, Thm 18), Thm 22 spends Σδ_l = 30·1e-6 of the target
    assert out["zcdp"]["delta"] <= 1e-3
    ref.assert_sound_and_tight(out["zcdp"]["epsilon"], ref.mp_zcdp_epsilon(30 * 0.1**2 / 2, 1e-3 - 30e-6))
    assert eps <= out["zcdp"]["epsilon"] <= out["advanced"]["epsilon"]


def test_subprocess_infeasible_gives_null_and_reason() -> None:
    proc = _run("--eps0", "0.1", "--delta0", "1e-6", "--k", "30", "--delta", "1e-5")
    assert proc.returncode == 0
    out = json.loads(proc.stdout, parse_constant=_no_nan)
    _check_shape(out)
    assert {k for k, g in out.items() if g["kind"] == "infeasible"} == KEYS  # 1e-5 < 1 − (1 − 1e-6)^30


def test_subprocess_epsilon_mode() -> None:
    proc = _run("--eps0", "0.1", "--k", "30", "--epsilon", "1")
    assert proc.returncode == 0
    out = json.loads(proc.stdout, parse_constant=_no_nan)
    _check_shape(out)
    assert out["basic"]["kind"] == "infeasible"  # ε = 1 < kε0 = 3
    want = float(ref.mp_delta_opt(k=30, eps0=0.1, delta0=0.0, eps=1.0))
    assert out["optimal"]["delta"] == pytest.approx(want, rel=1e-12)  # k = 30: ~1e-15 observed
    for key in ("advanced", "kov", "zcdp"):
        assert out[key]["delta"] >= out["optimal"]["delta"]
    ref.assert_sound_and_tight(out["zcdp"]["delta"], ref.mp_zcdp_delta(30 * 0.1**2 / 2, 1.0))  # Prop. 16, 14


def test_subprocess_levels() -> None:
    proc = _run("--levels", "0.1:1e-6:30,0.5:0:10", "--delta", "1e-3")
    assert proc.returncode == 0
    out = json.loads(proc.stdout, parse_constant=_no_nan)
    _check_shape(out)
    assert (out["basic"]["epsilon"], out["basic"]["delta"]) == pytest.approx((8.0, 3e-5), rel=1e-12)
    mechs = [(0.1, 1e-6, 30), (0.5, 0.0, 10)]
    assert out["kov"]["source"] == "KOV Thm 3.5"
    assert out["kov"]["epsilon"] == pytest.approx(ref.kov_epsilon(mechs, 1e-3), rel=1e-10)
    assert out["advanced"]["epsilon"] == pytest.approx(ref.advanced_epsilon(mechs, 1e-3), rel=1e-12)
    assert out["optimal"]["epsilon"] <= min(out[k]["epsilon"] for k in KEYS - {"optimal"})
    # ρ = 30·0.1²/2 + 10·0.5²/2 (Thm 18), δ′ = 1e-3 − Σδ_l (Thm 22)
    rho = 30 * 0.1**2 / 2 + 10 * 0.5**2 / 2
    ref.assert_sound_and_tight(out["zcdp"]["epsilon"], ref.mp_zcdp_epsilon(rho, 1e-3 - 30e-6))


def test_subprocess_bad_argument_one_line() -> None:
    proc = _run("--eps0", "-1", "--k", "3", "--delta", "1e-5")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "eps0" in proc.stderr and "[0, 100]" in proc.stderr


# --- Through dpviz.cli.main, in process ------------------------------------------------

def _main(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main(["compose", *args])
    except SystemExit as exc:  # argparse usage errors exit from inside parse_args
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_main_delta_mode(capsys) -> None:
    code, out, err = _main(capsys, "--eps0", "0.5", "--k", "10", "--delta", "1e-5")
    assert code == 0 and err == ""
    parsed = json.loads(out, parse_constant=_no_nan)
    _check_shape(parsed)
    assert parsed["basic"]["epsilon"] == pytest.approx(5.0, rel=1e-15)  # 10·0.5


def test_main_extreme_values_are_json(capsys) -> None:
    """ε0 = 100 (answer above e^709), δ = 1e-300: valid JSON, no NaN/Infinity."""
    code, out, _ = _main(capsys, "--eps0", "100", "--k", "10", "--delta", "1e-300")
    assert code == 0
    _check_shape(json.loads(out, parse_constant=_no_nan))


BAD_ARGS = [
    pytest.param(["--eps0", "-1", "--k", "3", "--delta", "1e-5"], "eps0", id="negative-eps0"),
    pytest.param(["--eps0", "abc", "--k", "3", "--delta", "1e-5"], "eps0", id="eps0-abc"),
    pytest.param(["--eps0", "nan", "--k", "3", "--delta", "1e-5"], "eps0", id="eps0-nan"),
    pytest.param(["--eps0", "0.1", "--k", "0", "--delta", "1e-5"], "k", id="k-zero"),
    pytest.param(["--eps0", "0.1", "--k", "1e9", "--delta", "1e-5"], "k", id="k-absurd"),
    pytest.param(["--eps0", "0.1", "--k", "3", "--delta0", "1", "--delta", "1e-5"], "delta0",
                 id="delta0-one"),
    pytest.param(["--eps0", "0.1", "--k", "3", "--delta", "1"], "delta", id="delta-one"),
    pytest.param(["--eps0", "0.1", "--k", "3", "--delta", "-0.1"], "delta", id="delta-negative"),
    pytest.param(["--eps0", "0.1", "--k", "3", "--epsilon", "-1"], "epsilon", id="epsilon-negative"),
    pytest.param(["--eps0", "0.1", "--k", "3"], "--delta", id="no-target"),
    pytest.param(["--eps0", "0.1", "--k", "3", "--delta", "1e-5", "--epsilon", "1"], "--epsilon",
                 id="both-targets"),
    pytest.param(["--eps0", "0.1", "--delta", "1e-5"], "k", id="missing-k"),
    pytest.param(["--levels", "abc", "--delta", "1e-5"], "levels", id="levels-abc"),
    pytest.param(["--levels", "0.1:0:0", "--delta", "1e-5"], "k", id="levels-count-zero"),
    pytest.param(["--levels", "0.1:0:3", "--eps0", "0.1", "--delta", "1e-5"], "levels", id="levels-and-eps0"),
    # (too many atoms for the exact sum is not a bad argument: test_validation checks that
    # optimal then says so while the closed forms still answer)
]


@pytest.mark.parametrize(("args", "names"), BAD_ARGS)
def test_main_bad_arguments(capsys, args: list[str], names: str) -> None:
    code, out, err = _main(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert names in err, err
