"""A membership cap with a different (ε_i, δ_i) per release (HBW Thm 2, Ex. 1; docs/MATH.md §22),
against brute force: every set of releases a person can be in (|S| ≤ d), the product of their canonical
pairs (KOV eq. 16) written out over 4^|S| outcomes, both directions, the largest smallest ε."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from dpviz.composition import Level, as_levels, parse_levels
from dpviz.gce import heterogeneous
from dpviz.guarantee import Kind
from tests import oracles


def brute(releases: list[tuple[float, float]], d: int, delta: float) -> float:
    worst = 0.0
    for size in range(1, d + 1):
        for subset in itertools.combinations(releases, size):
            p, q = oracles.canonical_product(list(subset))
            eps = oracles.smallest_eps(p, q, delta, two_sided=True)
            assert eps is not None
            worst = max(worst, eps)
    return worst


CASES = [
    ("0.3:0:2,1.0:0:2,0.5:1e-3:1", 2, "unbounded"),   # incomparable: (0.5, 1e-3) against (1.0, 0)
    ("0.2:1e-4:3,0.9:0:1,0.4:1e-3:1", 3, "unbounded"),
    ("0.5:1e-3:2,0.1:0:3", 1, "bounded"),               # ordered: the greedy choice alone
    ("0.7:1e-5:1,0.2:1e-3:2,0.4:0:2", 5, "unbounded"),  # the cap does not bind
]


@pytest.mark.parametrize(("text", "cap", "nb"), CASES)
@pytest.mark.parametrize("delta", [1e-2, 1e-1])
def test_exact_row_is_the_brute_force_worst_set(text, cap, nb, delta):
    levels = parse_levels(text)
    releases = [(lv.epsilon, lv.delta) for lv in levels for _ in range(lv.count)]
    d = heterogeneous.compositions(levels, cap=cap, neighbouring=nb)
    rows = heterogeneous.capped(levels, cap=cap, neighbouring=nb, delta=delta)
    want = brute(releases, d, delta)
    assert rows["exact"].kind is Kind.EXACT
    assert rows["exact"].epsilon == pytest.approx(want, rel=1e-9, abs=1e-9)
    for key, g in rows.items():
        if key.startswith("cap_") and g.feasible:
            assert g.epsilon >= want * (1 - 1e-12), key  # the paper's Thm 2 with each closed form: sound
    assert rows["classic"].epsilon >= rows["exact"].epsilon * (1 - 1e-12)


def test_ordered_levels_need_one_choice_and_incomparable_ones_several():
    ordered = as_levels([Level(0.5, 1e-3, 2), Level(0.1, 0.0, 3), Level(0.3, 1e-4, 4)])
    (only,) = heterogeneous.choices(ordered, 4)
    assert {(lv.epsilon, lv.count) for lv in only} == {(0.5, 2), (0.3, 2)}  # the top four
    incomparable = parse_levels("0.1:1e-6:1000,0.5:0:10")
    assert len(heterogeneous.choices(incomparable, 365)) == 11


def test_cli_levels_with_cap():
    out = subprocess.run([sys.executable, "-m", "dpviz", "gce", "--levels", "0.1:1e-6:1000,0.5:0:10", "--cap",
                          "365", "--delta", "1e-2"], capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)
    assert round(rows["exact"]["epsilon"], 3) == 7.891 and rows["exact"]["kind"] == "exact"
    assert rows["exact"]["epsilon"] < rows["cap_kov"]["epsilon"] < rows["classic"]["epsilon"] * 2
    bad = subprocess.run([sys.executable, "-m", "dpviz", "gce", "--levels", "0.1:0:5", "--prior",
                          "uniform-nonzero", "--delta", "1e-3"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "levels must be given with --cap" in bad.stderr


def test_priors_page_heterogeneous_table():
    from tests.app.helpers import assert_clean, run_page, tables

    at = run_page("pages/3_Database_priors.py", levels="0.3:0:2,1.0:0:2,0.5:1e-3:1", k="5", cap="2",
                  delta="0.01")
    assert_clean(at)
    rows = tables(at)[-1].to_dict("records")
    exact = next(r for r in rows if r["bound"] == "Exact worst case")
    want = brute([(0.3, 0.0)] * 2 + [(1.0, 0.0)] * 2 + [(0.5, 1e-3)], 2, 0.01)
    assert float(exact["ε"]) == pytest.approx(want, rel=1e-3)
