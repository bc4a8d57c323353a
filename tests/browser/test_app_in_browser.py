"""The main paths as a person takes them, in a real browser (Playwright + Debian's chromium)."""

from __future__ import annotations

import csv
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Download, Page, expect

from dpviz.composition import METHODS
from dpviz.export import file_stem
from tests.browser.conftest import ARTIFACTS

IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
TIMEOUT_MS = 90_000  # a cold page on a loaded 2-core CI machine
expect.set_options(timeout=TIMEOUT_MS)  # every expectation retries until the page shows it

# (url path, title shown on the page)
PAGES = [("", "dpviz"), ("Privacy_regions", "Privacy regions"), ("Composition_curves", "Composition curves"),
         ("Database_priors", "Database priors"), ("Mechanisms", "Mechanisms")]


READY = """() => {
  const count = (q) => document.querySelectorAll(q).length;
  return count('[data-testid=stSkeleton]') === 0
    && count('[data-testid=stDataFrame]') === count('[data-testid=stDataFrame] table')
    && count('[data-testid=stPlotlyChart]') === count('.js-plotly-plot .main-svg:first-child');
}"""
"""Every lazily loaded element drawn: no skeleton left, each grid has its table, each figure its SVG
(their code arrives after the script has finished)."""


def open_page(page: Page, url: str) -> None:
    """Open ``url``, wait for its script run to finish and for every grid and figure to be drawn."""
    page.goto(url)
    page.wait_for_selector("h1", timeout=TIMEOUT_MS)  # the script has started drawing
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    page.wait_for_timeout(300)  # a run may ask for another (an old URL's keys renamed)
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    page.wait_for_function(READY, timeout=TIMEOUT_MS)


def settle(page: Page) -> None:
    """Wait for the rerun that a widget change starts to finish: it starts when the change's message
    reaches the server, and a rerun may ask for another (a URL rewritten), so the page must stay
    idle a moment before it counts as settled."""
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    page.wait_for_function(READY, timeout=TIMEOUT_MS)


def set_text(page: Page, label: str, value: str, *, key: str) -> None:
    """Type into a URL-bound text input and wait for the rerun it starts to finish: the URL
    carries the new value first, then the app goes idle."""
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    page.wait_for_url(lambda url: parse_qs(urlparse(url).query).get(key) == [value], timeout=TIMEOUT_MS)
    settle(page)


PNG_BUTTON = '.modebar-btn[data-title^="Download plot as a"]:not([data-dpviz-svg])'
"""The modebar's camera (``dpviz.figures.style.export_config``: PNG at 3×)."""
SVG_BUTTON = "[data-dpviz-svg]"
"""The modebar's SVG button (``dpviz.ui.layout.SVG_EXPORT_JS``)."""


def export_figure(page: Page, index: int, fmt: str) -> Download:
    """Save the ``index``-th figure from its modebar as ``fmt`` ('png' or 'svg'), as a person does:
    plotly.js makes the file in the browser. Every request the page makes meanwhile is checked:
    none reaches the server (the file is a data URL)."""
    plot = page.locator(".js-plotly-plot").nth(index)
    plot.scroll_into_view_if_needed()
    plot.hover()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        plot.locator(SVG_BUTTON if fmt == "svg" else PNG_BUTTON).click()
    download = info.value
    download.path()  # the file is complete
    assert not [u for u in requests if u.startswith("http")], requests
    return download


def screenshot(page: Page, name: str) -> None:
    for width, height in ((1280, 800), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)
        page.screenshot(path=str(ARTIFACTS / f"{name}_{width}x{height}.png"))
    # the whole page, for reading it through
    full = page.evaluate("() => document.querySelector('[data-testid=stMain]')?.scrollHeight ?? 2000")
    page.set_viewport_size({"width": 1280, "height": int(min(full + 100, 8000))})
    page.wait_for_timeout(600)
    page.screenshot(path=str(ARTIFACTS / f"{name}_full.png"))
    page.set_viewport_size({"width": 1280, "height": 800})


def test_shared_link_works_as_the_first_request_after_a_restart(page: Page, cold_app_url: str):
    """Regression: with st.navigation a cold deep link showed "Page not found" (streamlit#9624)."""
    open_page(page, f"{cold_app_url}/Composition_curves?eps0=0.2")
    expect(page.get_by_role("heading", level=1).first).to_contain_text("Composition curves")
    expect(page.get_by_label("ε0 (each mechanism)", exact=True)).to_have_value("0.2")
    assert page.get_by_text("Page not found").count() == 0


def test_navigation_reaches_every_view(page: Page, app_url: str):
    open_page(page, app_url)
    nav = page.locator("[data-testid=stSidebar]")
    for _, title in PAGES[1:]:
        nav.get_by_role("link", name=title).click()
        settle(page)
        expect(page.get_by_role("heading", level=1).first).to_contain_text(title)


def test_changing_a_widget_updates_the_plot_and_the_url(page: Page, app_url: str):
    open_page(page, f"{app_url}/Privacy_regions")
    single, methods = (page.locator(".js-plotly-plot .gtitle").nth(i) for i in (0, 1))
    expect(methods).to_contain_text("k = 30")
    set_text(page, "ε0 (each mechanism)", "0.3", key="eps0")
    expect(single).to_contain_text("R(0.3, 0.001)")
    # k is typed (issue 21): any k, 7 included
    set_text(page, "k (mechanisms composed)", "7", key="k")
    page.wait_for_url(lambda url: parse_qs(urlparse(url).query).get("k") == ["7"], timeout=TIMEOUT_MS)
    settle(page)
    expect(methods).to_contain_text("k = 7")


def test_shared_url_restores_the_same_view(page: Page, app_url: str, browser):
    open_page(page, f"{app_url}/Composition_curves")
    set_text(page, "ε0 (each mechanism)", "0.3", key="eps0")
    set_text(page, "k (mechanisms composed)", "12", key="k")
    shared = page.url
    other = browser.new_page()
    try:  # every table cell and figure is compared by tests/browser/test_share_links.py
        open_page(other, shared)
        expect(other.get_by_label("ε0 (each mechanism)", exact=True)).to_have_value("0.3")
        expect(other.get_by_text("Values at k = 12", exact=False)).to_be_visible()
    finally:
        other.close()


def test_malformed_url_falls_back_with_a_notice(page: Page, app_url: str):
    open_page(page, f"{app_url}/Composition_curves?eps0=abc&k=-4")
    alerts = page.locator("[data-testid=stAlertContainer]")
    # each notice names the label the user sees (issue 19 item 3)
    expect(alerts.filter(has_text="ε0 (each mechanism) must be")).to_be_visible()
    expect(alerts.filter(has_text="k (mechanisms composed) must be")).to_be_visible()
    assert page.locator("[data-testid=stException]").count() == 0
    screenshot(page, "curves_malformed_url")


def test_csv_download(page: Page, app_url: str):
    open_page(page, f"{app_url}/Composition_curves")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download ε against k (CSV)").click()
    download = info.value
    assert download.suggested_filename.endswith(".csv")
    rows = list(csv.reader(Path(download.path()).read_text().splitlines()))
    assert rows[0] == ["k", *(f"epsilon_{key}" for key in METHODS)]  # one column per method, in order
    first = rows[1]
    assert float(first[0]) == 1.0 and float(first[1]) == pytest.approx(0.1)  # k = 1: basic ε = ε0
    # the optimal column never exceeds any theorem's (it is the exact optimum)
    optimal = rows[0].index("epsilon_optimal")
    for r in rows[1:]:
        values = [float(v) for v in r[1:] if v]
        assert float(r[optimal]) <= min(values) + 1e-12


def test_svg_and_png_of_a_figure_are_made_in_the_browser(page: Page, app_url: str):
    """The modebar saves the same figure (same title) as a vector image and as a PNG at 3× the
    screen's size, under a name carrying every input; the server makes neither."""
    open_page(page, f"{app_url}/Privacy_regions?k=8")
    every_input = {"eps0": 0.1, "delta0": 0.001, "k": 8, "ks": (1, 3, 10, 30, 100)}
    svg = export_figure(page, 0, "svg")
    assert svg.suggested_filename == f"{file_stem('regions', every_input)}_single.svg"
    text = Path(svg.path()).read_text()
    assert text.lstrip().startswith("<svg") and "the optimal 8-fold" in text  # a long title wraps
    png = export_figure(page, 0, "png")
    assert png.suggested_filename == f"{file_stem('regions', every_input)}_single.png"
    raw = Path(png.path()).read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(raw[16:20], "big")  # the IHDR chunk
    shown = page.locator(".js-plotly-plot").first.bounding_box()
    assert shown is not None and abs(width - 3 * shown["width"]) <= 6, (width, shown)
