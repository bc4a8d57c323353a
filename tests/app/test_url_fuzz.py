"""Fuzz every query parameter of every page (issue 14): malformed values, Markdown/HTML payloads,
huge numbers, empty and unicode text, in text inputs, radios, toggles and the
heterogeneous rows. A seeded generator keeps CI runs reproducible;
``DPVIZ_URL_FUZZ_CASES=500 pytest tests/app/test_url_fuzz.py`` runs a longer fuzz.

For every run: no exception box; every key whose widget is drawn with a value the core (or the
widget) rejects gets a notice that names the field and shows the value verbatim inside a code
span; nothing from a payload stands outside a code span anywhere on the page.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from dpviz.gce.questions import PRESETS
from dpviz.params import DELTA0, EPS0, HETERO_LEVELS, Param, row_levels, text_rows
from dpviz.ui import SHOWN_CHARS
from dpviz.validation import ParameterError
from dpviz.views import database_priors as gce
from dpviz.views import mechanisms as mv
from dpviz.views import regions
from dpviz.views.curves import SPEC as CURVES
from dpviz.views.database_priors import ALIASES
from tests.app.helpers import PAYLOADS, ROOT, TIMEOUT, assert_clean, assert_inert, errors, split_code_spans

CASES = int(os.environ.get("DPVIZ_URL_FUZZ_CASES", "16"))
"""Generated query strings per page (16 × 5 pages ≈ 20 s on two workers)."""

MALFORMED = (
    "", " ", "abc", "1e", "--1", "0x10", "nan", "NaN", "inf", "-inf", "1e400", "-1e400", "1e-400",
    "9" * 400, "1,5", "½", "🙂", "\u202e1", "1\t", "None", "[]", "{}", "true", "maybe", "sideways",
    "Quantum", "Nope", "0.1:0", "1:2:3:4", "0:0:0", "-1:0:1", "100:0.5:100000000", "x" * 5000,
)
"""Values no field accepts (a few are valid for one field and not another: the check decides)."""


@dataclass(frozen=True)
class Page:
    path: str
    text: dict[str, Param]  # URL-bound text inputs, by key, with the check the page runs
    choices: dict[str, tuple[str, ...]]  # radios and their options (valid values to mix in)
    toggles: tuple[str, ...] = ()
    rows: str | None = None  # the heterogeneous rows kept in the URL (levels editor)

    @property
    def keys(self) -> list[str]:
        keys = [*self.text, *self.choices, *self.toggles]
        return [*keys, self.rows] if self.rows else keys


PAGES = (
    Page("app.py", {}, {}),
    Page("pages/1_Privacy_regions.py",
         {"eps0": EPS0, "delta0": DELTA0, "k": regions.K_PAGE, "ks": regions.KS}, {}),
    Page("pages/2_Composition_curves.py",
         {p.key: p for p in CURVES.params if not isinstance(p.default, bool) and p is not HETERO_LEVELS}, {},
         toggles=tuple(p.key for p in CURVES.params if isinstance(p.default, bool)), rows=HETERO_LEVELS.key),
    Page("pages/3_Database_priors.py",
         {p.key: p for p in (gce.EPS0, gce.DELTA0, gce.DELTA, gce.K, gce.CAP, gce.K2, gce.COMMON,
                             gce.FREE_ONLY, gce.PAID_ONLY)},
         {"preset": tuple(p.title for p in PRESETS.values()), "kind": tuple(gce.KIND_LABELS.values()),
          "neighbouring": ("unbounded", "bounded"), "nb": ("unbounded", "bounded")}),
    Page("pages/4_Mechanisms.py",
         {p.key: p for p in mv.SPEC.params if p.key not in ("mechanism", "neighbouring", "solve", "compare")}
         | {"het_delta": mv.HDELTA},
         {"mechanism": tuple(mv.KINDS.values()), "neighbouring": ("add-remove", "replace-one"),
          "solve": ("epsilon", "delta")}, rows="het_rows"),
)


def generate(page: Page, rng: random.Random) -> dict[str, str]:
    """One query string: each key bad (mostly), valid and cheap, or absent; on the home page,
    which binds nothing, payloads under made-up keys."""
    if not page.keys:
        return {f"x{i}": rng.choice(PAYLOADS + MALFORMED) for i in range(3)}
    params: dict[str, str] = {}
    for key in page.keys:
        roll = rng.random()
        if roll < 0.2:
            continue
        if roll < 0.75:
            params[key] = rng.choice(PAYLOADS) if rng.random() < 0.5 else rng.choice(MALFORMED)
        elif key in page.choices:
            params[key] = rng.choice(page.choices[key])
        elif key in page.toggles:
            params[key] = rng.choice(("true", "false", "FALSE"))
        elif key in page.text:
            params[key] = str(page.text[key].default)  # valid and cached: the fuzz stays cheap
    return params


def _widget(at: AppTest, kind: str, key: str) -> Any | None:
    try:
        return getattr(at, kind)(key=key)
    except KeyError:
        return None


def expected_notice(page: Page, at: AppTest, key: str, value: str) -> tuple[str, object] | None:
    """(the field a notice must name, the rejected value it must show) for ``key=value``, or
    None when no widget for the key is drawn on this run or the value is accepted."""
    if (box := _widget(at, "text_input", key)) is not None:
        try:
            page.text[key].parse(box.value)  # the field named as the user sees it (its label)
        except ParameterError as exc:
            return exc.field, exc.value
        return None
    if (radio := _widget(at, "radio", key)) is not None:
        return None if value in radio.options else (radio.label, value)
    if (switch := _widget(at, "toggle", key)) is not None:
        return None if value.lower() in ("true", "false") else (switch.label, value)
    if key == page.rows:
        try:
            _, problems = row_levels(text_rows(value))
        except ParameterError as exc:  # not rows of three cells: the default rows are shown
            return exc.field, exc.value
        return (problems[0].field, problems[0].value) if problems else None
    return None


def check_page(page: Page, at: AppTest, params: dict[str, str]) -> None:
    assert_clean(at)
    assert_inert(at)
    messages = errors(at)
    for message in messages:
        assert " must be " in message.split("`")[0], f"a notice names its field first: {message!r}"
    for key, value in params.items():
        expected = expected_notice(page, at, key, value)
        if expected is None:
            continue
        field, rejected = expected
        shown = repr(rejected)[:SHOWN_CHARS]
        hits = [m for m in messages if m.startswith(f"{field} must be ")
                and any(shown in c.replace("\u200b", "") for c in split_code_spans(m)[1])]
        assert hits, f"no notice naming {field!r} with {shown!r} in a code span: {messages}"


def _cases() -> list[tuple[Page, int]]:
    return [(page, i) for page in PAGES for i in range(CASES if page.keys else 3)]


@pytest.mark.parametrize("page,seed", _cases(),
                         ids=[f"{p.path.split('/')[-1][:-3]}-{i}" for p, i in _cases()])
def test_query_string_fuzz(page: Page, seed: int):
    rng = random.Random(f"{page.path}/{seed}")
    params = generate(page, rng)
    at = AppTest.from_file(str(ROOT / page.path), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    check_page(page, at, params)


@pytest.mark.parametrize("page", [p for p in PAGES if p.text], ids=lambda p: p.path.split("/")[-1][:-3])
@pytest.mark.parametrize("payload", PAYLOADS[:3])
def test_typed_payload_in_every_text_input(page: Page, payload: str):
    """The same payload typed into every text input of the page (not from the URL)."""
    at = AppTest.from_file(str(ROOT / page.path), default_timeout=TIMEOUT).run()
    typed = {}
    for box in at.text_input:
        box.set_value(payload)
        typed[box.key] = payload
    at.run()
    check_page(page, at, typed)
    assert any(payload in "".join(split_code_spans(m)[1]) for m in errors(at))


@pytest.mark.parametrize("key,value,field", [
    ("preset", "Nope", "Scenario"), ("neighbouring", "sideways", "Neighbouring relation"),
    ("nb", "sideways", "Neighbouring relation"),  # the key's old name, still read
])
def test_bad_radio_in_url_names_the_field(key, value, field):
    """Regression (issue 14): Streamlit dropped these silently; now the notice lists the options."""
    at = AppTest.from_file(str(ROOT / "pages/3_Database_priors.py"), default_timeout=TIMEOUT)
    at.query_params["preset"] = PRESETS["subsidiaries"].title
    at.query_params[key] = value
    at.run()
    assert_clean(at)
    (message,) = [m for m in errors(at) if m.startswith(f"{field} must be one of ")]
    options = at.radio(key=ALIASES.get(key, key)).options
    assert all(o in message for o in options) and "Showing the default" in message


def test_bad_mechanism_and_toggle_in_url_name_the_field():
    at = AppTest.from_file(str(ROOT / "pages/4_Mechanisms.py"), default_timeout=TIMEOUT)
    at.query_params["mechanism"] = "Quantum"
    at.run()
    assert any(m.startswith("Mechanism must be one of gaussian, ") for m in errors(at)), errors(at)
    at = AppTest.from_file(str(ROOT / "pages/2_Composition_curves.py"), default_timeout=TIMEOUT)
    at.query_params["log_k"] = "maybe"
    at.run()
    label = at.toggle(key="log_k").label
    assert any(m.startswith(f"{label} must be true or false") for m in errors(at)), errors(at)
    assert at.toggle(key="log_k").value is True  # the default is shown


def test_markdown_payload_in_a_notice_is_a_code_span():
    """Regression (issue 14): ?het_delta=![t](…) rendered an image in the notice."""
    at = AppTest.from_file(str(ROOT / "pages/4_Mechanisms.py"), default_timeout=TIMEOUT)
    at.query_params["het_delta"] = PAYLOADS[0]
    at.run()
    (message,) = [m for m in errors(at) if PAYLOADS[0] in m]
    outside, spans = split_code_spans(message)
    assert spans == [repr(PAYLOADS[0])]
    assert "![" not in outside and "http" not in outside
