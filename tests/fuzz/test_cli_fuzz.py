"""Property-based fuzz of the CLI (issue 14): generated argument sets for ``compose``, ``gce`` and each
``mechanism`` kind, run in-process through ``dpviz.cli.main`` with warnings as errors.

Properties (``tests/fuzz/harness.check``): no exception escapes; exit 0 or 2; an exit 2 is one
stderr line naming a field; an exit 0 is strict JSON (no NaN/Infinity) with nothing on stderr,
and consistent: compose's optimal ε ≤ every other method's, gce's exact ε ≤ every bound proved in
both directions, mechanism intervals lower ≤ upper across all routes.

The default run is sized for CI (~150-250 examples per subcommand), in the suite's hypothesis profile
(``tests/conftest.py``: derandomised under CI, so CI draws the same cases every run); set
``DPVIZ_FUZZ_EXAMPLES`` to scale it. No call is timed: an expensive route is held to its work budget
by its estimate, not by a clock. ``scripts/fuzz_cli.py`` is the long random run (10,000+ cases per
subcommand, wide ranges up to k = 10^7, with a per-call time guard).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz import space
from tests.fuzz.harness import check

_SCALE = float(os.environ.get("DPVIZ_FUZZ_EXAMPLES", "1"))
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def _fuzz(n: int) -> settings:
    """The loaded profile (``tests/conftest.py``) with this many examples."""
    return settings(max_examples=max(1, round(n * _SCALE)), suppress_health_check=_HEALTH)


def _assert_contract(argv: list[str]) -> None:
    o = check(argv, timeout=None)
    assert not o.problems, f"{o.category}: {o.problems} for argv {argv}"


@_fuzz(250)
@given(argv=space.compose())
def test_compose(argv: list[str]) -> None:
    _assert_contract(argv)


@_fuzz(150)
@given(argv=space.gce())
def test_gce(argv: list[str]) -> None:
    _assert_contract(argv)


@pytest.mark.parametrize("kind", space.calibrated())
def test_mechanism(kind: str) -> None:
    @_fuzz(45)
    @given(argv=space.mechanism(kind, fast=True))
    def run(argv: list[str]) -> None:
        _assert_contract(argv)

    run()


@_fuzz(25)
@given(argv=space.mix())
def test_mix(argv: list[str]) -> None:
    """Long specs, huge values, Markdown in JSON keys, endless files (issue 22)."""
    _assert_contract(argv)


@_fuzz(60)
@given(argv=space.attack())
def test_attack(argv: list[str]) -> None:
    _assert_contract(argv)


def test_harness_catches_what_it_should() -> None:
    """The properties can fail: a traceback, a warning, NaN in JSON and a wrong order are caught."""
    from tests.fuzz import harness

    assert harness.strict_json('{"a": 1.5}') == {"a": 1.5}
    with pytest.raises(ValueError):
        harness.strict_json('{"a": NaN}')
    compose = {
        "basic": {"epsilon": 1.0, "delta": 0.1, "kind": "upper", "source": "s"},
        "advanced": {"epsilon": 2.0, "delta": 0.1, "kind": "upper", "source": "s"},
        "kov": {"epsilon": 2.0, "delta": 0.1, "kind": "upper", "source": "s"},
        "kov_simplified": {"epsilon": 2.2, "delta": 0.1, "kind": "upper", "source": "s"},
        "zcdp": {"epsilon": 1.8, "delta": 0.1, "kind": "upper", "source": "s"},
        "optimal": {"epsilon": 1.5, "delta": 0.1, "kind": "exact", "source": "s"},
    }
    assert harness.consistency(["compose", "--delta", "0.1"], compose) == ["optimal ε 1.5 > basic ε 1.0"]
    four = {key: g for key, g in compose.items() if key != "zcdp"}  # a method missing from the JSON
    assert harness.consistency(["compose", "--delta", "0.1"], four) == [f"keys {sorted(four)}"]
    # over budget optimal is the best closed form (basic, advanced, KOV, zCDP), never above one
    over_budget = {**compose, "basic": {**compose["basic"], "epsilon": 3.0},
                   "zcdp": {**compose["zcdp"], "epsilon": 1.2},
                   "optimal": {**compose["optimal"], "epsilon": 1.2, "kind": "upper",
                               "reason": "over budget"}}
    assert harness.consistency(["compose", "--delta", "0.1"], over_budget) == []
    over_budget["optimal"]["epsilon"] = 1.5  # a stand-in above a closed form it should have taken
    assert harness.consistency(["compose", "--delta", "0.1"], over_budget) == ["optimal ε 1.5 > zcdp ε 1.2"]
    assert harness.consistency(["mechanism"], {
        "epsilon": 1.0, "epsilon_lower": 1.2, "epsilon_upper": 1.0,
    }) == ["result: lower 1.2 > upper 1.0", "result lower 1.2 > result upper 1.0"]
    assert harness.consistency(["gce", "--delta", "0.1"], {
        "exact": {"epsilon": 2.0, "delta": 0.1, "kind": "exact", "source": "s", "directions": "both"},
        "cor7": {"epsilon": 1.0, "delta": 0.05, "kind": "upper", "source": "s", "directions": "both"},
        "fwd": {"epsilon": 1.0, "delta": 0.05, "kind": "upper", "source": "s", "directions": "forward"},
    }) == ["exact ε 2.0 > cor7 ε 1.0 (δ 0.05)"]
    # certified above proven: a chance event at confidence c, accepted only when flagged and explained
    above = {"empirical_epsilon": 2.0, "proven_epsilon": 1.5, "exceeds_proven": False}
    assert harness.consistency(["attack"], above) == [
        "exceeds_proven False with empirical ε 2.0, proven 1.5"]
    above["exceeds_proven"] = True
    assert harness.consistency(["attack"], above) == [
        "empirical ε 2.0 > proven ε 1.5 without a note on the confidence"]
    above["note"] = "wrong with probability at most 1 − confidence = 0.05"
    assert harness.consistency(["attack"], above) == []
    assert harness.consistency(["attack"], {**above, "empirical_epsilon": 1.0}) == [
        "exceeds_proven True with empirical ε 1.0, proven 1.5"]
    o = check(["compose", "--eps0", "1", "--k", "3", "--delta", "0.1", "--no-such-flag"], timeout=None)
    assert o.code == 2 and o.category == "ok"  # argparse's one-line usage error is fine
    o = check(["gce", "--eps0", "1", "--delta", "0.1", "--prior", "uniform-nonzero"], timeout=None)  # no --k
    assert o.code == 2 and o.category == "ok"  # "k must be …, got k=None" names the missing field
    assert not harness._given("k", ["gce", "--eps0", "1"], "… error: k must be ≥ 1, got k=3")
    o = harness.run_cli(["compose", "--eps0", "1", "--k", "3", "--delta", "0.1"], timeout=None)
    assert o.code == 0 and o.error is None


def test_time_guard_interrupts_a_long_call() -> None:
    """The script's guard (``scripts/fuzz_cli.py``) stops a call that never ends (no time asserted)."""
    import time

    from tests.fuzz.harness import CallTimeout, time_guard

    with pytest.raises(CallTimeout), time_guard(0.2):
        while True:
            time.sleep(0.01)
