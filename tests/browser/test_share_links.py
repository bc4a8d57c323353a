"""A shared link reproduces exactly what the sender sees (issue 10 item 2), in a real browser.

On every page: change inputs as a person does (text, radio, slider, toggle, the heterogeneous
table), copy the address, open it in another browser context (``receiver`` in conftest.py: no
cookie, storage or session shared with the sender), and compare every widget's value, every table
cell and every figure's data. The URL leaves out a value equal to its widget's default, so this
holds only if the receiver's defaults are the sender's: a default that depends on another input (a
scenario's own C) must be set when that input changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import BrowserContext, Page

from tests.browser.test_app_in_browser import READY, TIMEOUT_MS, open_page, settle
from tests.browser.test_levels_editor import type_cell

SNAPSHOT = """() => {
  const text = (el) => (el ? el.innerText.trim() : null);
  const list = (v) => (v == null ? null
                       : Array.from(v, (x) => (typeof x === 'number' && !isFinite(x) ? String(x) : x)));
  const all = (q) => Array.from(document.querySelectorAll(q));
  return {
    inputs: all('[data-testid=stTextInput]').map((w) => [text(w.querySelector('label')),
                                                         w.querySelector('input').value]),
    radios: all('[data-testid=stRadio]').map((w) => [text(w.querySelector('[data-testid=stWidgetLabel]')),
                                                     text(w.querySelector('label:has(input:checked)'))]),
    toggles: all('[data-testid=stCheckbox]').map((w) => [text(w), w.querySelector('input').checked]),
    sliders: all('[data-testid=stSlider]').map((w) => [text(w.querySelector('[data-testid=stWidgetLabel]')),
                                                       text(w.querySelector('[data-testid=stSliderThumbValue]'))]),
    grids: all('[data-testid=stDataFrame]').map((g) => Array.from(
      g.querySelectorAll('table tr'), (r) => Array.from(r.querySelectorAll('th,td'), (c) => c.innerText))),
    figures: all('.js-plotly-plot').map((f) => ({
      title: f.layout && f.layout.title ? f.layout.title.text : null,
      axes: [f._fullLayout.xaxis.type, f._fullLayout.yaxis.type],
      data: (f._fullData || []).map((t) => ({name: t.name, type: t.type, mode: t.mode, fill: t.fill,
                                             x: list(t.x), y: list(t.y), text: list(t.text)})),
    })),
    text: all('[data-testid=stMain] [data-testid=stMarkdownContainer]').map((m) => m.innerText),
  };
}"""


def snapshot(page: Page) -> dict[str, Any]:
    """Everything the page shows that an input decides: widgets, tables, figures' data, text."""
    page.wait_for_function(READY, timeout=TIMEOUT_MS)
    return page.evaluate(SNAPSHOT)


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query, keep_blank_values=True).items()}


def change(page: Page, act: Callable[[], None], ok: Callable[[dict[str, str]], bool]) -> None:
    """Do ``act``, wait until the URL satisfies ``ok``, then for the rerun to finish."""
    act()
    page.wait_for_url(lambda url: ok(query(url)), timeout=TIMEOUT_MS)
    settle(page)


def text(page: Page, label: str, value: str, key: str) -> None:
    """Type into a text input; the URL then holds the value (or nothing, when it is the default)."""
    def act() -> None:
        box = page.get_by_role("textbox", name=label, exact=True)
        box.fill(value)
        box.press("Enter")
    change(page, act, lambda q: q.get(key, value) == value)


def radio(page: Page, label: str, option: str, key: str) -> None:
    group = page.locator("[data-testid=stRadio]").filter(has_text=label)
    change(page, lambda: group.get_by_text(option, exact=True).click(),
           lambda q: q.get(key, option) == option)


def assert_shared_link_matches(receiver: BrowserContext, page: Page) -> dict[str, Any]:
    """Open the sender's URL in another browser (``receiver``, a context that shares nothing with the
    sender's): the receiver sees the same page."""
    sent = snapshot(page)
    other = receiver.new_page()
    try:
        open_page(other, page.url)
        got = snapshot(other)
    finally:
        other.close()
    for part in sent:  # part by part, for a readable failure
        assert got[part] == sent[part], f"{part} differ for {page.url}"
    return sent


def test_home_page(page: Page, app_url: str, receiver: BrowserContext):
    open_page(page, app_url)
    shown = assert_shared_link_matches(receiver, page)
    assert shown["figures"] and shown["figures"][0]["data"][0]["y"]


def test_privacy_regions(page: Page, app_url: str, receiver: BrowserContext):
    open_page(page, f"{app_url}/Privacy_regions")
    text(page, "ε0 (each mechanism)", "0.3", "eps0")
    text(page, "δ0 (each mechanism)", "1e-05", "delta0")
    text(page, "k (mechanisms composed)", "7", "k")  # typed: any k (issue 21)
    text(page, "k values overlaid (nested regions)", "2,20,200", "ks")
    shown = assert_shared_link_matches(receiver, page)
    assert ["k (mechanisms composed)", "7"] in shown["inputs"]
    assert ["k values overlaid (nested regions)", "2,20,200"] in shown["inputs"]


def test_composition_curves(page: Page, app_url: str, receiver: BrowserContext):
    open_page(page, f"{app_url}/Composition_curves")
    text(page, "ε0 (each mechanism)", "0.2", "eps0")
    text(page, "k (mechanisms composed)", "12", "k")
    change(page, lambda: page.get_by_text("log k axis", exact=True).click(),
           lambda q: q.get("log_k") == "false")
    text(page, "target total δ (heterogeneous)", "0.001", "hdelta")
    type_cell(page, 0, 2, "20")
    page.wait_for_url(lambda url: query(url).get("levels", "").startswith("0.1:1e-6:20,"),
                      timeout=TIMEOUT_MS)
    settle(page)
    shown = assert_shared_link_matches(receiver, page)
    assert shown["figures"][0]["axes"][0] == "linear"
    assert ["0.1", "1e-6", "20"] in shown["grids"][1]


def test_database_priors_every_scenario_switch(page: Page, app_url: str, receiver: BrowserContext):
    """Fails before the fix twice: 365 hospital nights → Subsidiaries kept C = 365 while the link
    opened with C = 1; and after a switch to Custom, k and C typed never reached the URL (the
    "Constraint or prior" radio moved them down the page)."""
    open_page(page, f"{app_url}/Database_priors")
    radio(page, "Scenario", "Subsidiaries", "preset")
    shown = assert_shared_link_matches(receiver, page)
    assert ["at most C databases per person", "1"] in shown["inputs"]
    # the sender's own C under this scenario, then back to the scenario that defaults to it
    text(page, "at most C databases per person", "365", "cap")
    text(page, "ε0 (each mechanism)", "0.2", "eps0")
    assert_shared_link_matches(receiver, page)
    radio(page, "Scenario", "365 hospital nights", "preset")
    radio(page, "Neighbouring relation", "bounded", "neighbouring")
    shown = assert_shared_link_matches(receiver, page)
    assert ["at most C databases per person", "365"] in shown["inputs"]
    # a custom question of another kind, with its own k'
    radio(page, "Scenario", "Custom", "preset")
    radio(page, "Constraint or prior", "in at least k' databases", "kind")
    text(page, "k (databases, one mechanism each)", "40", "k")
    text(page, "k' (in at least k' databases)", "5", "k2")
    assert_shared_link_matches(receiver, page)


def test_mechanisms(page: Page, app_url: str, receiver: BrowserContext):
    """Randomized response has one parameter where the others have two: k, q and δ moved, and
    Streamlit's frontend stopped writing a moved widget into the URL (fails before the fix)."""
    open_page(page, f"{app_url}/Mechanisms")
    radio(page, "Mechanism", "randomized-response", "mechanism")
    text(page, "k (compositions)", "100", "k")
    text(page, "sampling rate q", "1", "sampling_rate")
    assert_shared_link_matches(receiver, page)
    radio(page, "Mechanism", "geometric", "mechanism")  # ε0 stays, the sensitivity appears
    text(page, "sensitivity Δ", "2", "sensitivity")
    text(page, "target total δ (heterogeneous)", "0.001", "het_delta")
    type_cell(page, 1, 0, "1e-6")
    page.wait_for_url(lambda url: query(url).get("het_rows", "").startswith("0.13:0:40,1e-6:"),
                      timeout=TIMEOUT_MS)
    settle(page)
    shown = assert_shared_link_matches(receiver, page)
    assert ["Mechanism", "geometric"] in shown["radios"]
