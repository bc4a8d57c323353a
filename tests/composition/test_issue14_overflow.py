"""Issue 14: KOV's slack overflowed once Σ count·(−ln(1 − δ_i)) passed ~710; inputs that round
to 0 were read as 0. Each reproducer runs through ``dpviz.cli.main`` and is judged by the fuzz
harness (no exception, strict JSON, consistent); the floor is checked against mpmath."""

from __future__ import annotations

import json
import math

import mpmath as mp
import pytest

from dpviz.composition import homogeneous, kov, parse_levels
from dpviz.composition.levels import describe_floor, log_no_delta
from tests.fuzz.harness import check

REPRODUCERS = (  # the commands, verbatim
    "compose --eps0 0.1 --delta0 0.001 --k 1000000 --delta 1e-5",
    "compose --levels 0.1:0.5:1100,0.2:0:1 --delta 0.1",
    "compose --eps0 29.2967 --delta0 6.089843e-02 --k 91799 --delta 0.7764285064778446",
    "gce --eps0 20.68746 --delta0 0.818836 --k 1087 --delta 0.5 --cap 10000000",
)


def _gap_log10(rows: list[tuple[float, int]]) -> mp.mpf:
    """log10 Π(1 − δ_i)^count in 50-digit arithmetic: the floor is 1 − 10^this."""
    mp.mp.dps = 50
    return mp.fsum(c * mp.log10(1 - mp.mpf(d)) for d, c in rows)


@pytest.mark.parametrize("command", REPRODUCERS)
def test_reproducer_answers_with_infeasible_kov(command: str) -> None:
    o = check(command.split(), timeout=60)
    assert o.problems == [] and o.code == 0, o.problems
    out = json.loads(o.stdout)
    kov_entry = out["kov"] if "kov" in out else out["cap_kov"]
    assert kov_entry["kind"] == "infeasible"
    assert "needs δ ≥ 1 − Π(1 − δ_i) = 1 − " in kov_entry["reason"]  # not "= 1" and not a crash


def test_floor_is_printed_as_one_minus_the_true_gap() -> None:
    levels = homogeneous(k=1_000_000, eps0=0.1, delta0=0.001)
    g = kov.epsilon_for_delta(levels, delta=1e-5)
    exponent = _gap_log10([(0.001, 1_000_000)])  # ≈ −434.51
    e = int(mp.floor(exponent))
    mantissa = float(mp.power(10, exponent - e))
    assert g.reason.endswith(f"1 − {mantissa:.3g}e{e}"), g.reason


def test_heterogeneous_floor_matches_mpmath() -> None:
    levels = parse_levels("0.1:0.5:1100,0.2:0:1")
    text = describe_floor(log_no_delta(levels))
    exponent = _gap_log10([(0.5, 1100)])  # 1100·log10(1/2) ≈ −331.1
    e = int(mp.floor(exponent))
    assert text == f"1 − {float(mp.power(10, exponent - e)):.3g}e{e}"


def test_slack_below_the_floor_is_minus_infinity_not_an_overflow() -> None:
    levels = homogeneous(k=1_000_000, eps0=0.1, delta0=0.001)
    assert kov.slack_for_delta(levels, 1e-5) == -math.inf
    # where it is representable the slack is unchanged: δ~ = 1 − (1 − δ)/(1 − δ0)^k
    small = homogeneous(k=10, eps0=0.1, delta0=1e-3)
    expected = 1 - (1 - mp.mpf("0.05")) / (1 - mp.mpf("1e-3")) ** 10
    assert kov.slack_for_delta(small, 0.05) == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("log_free, text", [
    (-0.001, "0.0009995"), (-math.log(2.0), "0.5"), (-1000.0, "1 − 5.08e-435"),
    (-100 * math.log(10.0), "1 − 1e-100"),
])
def test_describe_floor(log_free: float, text: str) -> None:
    assert describe_floor(log_free) == text


@pytest.mark.parametrize("flag", ["--delta", "--eps0", "--delta0"])
def test_values_that_round_to_zero_are_refused_naming_the_field(flag: str) -> None:
    argv = {"--delta": "1e-5", "--eps0": "1", "--delta0": "0"}
    argv[flag] = "1e-400"
    o = check(["compose", "--k", "10", *[x for kv in argv.items() for x in kv]])
    assert o.code == 2 and o.problems == []
    assert f"{flag[2:]} must be" in o.stderr and "rounds to 0" in o.stderr
