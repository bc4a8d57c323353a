"""The heterogeneous (ε, δ, count) table in a real browser (issue 10 item 3): no edit is lost,
two or three in a row, with or without a pause; ``1e-6`` is accepted as typed; rows can be added
and deleted; after every edit the table, the URL and the results agree, and the URL opened in a
fresh browser shows the same table and results."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from dpviz.figures.tables import format_number
from dpviz.params import HET_ROWS, HETERO_LEVELS, row_levels, text_rows
from dpviz.views import mechanisms as mv
from tests.browser.test_app_in_browser import READY, TIMEOUT_MS, open_page, settle

EDITOR = ", ".join(f"[class*='st-key-{key}_editor_'] [data-testid=stDataFrame]"
                   for key in (HETERO_LEVELS.key, HET_ROWS.key))
"""The (ε, δ, count) editor of either page (the Mechanisms page also has a mechanism-mix editor)."""
RESULTS = "[data-testid=stDataFrame]:not(:has(button[aria-label='Add row']))"
NEXT_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
ACTIVE_CELL = "() => document.activeElement && document.activeElement.id"
CELLS = """e => Array.from(e.querySelectorAll('table tbody tr'))
                .map(r => Array.from(r.querySelectorAll('td')).map(c => c.innerText))"""


def url_rows(page: Page, key: str, default: str) -> list[tuple[str, str, str]]:
    """The rows the page's URL holds (the default when the URL has none)."""
    return text_rows(parse_qs(urlparse(page.url).query, keep_blank_values=True).get(key, [default])[0])


def cells(table: Locator) -> list[list[str]]:
    """A table's cells as shown (from the grid's accessible table)."""
    return table.evaluate(CELLS)


def editor_rows(page: Page) -> list[tuple[str, ...]]:
    return [tuple(row) for row in cells(page.locator(EDITOR))]


def focus_cell(page: Page, row: int, col: int, *, grid_selector: str = EDITOR) -> None:
    """Select cell (row, col) of the editor (or of the data editor ``grid_selector``): click the first
    data cell, then arrow keys (the grid is drawn on a canvas; its accessible cells name the one that
    has focus)."""
    grid = page.locator(grid_selector)
    for attempt in range(4):  # a click while the page still scrolls or redraws may miss the cell
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 60, box["y"] + 35 + 17)  # below the 35 px header, past the row marker
        try:
            page.wait_for_function(f"({ACTIVE_CELL})() === 'glide-cell-1-0'", timeout=5_000)
            break
        except PlaywrightTimeoutError:
            if attempt == 3:
                raise
    for _ in range(row):
        page.keyboard.press("ArrowDown")
    for _ in range(col):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"({ACTIVE_CELL})() === 'glide-cell-{col + 1}-{row}'", timeout=TIMEOUT_MS)


def type_cell(page: Page, row: int, col: int, text: str, *, grid_selector: str = EDITOR) -> None:
    """Type ``text`` over cell (row, col), as a person does: Enter opens the cell, select all, type,
    Enter commits. Does not wait for the rerun it starts."""
    focus_cell(page, row, col, grid_selector=grid_selector)
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement && document.activeElement.tagName === 'TEXTAREA'",
                           timeout=TIMEOUT_MS)
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type(text)
    page.wait_for_function("(t) => document.activeElement.value === t", arg=text, timeout=TIMEOUT_MS)
    page.evaluate(NEXT_FRAMES)  # let the grid take the typed value before Enter commits it
    page.keyboard.press("Enter")


def add_row(page: Page, values: tuple[str, str, str]) -> None:
    """The toolbar's "Add row", then each cell of the new (last) row."""
    settle(page)  # as a person does: a rerun still drawing moves the grid under the pointer
    grid = page.locator(EDITOR)
    before = len(cells(grid))
    for attempt in range(3):  # as a person does: the pointer back on the grid, its toolbar again
        grid.hover()
        try:
            grid.get_by_role("button", name="Add row").click(timeout=15_000)
            break
        except PlaywrightTimeoutError:  # a redraw put the grid's scroller over the toolbar
            if attempt == 2:
                raise
    page.wait_for_function(f"() => document.querySelector(\"{EDITOR}\").querySelectorAll"
                           f"('table tbody tr').length === {before + 1}", timeout=TIMEOUT_MS)
    page.keyboard.press("Escape")  # the new row's first cell may open for typing: start from the keys
    for col, text in enumerate(values):
        type_cell(page, before, col, text)
        wait_for_rows(page, HET_ROWS.key,
                      lambda rows, c=col, t=text: len(rows) == before + 1 and rows[-1][c] == t)


def delete_row(page: Page, row: int) -> None:
    """Tick the row's marker (left of its first cell) and press Delete."""
    grid = page.locator(EDITOR)
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 16, box["y"] + 35 + 35 * row + 17)
    page.keyboard.press("Delete")


def wait_for_rows(page: Page, key: str, ok, default: str = HET_ROWS.default) -> None:
    """Wait until the URL's rows satisfy ``ok``, then for the rerun to finish."""
    page.wait_for_url(lambda url: ok(text_rows(parse_qs(urlparse(url).query, keep_blank_values=True)
                                               .get(key, [default])[0])), timeout=TIMEOUT_MS)
    settle(page)
    page.wait_for_function(READY, timeout=TIMEOUT_MS)


def expected_exact(rows: list[tuple[str, str, str]], delta: float) -> float:
    """The exact optimum's ε for these rows, from the core (what the results table must show)."""
    levels, problems = row_levels(rows)
    assert levels is not None, problems
    table = mv.heterogeneous([{"ε": lv.epsilon, "δ": lv.delta, "count": lv.count} for lv in levels],
                             delta=delta)
    return float(format_number(float(table[0]["ε upper"]), 8))


def assert_agree(page: Page, *, delta: float = 1e-4) -> list[tuple[str, ...]]:
    """The editor shows the URL's rows, and the results are those of these rows."""
    shown = editor_rows(page)
    assert shown == url_rows(page, HET_ROWS.key, HET_ROWS.default)
    results = cells(page.locator(RESULTS).last)
    assert results[0][0].startswith("Exact optimum")
    assert float(results[0][2]) == expected_exact(shown, delta)  # ε upper of the exact optimum
    return shown


def assert_fresh_context_agrees(browser: Browser, url: str, rows: list[tuple[str, ...]]) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        other = context.new_page()
        open_page(other, url)
        expect(other.locator(EDITOR)).to_be_visible()
        assert editor_rows(other) == rows
        assert_agree(other)
    finally:
        context.close()


def test_no_edit_is_lost_two_or_three_in_a_row(page: Page, app_url: str, browser: Browser):
    open_page(page, f"{app_url}/Mechanisms")
    expect(page.locator(EDITOR)).to_be_visible()
    assert editor_rows(page) == [("0.13", "0", "40"), ("0.71", "1e-6", "5")]
    # two edits with a pause after each (the second was reverted on rerun before)
    type_cell(page, 0, 0, "0.2")
    wait_for_rows(page, HET_ROWS.key, lambda rows: rows[0][0] == "0.2")
    assert_agree(page)
    type_cell(page, 1, 2, "3")
    wait_for_rows(page, HET_ROWS.key, lambda rows: rows[0][0] == "0.2" and rows[1][2] == "3")
    assert_agree(page)
    # three in a row without waiting for any rerun; scientific notation as typed
    type_cell(page, 0, 1, "2.5e-7")
    type_cell(page, 1, 0, "1e-6")
    type_cell(page, 0, 2, "12")
    want = [("0.2", "2.5e-7", "12"), ("1e-6", "1e-6", "3")]
    wait_for_rows(page, HET_ROWS.key, lambda rows: rows == want)
    assert assert_agree(page) == want
    # and three more with a pause after each
    for (row, col, text) in ((1, 1, "0"), (0, 0, "0.7"), (1, 2, "4")):
        type_cell(page, row, col, text)
        wait_for_rows(page, HET_ROWS.key, lambda rows, r=row, c=col, t=text: rows[r][c] == t)
    want = [("0.7", "2.5e-7", "12"), ("1e-6", "0", "4")]
    assert assert_agree(page) == want
    assert_fresh_context_agrees(browser, page.url, want)


def test_rows_added_deleted_and_a_bad_cell(page: Page, app_url: str, browser: Browser):
    open_page(page, f"{app_url}/Mechanisms")
    expect(page.locator(EDITOR)).to_be_visible()
    add_row(page, ("0.05", "0", "100"))
    want = [("0.13", "0", "40"), ("0.71", "1e-6", "5"), ("0.05", "0", "100")]
    assert assert_agree(page) == want
    delete_row(page, 0)
    wait_for_rows(page, HET_ROWS.key, lambda rows: rows == want[1:])
    assert assert_agree(page) == want[1:]
    assert_fresh_context_agrees(browser, page.url, want[1:])
    # a cell that is not a number: kept as typed (in the URL too), named in a notice
    type_cell(page, 1, 0, "abc")
    wait_for_rows(page, HET_ROWS.key, lambda rows: rows[1][0] == "abc")
    notice = page.locator("[data-testid=stAlertContainer]").filter(has_text="ε (row 2) must be")
    expect(notice).to_be_visible()
    assert editor_rows(page) == url_rows(page, HET_ROWS.key, HET_ROWS.default)


def test_curves_page_takes_the_same_editor(page: Page, app_url: str, browser: Browser):
    """Composition curves: the same editor (URL key ``levels``) instead of a text field."""
    open_page(page, f"{app_url}/Composition_curves")
    expect(page.locator(EDITOR)).to_be_visible()
    assert editor_rows(page) == text_rows(HETERO_LEVELS.default)
    assert page.get_by_label(HETERO_LEVELS.label, exact=True).count() == 0, "no text field any more"
    type_cell(page, 0, 1, "1e-6")
    type_cell(page, 1, 2, "20")
    wait_for_rows(page, HETERO_LEVELS.key, lambda rows: rows == [("0.1", "1e-6", "30"), ("0.5", "0", "20")],
                  default=HETERO_LEVELS.default)
    results = page.locator(RESULTS).last
    shown = editor_rows(page)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        other = context.new_page()
        open_page(other, page.url)
        expect(other.locator(EDITOR)).to_be_visible()
        assert editor_rows(other) == shown
        assert cells(other.locator(RESULTS).last) == cells(results)
    finally:
        context.close()
