"""Shared links a fuzzer found to inject Markdown, crash a page or exhaust its server (issue 22;
issue 21 item 18): each page run ends with a named notice or an answer, no exception box, and no
payload outside a code span. The real-browser counterpart is tests/browser/test_injection.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpviz.views.database_priors import KIND_LABELS, PRESET_TITLES, PRIOR
from tests.app.helpers import LOOPBACK, assert_clean, assert_inert, errors, run_page

PLANNER = "pages/5_Plan_a_budget.py"
MECHANISMS = "pages/4_Mechanisms.py"
PRIORS = "pages/3_Database_priors.py"

AT_LEAST_PAYLOADS = (f"at-least:![x](http://{LOOPBACK}:9/prior.png)", f"at-least:[click](http://{LOOPBACK}:9/plink)",
                     f"at-least:http://{LOOPBACK}:9/auto", "at-least::material/home: **bold**")
"""Issue 22 item 1: every text starting "at-least:" passed the planner's check into a subheader."""


@pytest.mark.parametrize("prior", AT_LEAST_PAYLOADS)
def test_planner_prior_payload_is_a_notice_shown_as_code(prior: str) -> None:
    at = run_page(PLANNER, prior=prior)
    assert_clean(at)
    assert_inert(at)
    assert any("database prior" in e and "at-least:K2" in e for e in errors(at)), errors(at)
    assert not any(prior in str(h.value) for h in at.subheader)


def test_planner_prior_in_the_subheader_is_a_code_span() -> None:
    at = run_page(PLANNER, prior="at-least:3", k="10")
    assert_clean(at)
    assert not errors(at)
    assert any("prior `at-least:3` over" in str(h.value) for h in at.subheader)


def test_mix_key_is_never_a_field_name() -> None:
    """Issue 22 item 2: a JSON key became the error's field name, outside the code span."""
    key = f"![x](http://{LOOPBACK}:9/mixkey.png)"
    mix = json.dumps([{"mechanism": "gaussian", "sigma": 1, "count": 1, key: 1}])
    at = run_page(MECHANISMS, mix=mix)
    assert_clean(at)
    assert_inert(at)
    assert any(e.startswith("mix[0].parameter must be") for e in errors(at)), errors(at)


def test_huge_prior_weights_on_the_priors_page() -> None:
    at = run_page(PRIORS, preset=PRESET_TITLES["custom"], kind=KIND_LABELS["typed"], k="8",
                  prior="1:1e308, 2:1e308", null="0:1e308, 3:1e308")
    assert_clean(at)
    assert not errors(at)


def test_large_allowed_set_on_the_priors_page() -> None:
    rows = np.random.default_rng(7).integers(0, 2, size=(7200, 16))
    allowed = ", ".join("".join(map(str, r)) for r in rows)
    at = run_page(PRIORS, preset=PRESET_TITLES["custom"], kind=KIND_LABELS["allowed"], allowed=allowed,
                  neighbouring="bounded")
    assert_clean(at)
    assert not errors(at)


def test_range_beyond_k_on_the_priors_page() -> None:
    at = run_page(PRIORS, preset=PRESET_TITLES["custom"], kind=KIND_LABELS["typed"], k="10",
                  prior="1-10000000:1")
    assert_clean(at)
    # named as the page shows the field (its label, ``in_words``), with the allowed range
    assert any(e.startswith(f"`{PRIOR.label}` must be") and "k = 10" in e for e in errors(at)), errors(at)


def test_many_distinct_levels_on_the_curves_page() -> None:
    levels = ",".join(f"{0.01 * (i + 1):.2f}:0:30" for i in range(250))
    at = run_page("pages/2_Composition_curves.py", levels=levels)
    assert_clean(at)


def test_subnormal_eps0_on_the_planner() -> None:
    """Issue 22 item 5 / issue 21 item 16: ``plan k``'s overflow showed the exception box."""
    at = run_page(PLANNER, eps0="1e-310")
    assert_clean(at)


def test_attack_lab_refuses_ten_million_trials() -> None:
    at = run_page("pages/6_Attack_lab.py", mechanism="laplace", trials="10000000", k="5")
    assert_clean(at)
    assert any(e.startswith("trials per hypothesis N must be at most about") and "budget" in e
               for e in errors(at)), errors(at)
