"""A prior typed on the Database priors page, in a real browser (issue 12 item 4): a person opens a
custom typed-prior link, types a new prior, the URL keeps the text, and a fresh browser opening that
URL sees the same table; bad text gets one message naming the field. Screenshots at 1280 and 390 px."""

from __future__ import annotations

from urllib.parse import urlencode

from playwright.sync_api import Browser, Page

from dpviz.views import database_priors as dp
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_app_in_browser import READY, TIMEOUT_MS, open_page, settle
from tests.browser.test_share_links import query, text

TABLE_TEXT = ("(col) => Array.from(document.querySelectorAll('[data-testid=stDataFrame]'), "
              "t => Array.from(t.querySelectorAll('[role=gridcell][aria-colindex=\"' + col + '\"]'), "
              "c => c.textContent).join('|'))")
"""Each table's cells in column ``col`` (the grid is drawn on a canvas; its accessible cells hold the
text; a narrow screen draws only the first columns)."""
START = {"preset": "Custom", "kind": dp.KIND_LABELS["typed"], "k": "6", "prior": "1:0.5, 2-3:0.5"}


def test_typed_prior_round_trip(page: Page, app_url: str, browser: Browser) -> None:
    open_page(page, f"{app_url}/Database_priors?{urlencode(START)}")
    page.get_by_text("Exact worst case").first.wait_for(timeout=TIMEOUT_MS)
    label = dp.PRIOR.label
    page.get_by_role("textbox", name=label, exact=True).scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "typed_prior_1280.png"))
    text(page, label, "0-1:1, 4:2", "prior")
    assert query(page.url)["prior"] == "0-1:1, 4:2"
    assert query(page.url)["k"] == "6"
    page.get_by_text("Support (d databases can differ)").first.wait_for(state="attached", timeout=TIMEOUT_MS)
    sent = page.evaluate(TABLE_TEXT, 1)
    assert "Exact worst case" in sent[0] and "Support (d databases can differ)" in sent[0]
    built = dp.build(**{**dp.SPEC.defaults(), "preset": "custom", "kind": "typed", "k": 6,
                        "prior": "0-1:1, 4:2"})
    assert page.evaluate(TABLE_TEXT, 2)[0] == "|".join(r["ε"] for r in built.tables["bounds"])
    context = browser.new_context(viewport={"width": 390, "height": 900})
    try:
        other = context.new_page()
        open_page(other, page.url)
        other.get_by_text("Exact worst case").first.wait_for(timeout=TIMEOUT_MS)
        assert other.evaluate(TABLE_TEXT, 1) == sent
        assert other.get_by_role("textbox", name=label, exact=True).input_value() == "0-1:1, 4:2"
        other.locator("[data-testid=stDataFrame]").first.scroll_into_view_if_needed()
        other.screenshot(path=str(ARTIFACTS / "typed_prior_shared_390.png"))
    finally:
        context.close()
    # malformed text: one message that names the field and the form, the page goes on
    box = page.get_by_role("textbox", name=label, exact=True)
    box.fill("1:half")
    box.press("Enter")
    alert = page.locator("[data-testid=stAlert]").filter(has_text=f"{label} must be")
    alert.first.wait_for(timeout=TIMEOUT_MS)  # the message names the field by the label on screen
    assert alert.count() == 1 and "positive numbers" in alert.first.inner_text()
    settle(page)  # the message shows before the rerun ends; the figure is redrawn after it
    page.wait_for_function(READY, timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "typed_prior_bad_1280.png"))
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "typed_prior_plot_1280.png"))
