"""HBW Ex. 3 (free vs paid feature columns) as printed against Def. 3 (docs/MATH.md §20): the paper's
unbounded formula pairs c¹ vs c² and c¹ vs c³ = 0⃗, Def. 3 (unbounded: 0⃗ against each allowed b) needs
c¹ vs 0⃗ and c² vs 0⃗. Counted by brute force over the hypothesis pairs of the allowed vectors."""

from __future__ import annotations

import itertools

import pytest

from dpviz.composition import homogeneous, optimal
from dpviz.gce import constraints
from dpviz.gce.questions import Question
from dpviz.views.database_priors import ex3_comparison
from tests.app.helpers import assert_clean, run_page


def brute_def3(k1: int, a: int, p: int, neighbouring: str) -> int:
    """max |b ⊕ b'| over the pairs Def. 3 allows, from the vectors written out by hand."""
    free = [1] * k1 + [1] * a + [0] * p
    paid = [1] * k1 + [0] * a + [1] * p
    zero = [0] * (k1 + a + p)
    if neighbouring == "unbounded":
        pairs = [(zero, free), (zero, paid)]
    else:
        pairs = list(itertools.combinations([free, paid, zero], 2))
    return max(sum(x != y for x, y in zip(u, v, strict=True)) for u, v in pairs)


@pytest.mark.parametrize(("k1", "a", "p"),
                         [(10, 3, 5), (4, 3, 5), (1, 3, 3), (0, 2, 7), (6, 0, 0), (2, 9, 1)])
@pytest.mark.parametrize("nb", ["unbounded", "bounded"])
def test_counts_against_brute_force_and_the_printed_formula(k1, a, p, nb):
    cols = {"common": k1, "free_only": a, "paid_only": p}
    ours = constraints.feature_compositions(**cols, neighbouring=nb)
    assert ours == brute_def3(k1, a, p, nb)
    paper = constraints.paper_feature_compositions(**cols, neighbouring=nb)
    # the printed terms: CompGuarantee over c¹ ⊕ c² (the a + p columns) and over M_1..M_k2 (k1 + a);
    # bounded adds c² vs c³ (k1 + p)
    assert paper == (max(a + p, k1 + a) if nb == "unbounded" else max(a + p, k1 + a, k1 + p))


def test_the_issues_columns_give_13_against_15():
    cols = {"common": 10, "free_only": 3, "paid_only": 5}
    assert constraints.paper_feature_compositions(**cols, neighbouring="unbounded") == 13
    assert constraints.feature_compositions(**cols, neighbouring="unbounded") == 15


def test_the_views_note_quotes_both_with_their_epsilon():
    q = Question(kind="features", k=18, eps0=0.1, delta0=0.0, delta=1e-5, common=10, free_only=3, paid_only=5)
    ex3 = ex3_comparison(q)
    assert (ex3["paper_compositions"], ex3["compositions"]) == (13, 15)
    for d, key in ((13, "paper_epsilon"), (15, "epsilon")):
        levels = homogeneous(k=d, eps0=0.1, delta0=0.0)
        assert ex3[key] == optimal.epsilon_for_delta(levels, delta=1e-5).epsilon
    assert "**13** mechanisms" in ex3["note"] and "**15** mechanisms" in ex3["note"]
    assert "too small" in ex3["note"]
    bounded = ex3_comparison(Question(kind="features", k=18, eps0=0.1, delta0=0.0, delta=1e-5, common=10,
                                      free_only=3, paid_only=5, neighbouring="bounded"))
    assert bounded["paper_compositions"] == bounded["compositions"] == 15


def test_priors_page_shows_the_papers_number_beside_ours():
    at = run_page("pages/3_Database_priors.py", preset="Free vs paid features", common="10", free_only="3",
                  paid_only="5")
    assert_clean(at)
    info = " ".join(m.value for m in at.info)
    assert "HBW Ex. 3 as printed" in info and "**13** mechanisms" in info and "**15** mechanisms" in info
