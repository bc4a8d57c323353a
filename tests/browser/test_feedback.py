"""A long run says so (issue 20, "feedback"): while a page computes, the toolbar shows Streamlit's
running indicator and its Stop button (the toolbar is otherwise minimal: one "About" item), the
page's notice names what takes long, and Stop ends the run without an error box.

The run must be long on any machine, however fast the core becomes: the Mechanisms page's refinement
picks the finest PLD grid its budget (``dpviz.budget.PAGE``, about 2 s) admits, so a large k at an
extreme σ refines for about that budget by construction. (This test first used a subsampled planner
search, which took seconds when written; the planner now answers it in half a second and the
running state was sometimes over before the page was looked at.)"""

from __future__ import annotations

from urllib.parse import urlencode

from playwright.sync_api import Page, expect

from tests.browser.test_app_in_browser import IDLE, TIMEOUT_MS

# values no other test asks for: the answer is not cached yet, and the refinement fills its budget
SLOW = "Mechanisms?" + urlencode({"mechanism": "discrete-gaussian", "sigma": "0.1", "sensitivity": "10",
                                  "sampling_rate": "0.999", "k": "30000", "delta": "1e-15"})


def test_a_long_run_shows_running_and_stop(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/{SLOW}")
    expect(page.locator("[data-testid=stStatusWidgetRunningIcon]")).to_be_visible()
    # the core's estimate, said at once as the status label ("Refining with the PLD grid: about 2 s…")
    expect(page.get_by_text("Refining with the PLD grid: about")).to_be_visible()
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    stop.click()
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    expect(page.locator("[data-testid=stStatusWidgetRunningIcon]")).to_have_count(0)
    assert page.locator("[data-testid=stException]").count() == 0
