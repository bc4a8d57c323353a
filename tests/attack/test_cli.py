"""``python -m dpviz attack``: one JSON object, reproducible by seed; bad input exits 2 with one
line naming the field (trials above the maximum included)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpviz.attack import KINDS, MAX_STEP_DRAWS, MAX_TRIALS
from dpviz.cli import main

FLAGS = {"canonical": ["--eps0", "0.5"], "randomized-response": ["--eps0", "0.5"],
         "laplace": ["--scale", "2"], "gaussian": ["--sigma", "2"]}
COMMON = ["--k", "5", "--trials", "2000", "--seed", "1", "--delta", "1e-3"]


def _run(capsys, *argv):
    code = main(["attack", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_attack_kind_is_a_subcommand():
    assert set(FLAGS) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(FLAGS))
def test_answer_has_the_contract_keys(capsys, kind):
    code, out, err = _run(capsys, kind, *FLAGS[kind], *COMMON)
    data = json.loads(out)
    assert code == 0 and not err
    assert {"empirical_epsilon", "proven_epsilon", "trials", "seconds", "ratio", "confidence"} <= set(data)
    assert data["trials"] == 2000 and data["confidence"] == 0.95
    assert 0 <= data["empirical_epsilon"] <= data["proven_epsilon"]
    assert data["ratio"] == pytest.approx(data["empirical_epsilon"] / data["proven_epsilon"])


def test_same_seed_same_answer(capsys):
    one = json.loads(_run(capsys, "gaussian", "--sigma", "1", *COMMON)[1])
    two = json.loads(_run(capsys, "gaussian", "--sigma", "1", *COMMON)[1])
    for d in (one, two):
        d.pop("seconds")
        d["sampling"].pop("seconds")
        d["proven"].pop("seconds", None)
    assert one == two


def test_subsampled_gaussian_and_confidence(capsys):
    code, out, _ = _run(capsys, "gaussian", "--sigma", "1", "--sampling-rate", "0.2", "--confidence", "0.99",
                        *COMMON)
    data = json.loads(out)
    assert code == 0 and data["setting"]["sampling_rate"] == 0.2 and data["confidence"] == 0.99
    # the binned post-processing's composed law, one draw per trial (docs/MATH.md §14.5)
    assert data["sampling"]["per_step"] is False and 0 < data["sampling"]["law_error"] < 1e-6


@pytest.mark.parametrize("argv,field", [
    (["gaussian", "--sigma", "1", "--k", "5", "--trials", str(MAX_TRIALS + 1), "--seed", "1",
      "--delta", "0.1"], "trials"),
    # mass at +∞ (δ0 > 0) keeps the per-step sampler, and its cap, for a subsampled canonical pair
    (["canonical", "--eps0", "1", "--delta0", "0.01", "--sampling-rate", "0.1", "--k", "1000", "--trials",
      str(MAX_STEP_DRAWS // 1000 + 1), "--seed", "1", "--delta", "0.1"], "trials"),
    (["gaussian", "--sigma", "-1", *COMMON], "sigma"),
    (["canonical", "--eps0", "0.5", "--k", "0", "--trials", "1000", "--seed", "1", "--delta", "0.1"], "k"),
    (["canonical", "--eps0", "0.5", *COMMON, "--confidence", "1"], "confidence"),
    (["canonical", "--eps0", "0.5", "--k", "3", "--trials", "1000", "--seed", "1", "--delta", "1"], "delta"),
    (["canonical", "--eps0", "0.5", "--delta0", "0.1", *COMMON, "--prior", "uniform"], "prior"),
    (["laplace", "--scale", "1", *COMMON, "--prior", "everyone"], "prior"),
    (["gaussian", "--sigma", "1", *COMMON[:-2], "--delta", "nan"], "delta"),
])
def test_bad_input_exits_2_with_one_line_naming_the_field(capsys, argv, field):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and not out
    assert err.count("\n") == 1 and f"error: {field} must be" in err, err


def test_missing_flag_exits_2_in_a_real_process():
    proc = subprocess.run([sys.executable, "-m", "dpviz", "attack", "gaussian", "--sigma", "1", "--k", "3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--trials" in proc.stderr


def test_no_false_alarm_seen_is_valid_json(capsys):
    """Randomized response ε0 = 1, k = 10: the best threshold on the first half sees no false alarm,
    so its point estimate is unbounded; the CLI printed a traceback (``inf`` is not JSON) and now
    prints null there, the certified ε stays finite. (Seed 13: one of the seeds that sees no false
    alarm since the finite laws' counts are drawn category by category, issue 20; seed 1 before.)"""
    code, out, err = _run(capsys, "randomized-response", "--eps0", "1", "--k", "10", "--trials", "100000",
                          "--seed", "13", "--delta", "1e-5")
    data = json.loads(out)
    assert code == 0 and not err
    assert data["certificate"]["false_alarms"] == 0 and data["certificate"]["point_estimate_epsilon"] is None
    assert 0 < data["empirical_epsilon"] <= data["proven_epsilon"]


def test_certified_above_proven_is_flagged_as_chance(capsys):
    """At confidence 0.5 the certificate may be wrong half the time: seed 8 here certifies more
    than the exact ε (the CLI fuzzer found the case with seed 3; the finite laws' counts are drawn
    category by category since issue 20, and seed 8 is a seed that shows it now). The answer says
    so instead of hiding it."""
    argv = ["canonical", "--eps0", "1", "--k", "2", "--trials", "171", "--seed", "8", "--delta", "0.1",
            "--confidence", "0.5"]
    data = json.loads(_run(capsys, *argv)[1])
    assert data["proven"]["kind"] == "exact"
    assert data["empirical_epsilon"] > data["proven_epsilon"] and data["exceeds_proven"] is True
    assert "1 − confidence = 0.5" in data["note"]


@pytest.mark.parametrize("kind", sorted(FLAGS))
def test_no_flag_when_below_proven(capsys, kind):
    data = json.loads(_run(capsys, kind, *FLAGS[kind], *COMMON)[1])
    assert data["exceeds_proven"] is False and "note" not in data
