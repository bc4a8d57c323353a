"""Layout on a desktop, a phone and in dark mode (issue 10 item 7), in a real browser.

Every page opens with its heading, no exception box and its figures drawn (the home page has none), and
is photographed whole at 1280×800, 390×844 (a phone: touch, mobile) and 1280×800 in
dark mode into ``test-artifacts/screenshots/layout_<page>_<mode>.png`` (to look at), and checked:
tables are grids of numbers (``st.dataframe``), never Markdown tables whose cells wrap; every
figure's title fits inside its figure and no modebar button covers it (on a phone Plotly always
shows its modebar; on a desktop, while the pointer is over the figure); in dark mode each figure
is drawn on its own opaque light card, so its fills and outlines look as in light mode (and the
page itself is dark). A phone look also checks what a reader does next on a phone (``PHONE_CHECKS``:
swiping a table to its numbers)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ARTIFACTS, MODES
from tests.browser.test_app_in_browser import READY, open_page

PAGES = {"home": "", "regions": "Privacy_regions", "curves": "Composition_curves",
         "priors": "Database_priors", "mechanisms": "Mechanisms"}
TITLES = {"home": "dpviz", "regions": "Privacy regions", "curves": "Composition curves",
          "priors": "Database priors", "mechanisms": "Mechanisms"}
"""The heading each page opens with."""
TABLES = {"curves": 2, "priors": 2, "mechanisms": 3}
"""Result tables (dataframes, not counting the row editors) each page shows at its defaults (priors:
the bounds and, under its default membership cap, the heterogeneous releases)."""

FIGURES = """() => Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]'), (c) => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const title = c.querySelector('.gtitle');
  const shown = (b) => b.offsetParent !== null && getComputedStyle(b.closest('.modebar')).opacity !== '0';
  const plot = c.querySelector('.js-plotly-plot');
  return {chart: box(c), title: title ? box(title) : null, text: title ? title.textContent : '',
          buttons: Array.from(c.querySelectorAll('.modebar-btn')).filter(shown).map(box),
          paper: plot && plot._fullLayout ? plot._fullLayout.paper_bgcolor : null};
})"""

TABLE_KINDS = """() => ({markdown: document.querySelectorAll('[data-testid=stTable]').length,
  grids: Array.from(document.querySelectorAll('[data-testid=stDataFrame]'))
    .filter((g) => !g.querySelector("button[aria-label='Add row']")).length})"""


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def whole_page(page: Page, path: str, viewport: dict[str, int]) -> None:
    """A screenshot of the whole page (Streamlit scrolls inside its main area, so the viewport is
    made as tall as the page), then the viewport back."""
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": viewport["width"], "height": min(int(height) + 40, 9000)})
    page.wait_for_function(READY)
    page.wait_for_timeout(500)  # let Plotly redraw at the new size before the picture
    page.screenshot(path=path)
    page.set_viewport_size(viewport)


def check_figures(page: Page, mode: str) -> None:
    for i, fig in enumerate(page.evaluate(FIGURES)):
        if mode == "desktop":  # the modebar shows while the pointer is over the figure
            chart = page.locator("[data-testid=stPlotlyChart]").nth(i)
            chart.scroll_into_view_if_needed()
            chart.hover(position={"x": 40, "y": 200})
            fig = page.evaluate(FIGURES)[i]
        assert fig["title"] is not None, f"figure {i} has a title"
        left, _, right, _ = fig["chart"]
        assert left - 1 <= fig["title"][0] and fig["title"][2] <= right + 1, \
            f"{mode}: the title {fig['text']!r} runs out of its figure"
        covered = [b for b in fig["buttons"] if overlaps(b, fig["title"])]
        assert not covered, f"{mode}: the modebar covers the title {fig['text']!r}"
        if mode == "dark":
            assert fig["paper"] in ("white", "#fff", "#ffffff", "rgb(255, 255, 255)"), \
                "a figure is an opaque light card in dark mode too"


DARK = """() => {
  const [r, g, b] = getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor
    .match(/\\d+/g).map(Number);
  return (r + g + b) / 3 < 100;
}"""
"""The app is drawn on a dark background (Streamlit's dark theme)."""
TOP = "e => e.scrollIntoView({block: 'start'})"
"""Scroll an element to the top of the view."""
HEADERS = """(i) => Array.from(document.querySelectorAll('[data-testid=stDataFrame]')[i]
  .querySelectorAll('table tr:first-child th'), (c) => c.innerText.trim())"""
"""The column headers a grid draws (it draws only the columns in view)."""


def phone_swipes_the_priors_table_to_its_numbers(page: Page) -> None:
    """On a 390 px phone the priors table's row names (up to 440 px wide, pinned on a desktop) fill
    the screen at first; a swipe must bring the ε and δ columns into view (Streamlit unpins a
    column that leaves no room), as a reader on a phone would expect."""
    grid = page.locator("[data-testid=stDataFrame]").first
    grid.scroll_into_view_if_needed()
    assert "bound" in page.evaluate(HEADERS, 0)
    box = grid.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for _ in range(30):  # swipe right until the name column has gone, as a reader would
        page.mouse.wheel(60, 0)
        page.wait_for_timeout(250)
        shown = page.evaluate(HEADERS, 0)
        if "bound" not in shown:
            break
    assert "bound" not in shown and "ε" in shown, shown
    grid.screenshot(path=str(ARTIFACTS / "layout_priors_phone_scrolled.png"))


def phone_shows_the_mechanisms_table_numbers(page: Page) -> None:
    """Issue 21: on a phone the Mechanisms table opens on its method and numbers, not cut names."""
    page.locator("[data-testid=stDataFrame]").first.evaluate(TOP)
    page.wait_for_timeout(500)
    headers = page.evaluate(HEADERS, 0)
    assert headers[0] == "method" and "ε lower" in headers, headers
    page.screenshot(path=str(ARTIFACTS / "newcomer_mechanisms_table_phone.png"))


PHONE_CHECKS = {"priors": phone_swipes_the_priors_table_to_its_numbers,
                "mechanisms": phone_shows_the_mechanisms_table_numbers}
"""Checks a page's phone look adds (on the load the look has made already)."""


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_on_desktop_phone_and_dark(look, app_url: str, name: str):
    for mode, options in MODES.items():
        page = look(mode)
        try:
            open_page(page, f"{app_url}/{PAGES[name]}")
            expect(page.get_by_role("heading", level=1).first).to_contain_text(TITLES[name])
            assert page.locator("[data-testid=stException]").count() == 0
            assert page.evaluate(DARK) == (mode == "dark"), f"{mode}: the page's colour scheme"
            if name != "home":
                assert page.locator(".js-plotly-plot .main-svg").count() > 0, "plotly drew an SVG"
            kinds = page.evaluate(TABLE_KINDS)
            assert kinds["markdown"] == 0, "tables are grids of numbers, not Markdown tables"
            assert kinds["grids"] == TABLES.get(name, 0)
            check_figures(page, mode)
            whole_page(page, str(ARTIFACTS / f"layout_{name}_{mode}.png"), options["viewport"])
            if mode == "phone" and name in PHONE_CHECKS:
                PHONE_CHECKS[name](page)
        finally:
            page.close()
