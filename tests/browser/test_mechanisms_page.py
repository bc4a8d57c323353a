"""The Mechanisms page in a real browser: the main path a person takes, the URL it leaves, the
histogram's bar count, the mix editor, and the title at 1280 and 800 px (issues 8 and 11)."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page

from dpviz.figures.mechanisms import MAX_BARS
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_app_in_browser import TIMEOUT_MS, open_page, settle
from tests.browser.test_levels_editor import type_cell
from tests.browser.test_share_links import assert_shared_link_matches, query, radio, text

MIX_GRID = "[class*='st-key-mix_editor'] [data-testid=stDataFrame]"

TITLE_FITS = """() => {
  const h = document.querySelector('h1');
  const r = h.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(h.querySelector('[data-heading-text]') || h);  // the words, not the link icon
  const lines = new Set(Array.from(range.getClientRects(), (q) => Math.round(q.top))).size;
  return {text: h.innerText.trim(), fits: h.scrollWidth <= h.clientWidth + 1 && r.right <= window.innerWidth,
          lines: lines};
}"""

BARS = """() => {
  const f = document.querySelector('.js-plotly-plot');
  return f._fullData[0].type === 'bar' ? f._fullData[0].x.length : -1;
}"""


def _shot(page: Page, name: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / f"mechanisms_{name}_{width}.png"), full_page=False)


def _title_fits(page: Page) -> None:
    title = page.evaluate(TITLE_FITS)
    assert title["text"] == "Mechanisms" and title["fits"], title
    assert title["lines"] == 1, title


def _type_mix_cell(page: Page, row: int, col: int, value: str) -> None:
    """Type over cell (row, col) of the mix grid as a person does (click, arrows, Enter, type, Enter)."""
    type_cell(page, row, col, value, grid_selector=MIX_GRID)


def test_main_path(page: Page, app_url: str, receiver: BrowserContext):
    open_page(page, f"{app_url}/Mechanisms")
    _title_fits(page)
    assert 0 < page.evaluate(BARS) <= MAX_BARS
    _shot(page, "defaults", 1280)
    # randomized response, 30 runs, no subsampling, δ = 0: ε = kε0 = 3 exactly
    radio(page, "Mechanism", "randomized-response", "mechanism")
    text(page, "k (compositions)", "30", "k")
    text(page, "sampling rate q", "1", "sampling_rate")
    text(page, "target total δ", "0", "delta")
    shown = assert_shared_link_matches(receiver, page)
    assert any(t.startswith("ε = 3 (") for t in shown["text"]), [t for t in shown["text"] if "ε" in t]
    assert query(page.url) | {} == {**query(page.url), "mechanism": "randomized-response", "k": "30",
                                    "sampling_rate": "1", "delta": "0"}
    # the other direction: δ at ε = 2 (below kε0, so δ > 0)
    radio(page, "answer", "delta", "solve")
    text(page, "target total ε", "2", "epsilon")
    shown = assert_shared_link_matches(receiver, page)
    assert any(t.startswith(("δ ≤ ", "δ ∈ [", "δ = ")) for t in shown["text"])
    # the mix: 3 runs of the second row instead of 10, kept in the URL as the CLI's --spec
    _type_mix_cell(page, 1, 2, "3")
    page.wait_for_url(lambda url: '"scale":2,"count":3' in query(url).get("mix", ""), timeout=TIMEOUT_MS)
    settle(page)
    assert_shared_link_matches(receiver, page)
    _shot(page, "mix", 1280)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(400)
        _title_fits(page)
    _shot(page, "narrow", 800)


def test_an_old_link_opens_under_the_new_keys(page: Page, app_url: str):
    """A link from before the URL keys became the CLI flags (?mech_k, ?rate, ?mech_delta, a menu
    title as the mechanism) opens the same view, and the URL now says it with the new keys."""
    open_page(page, f"{app_url}/Mechanisms?mechanism=Laplace&scale=3&mech_k=20&rate=0&mech_delta=1e-06")
    page.wait_for_url(lambda url: "mech_k" not in url, timeout=TIMEOUT_MS)
    settle(page)
    # rate=0 was the old word for no subsampling; q = 1 says it now (dpviz.params.SAMPLING_RATE)
    assert query(page.url) == {"mechanism": "laplace", "scale": "3", "k": "20", "sampling_rate": "1",
                               "delta": "1e-06"}
    shown = page.evaluate("""() => Object.fromEntries(Array.from(
      document.querySelectorAll('[data-testid=stTextInput]'),
      (w) => [w.querySelector('label').innerText.trim(), w.querySelector('input').value]))""")
    assert (shown["k (compositions)"], shown["sampling rate q"], shown["target total δ"], shown["scale b"]) \
        == ("20", "1", "1e-06", "3")
